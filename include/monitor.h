/* monitor.h - MONITOR, in monitor.c: the clients that watch every command
 * the server runs, and the line each command sends them.
 *
 * As Redis 7.0: a command is shown after it ran (so SELECT shows its new
 * database), from command_call at any depth (EXEC's queued commands, a
 * script's commands as "[db lua]"); EVAL, EVALSHA and FCALL (flagged
 * skip-monitor) are shown by the scripting commands themselves before the
 * script runs; admin commands are never shown; AUTH and HELLO's AUTH
 * arguments show as "(redacted)". Nothing is shown while the start-up load
 * runs.
 */
#ifndef FERRY_MONITOR_H
#define FERRY_MONITOR_H

#include "client.h"

struct command;

/* MONITOR (the table row is in cmd_server.c). */
void cmd_monitor(client *c);
/* After command_call ran cmd for c (srv.observers non-zero): the line to
 * every monitor, unless cmd is skip-monitor or admin. */
void monitor_after_call(client *c, const struct command *cmd);
/* The line for c's current command, whatever its flags (the EVAL family,
 * before the script runs). */
void monitor_feed(client *c);
/* The command being run hides argument j (AUTH's password): shown as
 * "(redacted)" in its line. */
void monitor_redact_arg(int j);
/* c leaves monitor mode (RESET, and when it is freed). */
void monitor_leave(client *c);

#endif
