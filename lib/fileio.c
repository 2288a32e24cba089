/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "util.h"

ssize_t read_small_file(const char *path, char *buf, size_t size) {
        if (size == 0)
                return -EINVAL;
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        size_t len = 0;
        while (len < size - 1) {
                ssize_t n = read(fd, buf + len, size - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        return (ssize_t) len;
}
