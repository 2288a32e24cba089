/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

/* An fd another thread points at another file every millisecond (dup2 of a new open of one of 8 files, each
 * holding its own letter): a byte read through it says which file the kernel read. */
#define FD_REUSER_FILES 8

struct fd_reuser {
        char paths[FD_REUSER_FILES][4200];
        int fd;
        volatile bool stop;
        pthread_t thread;
};

/* Makes DIR/reuse-K.dat, points fd at the first and starts the thread: 0, or a negative errno. */
int fd_reuser_start(struct fd_reuser *r, const char *dir, int fd);
/* The file a byte read through the fd came from; NULL for no such letter. */
const char *fd_reuser_file_of(const struct fd_reuser *r, char byte);
void fd_reuser_stop(struct fd_reuser *r);
