/* listpack.c - see listpack.h. (Implementation lands next; this file keeps
 * the tree building.) */
#include "listpack.h"
