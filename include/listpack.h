/* listpack.h - a compact sequence of byte strings in one allocation, for
 * small hashes (field, value, field, value ...), small sorted sets (member,
 * score-string ...) and the nodes of lists.
 *
 * Layout: a 4-byte total size and a 4-byte entry count, then the entries.
 * An entry is a length header (1 byte below 128, 2 bytes below 16384, else
 * 5), the bytes, and a "back length" (the header+bytes size as a varint
 * written backwards) so that the sequence can be walked in both directions.
 * Strings are stored as given (no integer re-encoding): lp_get returns a
 * pointer into the buffer, with no copy.
 *
 * Positions are byte offsets (size_t), which stay meaningful across the
 * reallocations done by insert/delete/replace: an offset names the entry
 * starting there. LP_NONE means "no entry". Functions that modify return the
 * (possibly moved) buffer.
 */
#ifndef FERRY_LISTPACK_H
#define FERRY_LISTPACK_H

#include <stddef.h>
#include <stdint.h>

#define LP_NONE ((size_t)-1)
#define LP_HDR 8

unsigned char *lp_new(void);
void lp_free(unsigned char *lp);
uint32_t lp_count(const unsigned char *lp);         /* entries */
size_t lp_bytes(const unsigned char *lp);           /* used bytes (header + entries) */
/* Walking: lp_first/lp_last give LP_NONE when empty; lp_next/lp_prev give
 * LP_NONE past the ends. */
size_t lp_first(const unsigned char *lp);
size_t lp_last(const unsigned char *lp);
size_t lp_next(const unsigned char *lp, size_t off);
size_t lp_prev(const unsigned char *lp, size_t off);
/* index >= 0 from the head, < 0 from the tail (-1 = last); LP_NONE if out
 * of range. O(n) from the nearer end. */
size_t lp_seek(const unsigned char *lp, long index);
/* The entry's bytes (not NUL-terminated) and length. */
const char *lp_get(const unsigned char *lp, size_t off, size_t *len);
/* Insert s[0..n) before the entry at off; off == LP_NONE appends. The new
 * entry starts at off (or at the old end when appending). */
unsigned char *lp_insert(unsigned char *lp, size_t off, const char *s, size_t n);
unsigned char *lp_append(unsigned char *lp, const char *s, size_t n);
unsigned char *lp_prepend(unsigned char *lp, const char *s, size_t n);
/* Delete count entries starting at off (fewer if the end comes first).
 * The entry that followed them now starts at off (or off == end). */
unsigned char *lp_delete(unsigned char *lp, size_t off, uint32_t count);
/* Replace the entry at off with s[0..n); it still starts at off. For insert
 * and replace, s must not point into lp (it may move). */
unsigned char *lp_replace(unsigned char *lp, size_t off, const char *s, size_t n);
/* The first entry at or after off, visiting every (skip+1)-th entry (skip=1
 * looks at fields only in a field/value listpack), whose bytes equal s[0..n);
 * LP_NONE if none. */
size_t lp_find(const unsigned char *lp, size_t off, const char *s, size_t n, unsigned skip);
/* Bytes an entry of n bytes takes (to check size thresholds before insert). */
size_t lp_entry_size(size_t n);
/* Validate a buffer's structure (fuzzing, tests): 1 if consistent. */
int lp_valid(const unsigned char *lp, size_t bufsize);

#endif
