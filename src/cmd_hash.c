/* cmd_hash.c - the hash command group: hashes (HSET, HGET ...). (Placeholder table; the
 * commands land with issue #6.) */
#include "command.h"

command hash_commands[] = {{0}};
