/* registry.h - the one place that says what the server is made of (the
 * value types the keyspace holds, the command groups clients call and the
 * hooks that tie lower layers to upper ones), called once from main. */
#ifndef FERRY_REGISTRY_H
#define FERRY_REGISTRY_H

/* Everything below, in order: what main() calls. */
void registry_init(void);

/* Each part alone, for unit tests that need only some of the server:
 * the keyspace's value types (list, set, hash, sorted set), */
void registry_value_types(void);
/* every command group, and */
void registry_commands(void);
/* the hooks the keyspace calls into upper layers (maxmemory's growth veto). */
void registry_hooks(void);

#endif
