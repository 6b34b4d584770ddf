/* lzf.h - LZF compression in the stream format of liblzf 3.6, the one RDB
 * files and DUMP payloads use for strings (RDB_ENC_LZF). Pure functions
 * over caller buffers: no allocation, no state between calls.
 *
 * Stream format: a sequence of runs. A control byte c < 32 starts a literal
 * run of c+1 bytes that follow. Otherwise len = c >> 5 (7 means: add the
 * next byte), and a back reference copies len+2 bytes from `off` + 1 bytes
 * back, where off = ((c & 31) << 8) | next byte. */
#ifndef FERRY_LZF_H
#define FERRY_LZF_H

#include <stddef.h>

/* Compress in[0, in_len) into out[0, out_cap). Returns the compressed size,
 * or 0 if it does not fit in out_cap (the caller then stores the data raw).
 * For the same input and out_cap the output is byte-identical to liblzf
 * 3.6's lzf_compress as built into Redis 7.0, so DUMP payloads match
 * (Redis passes out_cap = in_len - 4 for strings longer than 20 bytes).
 * Like liblzf it wants 1 to 4 bytes of room past the end of the stream, so
 * it returns 0 when the result would fit with less to spare; otherwise the
 * bytes do not depend on out_cap. out_cap >= in_len + in_len / 32 + 4
 * always suffices. Returns 0 for empty
 * input and for in_len >= 4 GiB. Uses 256 KB of stack. */
size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_cap);

/* Decompress in[0, in_len) into out[0, out_cap). Returns the decompressed
 * size, or 0 for a malformed stream (a reference before the start of the
 * output, a run past the end of the input) or one that does not fit
 * out_cap. Never reads or writes outside the two buffers: the input is
 * untrusted (RDB files, RESTORE payloads). */
size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_cap);

#endif
