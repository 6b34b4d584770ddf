/* file_atomic.h - replace a file's contents so that a crash leaves either
 * the old file or the new one, never a mix (CONFIG REWRITE, nodes.conf). */
#ifndef FERRY_FILE_ATOMIC_H
#define FERRY_FILE_ATOMIC_H

#include <stddef.h>

/* Writes buf to "<path>.ferry-tmp-<pid>" (keeping path's mode, else 0644),
 * fsyncs it, renames it over path and fsyncs the directory. Returns 0, or
 * -1 with errno set: the temporary file removed, or, when only the
 * directory fsync failed, the new contents already in place. */
int file_write_atomic(const char *path, const char *buf, size_t len);
/* The same; durable 0 skips both fsyncs: the file is still replaced whole
 * (old or new after a crash of the process), but a power loss may keep the
 * old one (nodes.conf after a change that needs no fsync, as Redis). */
int file_replace(const char *path, const char *buf, size_t len, int durable);

#endif
