/* pubsub.c - the pubsub command group: pub/sub (SUBSCRIBE, PUBLISH ...). (Placeholder table; the
 * commands land with issue #6.) */
#include "command.h"

command pubsub_commands[] = {{0}};
