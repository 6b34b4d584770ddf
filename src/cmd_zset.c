/* cmd_zset.c - the zset command group: sorted sets (ZADD, ZRANGE ...). (Placeholder table; the
 * commands land with issue #6.) */
#include "command.h"

command zset_commands[] = {{0}};
