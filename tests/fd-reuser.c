/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fd-reuser.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static void *reuser(void *arg) {
        struct fd_reuser *r = arg;
        for (unsigned i = 1; !r->stop; i++) {
                int fd = open(r->paths[i % FD_REUSER_FILES], O_RDONLY | O_CLOEXEC);
                if (fd < 0 || dup2(fd, r->fd) < 0) {
                        perror("reuser");
                        _exit(1);
                }
                close(fd);
                usleep(1000);
        }
        return NULL;
}

int fd_reuser_start(struct fd_reuser *r, const char *dir, int fd) {
        r->fd = fd;
        r->stop = false;
        for (unsigned k = 0; k < FD_REUSER_FILES; k++) {
                char letter = (char) ('a' + k);
                snprintf(r->paths[k], sizeof(r->paths[k]), "%s/reuse-%u.dat", dir, k);
                int f = open(r->paths[k], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (f < 0 || write(f, &letter, 1) != 1)
                        return -errno;
                close(f);
        }
        int f = open(r->paths[0], O_RDONLY | O_CLOEXEC);
        if (f < 0 || dup2(f, fd) < 0)
                return -errno;
        close(f);
        int e = pthread_create(&r->thread, NULL, reuser, r);
        return -e;
}

const char *fd_reuser_file_of(const struct fd_reuser *r, char byte) {
        unsigned k = (unsigned) (byte - 'a');
        return k < FD_REUSER_FILES ? r->paths[k] : NULL;
}

void fd_reuser_stop(struct fd_reuser *r) {
        r->stop = true;
        pthread_join(r->thread, NULL);
}
