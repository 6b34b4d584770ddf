/* t_stream_block.h - the block format behind t_stream.h (internal to the
 * stream type's files: t_stream.c, t_stream_lp.c, t_stream_cg.c). See the
 * essay at the top of t_stream.c for the layout of an entry. */
#ifndef FERRY_T_STREAM_BLOCK_H
#define FERRY_T_STREAM_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "t_stream.h"

#define SB_DELETED 1            /* entry flags, as Redis's STREAM_ITEM_FLAG_* */
#define SB_SAME 2
#define SB_LISTPACK_MAX (1u << 30) /* Redis's STREAM_LISTPACK_MAX_SIZE */

struct sblock {
    sid master;                 /* the first entry's ID (Redis's node key) */
    sid last;                   /* the last entry's ID, live or deleted */
    uint32_t used, cap;         /* bytes of data[] in use / allocated */
    uint32_t live, deleted;     /* entries */
    uint32_t entries_off;       /* entries start after the master fields */
    uint32_t nfields;           /* master field count */
    uint64_t rbytes;            /* the Redis listpack's bytes, less its live/deleted counts */
    unsigned char data[];       /* varint nfields, master fields, entries */
};

size_t sb_put_varint(unsigned char *p, uint64_t v);
size_t sb_get_varint(const unsigned char *p, uint64_t *v);
/* Elements: encoded size, encode, decode (integers rendered into buf, 24 bytes). */
size_t sb_elem_size(const char *p, size_t len);
size_t sb_put_elem(unsigned char *out, const char *p, size_t len);
size_t sb_get_elem(const unsigned char *in, span *out, char *buf);

/* A block whose master entry has fields fv[0], fv[2].. (nf), room for hint more bytes. */
sblock *sb_new(sid master, const span *fv, size_t nf, size_t hint);
int sb_same_fields(const sblock *b, const span *fv, size_t nf);
/* Appends an entry (flags: SB_DELETED or 0); id >= the block's last. */
void sb_append(sblock **bp, sid id, const span *fv, size_t nf, int flags);
/* Shrinks the block's allocation to its bytes. */
void sb_seal(sblock **bp);
uint64_t sb_redis_bytes(const sblock *b);
uint64_t sb_entry_rbytes(sid master, sid id, const span *fv, size_t nf, int same);
/* Decode / skip the entry at *off; prev is the previous entry's ID (first:
 * the master's); both advance. Return the entry's flags. */
int sb_decode(const sblock *b, uint32_t *off, sid *prev, int first, sb_scratch *sc, sentry *e);
int sb_skip(const sblock *b, uint32_t *off, sid *prev, int first, sid *id);
void sb_scratch_free(sb_scratch *sc);

/* The stream's block array. */
sblock *stream_blk(const stream *s, size_t i);
void stream_push_block(stream *s, sblock *b);
void stream_remove_block(stream *s, size_t i);
long stream_find_block(const stream *s, sid id);
void stream_update_first(stream *s);

#endif
