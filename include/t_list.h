/* t_list.h - the list value: a deque of compact chunks.
 *
 * A list is a doubly linked sequence of chunks; each chunk packs a run of
 * elements into one allocation, so pushing and popping at either end is O(1)
 * and an element costs its bytes plus about one byte (see t_list.c for the
 * chunk layout). Elements that are canonical integers ("123", "-7", never
 * "007") are stored as 1..8-byte integers and given back as their decimal
 * text, so callers only ever see byte strings.
 *
 * Chunk size follows list-max-listpack-size (srv.cfg.list_max_listpack_size):
 * > 0 caps the entries per chunk (and 8 KB per chunk), -1..-5 caps a chunk at
 * 4, 8, 16, 32 or 64 KB, as Redis caps its quicklist nodes.
 *
 * Elements handed out (tl_elem) point into the list or into a small buffer
 * inside the tl_elem itself, so a tl_elem must not be copied by value and is
 * valid only until the list is next modified.
 */
#ifndef FERRY_T_LIST_H
#define FERRY_T_LIST_H

#include <stddef.h>
#include <stdint.h>

enum { TL_HEAD = 0, TL_TAIL = 1 };

typedef struct tlist tlist;
struct lchunk;

/* One element as bytes: p[0..len). Do not copy the struct (p may point at ibuf). */
typedef struct tl_elem {
    const char *p;
    size_t len;
    char ibuf[24];
} tl_elem;

/* A value to compare elements with (LREM, LPOS, LINSERT's pivot),
 * prepared once: canonical integers compare as integers. */
typedef struct tl_needle {
    const char *p;
    size_t len;
    long long v;
    int is_int;
} tl_needle;

/* Cursor over a list, in either direction. */
typedef struct tl_iter {
    tlist *l;
    struct lchunk *ch;
    uint32_t dpos, xpos;        /* next entry (forward) or end of it (backward) */
    uint32_t cd, cx;            /* current entry: descriptor and data offsets */
    uint32_t cdl, cn;           /* current entry: descriptor and data lengths */
    uint64_t cv;                /* current entry: descriptor value */
    int dir;                    /* TL_TAIL: head to tail; TL_HEAD: tail to head */
    int has_cur;
} tl_iter;

tlist *tl_new(void);
/* A new list whose first chunk already has room for `count` elements of
 * `bytes` bytes in all pushed at `where` (within the chunk size limit): a
 * list created by one multi-element push gets a chunk of the right size at
 * once. Push at least one element before anything else (the chunk is empty
 * until then). */
tlist *tl_new_reserved(int where, size_t count, size_t bytes);
void tl_free(tlist *l);
tlist *tl_dup(const tlist *l);
size_t tl_mem(const tlist *l);          /* bytes allocated */
size_t tl_len(const tlist *l);
size_t tl_chunks(const tlist *l);

void tl_push(tlist *l, int where, const char *s, size_t n);
/* The element at one end; 0 if the list is empty. */
int tl_peek(const tlist *l, int where, tl_elem *e);
/* Remove n elements from one end (fewer if the list is shorter). */
void tl_pop_n(tlist *l, int where, size_t n);
/* Element at index (negative: from the tail, -1 = last); 0 if out of range. */
int tl_index(const tlist *l, long long index, tl_elem *e);
/* Replace the element at index; 0 if out of range. */
int tl_set(tlist *l, long long index, const char *s, size_t n);

void tl_needle_init(tl_needle *nd, const char *p, size_t n);

/* Start at element index `start` (0-based from the head, < len) going
 * towards `dir` (TL_TAIL: towards the tail). */
void tl_iter_init(tl_iter *it, tlist *l, size_t start, int dir);
/* Advance to the next element; 0 at the end. e may be NULL (no bytes). */
int tl_iter_next(tl_iter *it, tl_elem *e);
/* Does the current element equal the needle? */
int tl_iter_eq(const tl_iter *it, const tl_needle *nd);
/* Delete the current element; the next tl_iter_next continues after it. */
void tl_iter_delete(tl_iter *it);
/* Insert s before (after = 0) or after the current element (towards the
 * tail either way). Ends the iteration. */
void tl_iter_insert(tl_iter *it, int after, const char *s, size_t n);

/* After deleting many elements from the middle (LREM): merge neighbouring
 * chunks that fit in half a chunk together and give back unused capacity.
 * O(chunks). */
void tl_tidy(tlist *l);

/* Check the structure (tests): counts, positions, links. 1 if consistent. */
int tl_check(const tlist *l);

/* Register the OBJ_LIST hooks (free / dup / memory) with the keyspace (registry.c). */
void list_register_type(void);

#endif
