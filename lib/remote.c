/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "remote.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>

#include "util.h"

#define REMOTE_IOV_MAX 1024 /* UIO_MAXIOV */

static const char *const state_names[_MEM_STATE_MAX] = {
        [MEM_OK] = "ok",
        [MEM_STALE] = "stale",
        [MEM_FAULT] = "unmapped",
        [MEM_GONE] = "process gone",
        [MEM_DENIED] = "permission denied",
        [MEM_UNAVAILABLE] = "unreadable",
        [MEM_NOT_READ] = "not read",
        [MEM_NOT_CAPTURED] = "not captured",
        [MEM_SKIPPED] = "tracer behind",
};

const char *mem_state_name(enum mem_state s) {
        return s < _MEM_STATE_MAX ? state_names[s] : "?";
}

/* The classes strace's ucopy.c draws. */
enum mem_state mem_state_from_errno(int err) {
        switch (err) {
        case 0:
                return MEM_OK;
        case EFAULT:
        case EIO:
                return MEM_FAULT;
        case ESRCH:
                return MEM_GONE;
        case EPERM:
        case EACCES:
                return MEM_DENIED;
        default:
                return MEM_UNAVAILABLE;
        }
}

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len) {
        if (addr > UINTPTR_MAX || len > SSIZE_MAX)
                return -EFAULT;
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = len };
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n < 0)
                return -errno;
        return (size_t) n == len ? 0 : -EFAULT;
}

unsigned remote_read_chunks(pid_t pid, struct remote_chunk *chunks, size_t n) {
        struct iovec local[REMOTE_IOV_MAX], remote[REMOTE_IOV_MAX];
        unsigned calls = 0;
        size_t i = 0;

        while (i < n) {
                size_t batch = MIN(n - i, (size_t) REMOTE_IOV_MAX);
                size_t want = 0;
                for (size_t k = 0; k < batch; k++) {
                        struct remote_chunk *c = &chunks[i + k];
                        local[k] = (struct iovec) { .iov_base = c->buf, .iov_len = c->len };
                        remote[k] = (struct iovec) { .iov_base = (void *) (uintptr_t) c->addr, .iov_len = c->len };
                        want += c->len;
                }
                ssize_t got = process_vm_readv(pid, local, batch, remote, batch, 0);
                calls++;
                if (got < 0 && errno != EFAULT) {
                        /* The whole process is out of reach: every chunk left shares the fate. */
                        enum mem_state s = mem_state_from_errno(errno);
                        for (; i < n; i++)
                                chunks[i].state = s;
                        return calls;
                }
                size_t done = got < 0 ? 0 : (size_t) got;
                if (done == want) {
                        for (size_t k = 0; k < batch; k++)
                                chunks[i + k].state = MEM_OK;
                        i += batch;
                        continue;
                }
                /* The kernel stops at the first region it cannot read: those before it are whole. */
                while (i < n && done >= chunks[i].len) {
                        chunks[i].state = MEM_OK;
                        done -= chunks[i].len;
                        i++;
                }
                /* This one stopped the batch; read it alone so it gets its own errno. */
                int r = remote_read(pid, chunks[i].addr, chunks[i].buf, chunks[i].len);
                calls++;
                chunks[i].state = mem_state_from_errno(-r);
                if (chunks[i].state == MEM_GONE) {
                        for (; i < n; i++)
                                chunks[i].state = MEM_GONE;
                        return calls;
                }
                i++;
        }
        return calls;
}
