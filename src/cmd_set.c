/* cmd_set.c - the set command group: sets (SADD, SINTER ...). (Placeholder table; the
 * commands land with issue #6.) */
#include "command.h"

command set_commands[] = {{0}};
