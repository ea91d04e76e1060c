/* file: whole files read and written atomically (util.h). */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *file_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    StrBuf b;
    sb_init(&b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_put(&b, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        sb_free(&b);
        errno = EIO;
        return NULL;
    }
    if (len)
        *len = b.len;
    return sb_take(&b);
}

char *file_read_max(const char *path, size_t max, size_t *len)
{
    /* Checked on the open descriptor, not the name, so that a file swapped
     * after the check is still the one judged; opened without blocking, as
     * opening a FIFO with no writer waits forever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        errno = saved;
        return NULL;
    }
    struct stat st;
    int bad = fstat(fileno(f), &st) ? errno
              : S_ISDIR(st.st_mode) ? EISDIR
              : !S_ISREG(st.st_mode) ? EINVAL
              : (uintmax_t)st.st_size > max ? EFBIG : 0;
    StrBuf b;
    sb_init(&b);
    char buf[65536];
    size_t n;
    /* Read at most max + 1 bytes: a file that grows while read is still capped. */
    while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        sb_put(&b, buf, n);
        bad = b.len > max ? EFBIG : 0;
    }
    if (!bad && ferror(f))
        bad = EIO;
    fclose(f);
    if (bad) {
        sb_free(&b);
        errno = bad;
        return NULL;
    }
    if (len)
        *len = b.len;
    if (!b.p)
        sb_puts(&b, "");
    return sb_take(&b);
}

const char *file_read_why(int errnum, size_t max, char *buf, size_t n)
{
    switch (errnum) {
    case EISDIR: return "it is a directory";
    case EINVAL: return "it is not a regular file";
    case EFBIG: snprintf(buf, n, "it is larger than %zu bytes", max); return buf;
    default: return strerror(errnum);
    }
}

int file_write_atomic(const char *path, const void *data, size_t len)
{
    const void *parts[1] = {data};
    const uint64_t sizes[1] = {len};
    return file_write_atomic_parts(path, parts, sizes, 1);
}

int file_write_atomic_parts(const char *path, const void *const parts[], const uint64_t sizes[], int n)
{
    /* Only a regular file is replaced: renaming over a symbolic link or a
     * device would destroy it (as root, /dev/null). */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int ok = 1;
    for (int i = 0; i < n && ok; i++)
        ok = !sizes[i] || fwrite(parts[i], 1, sizes[i], f) == sizes[i];
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

void file_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

int file_mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    }
    return 0;
}
