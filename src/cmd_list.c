/* cmd_list.c - the list command group: lists (LPUSH, LRANGE, BLPOP ...). (Placeholder table; the
 * commands land with issue #6.) */
#include "command.h"

command list_commands[] = {{0}};
