/* cmd_lolwut.h - the LOLWUT command (cmd_lolwut.c; its table entry is in
 * cmd_server.c's table). */
#ifndef FERRY_CMD_LOLWUT_H
#define FERRY_CMD_LOLWUT_H

#include "client.h"

/* LOLWUT [VERSION v [arg ...]]: a drawing, then "Redis ver. x.y.z". */
void cmd_lolwut(client *c);

#endif
