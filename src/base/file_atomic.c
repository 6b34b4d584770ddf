/* file_atomic.c - atomic replacement of a file: write a temporary file next
 * to it, fsync, rename over it, fsync the directory.
 *
 * Why: CONFIG REWRITE and the cluster's nodes.conf must survive a crash or
 * a full disk mid-write; rename() within one directory is atomic, and the
 * directory fsync makes the rename itself durable. */
#include "file_atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX_MAX 32

static int write_all(int fd, const char *buf, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        off += (size_t)w;
    }
    return 0;
}

/* fsyncs the directory holding path, so the rename is on disk. */
static int fsync_parent_dir(const char *path) {
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        dir[0] = '.', dir[1] = '\0';
    } else if (slash == path) {
        dir[0] = '/', dir[1] = '\0';
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd == -1) return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int file_write_atomic(const char *path, const char *buf, size_t len) { return file_replace(path, buf, len, 1); }

int file_replace(const char *path, const char *buf, size_t len, int durable) {
    char tmp[PATH_MAX + TMP_SUFFIX_MAX];
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.ferry-tmp-%d", path, (int)getpid()) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd == -1) return -1;
    if (write_all(fd, buf, len) == -1 || (durable && fsync(fd) == -1)) goto fail_fd;
    int rc = close(fd);
    fd = -1;
    if (rc == -1 || rename(tmp, path) == -1) goto fail_fd;
    return durable ? fsync_parent_dir(path) : 0;
fail_fd:;
    int saved = errno;
    if (fd != -1) close(fd);
    unlink(tmp);
    errno = saved;
    return -1;
}
