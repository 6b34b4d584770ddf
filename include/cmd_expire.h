/* cmd_expire.h - the expiry commands (cmd_expire.c), listed in the keys
 * command table (cmd_keys.c). */
#ifndef FERRY_CMD_EXPIRE_H
#define FERRY_CMD_EXPIRE_H
#include "client.h"
void cmd_expire(client *c);
void cmd_pexpire(client *c);
void cmd_expireat(client *c);
void cmd_pexpireat(client *c);
void cmd_ttl(client *c);
void cmd_pttl(client *c);
void cmd_expiretime(client *c);
void cmd_pexpiretime(client *c);
void cmd_persist(client *c);
#endif
