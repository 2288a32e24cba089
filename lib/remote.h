/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

/* What became of one read of traced memory.  Anything but MEM_OK is printed as what it is, never as a value. */
enum mem_state {
        MEM_OK,
        MEM_STALE,       /* read, but the thread may have changed it before the read: not trusted */
        MEM_FAULT,       /* EFAULT/EIO: not mapped in the process */
        MEM_GONE,        /* ESRCH: the process has exited */
        MEM_DENIED,      /* EPERM: not allowed to read it */
        MEM_UNAVAILABLE, /* ENOSYS or another error: cannot read at all */
        MEM_NOT_READ,    /* beyond a configured bound */
        MEM_NOT_CAPTURED, /* the in-kernel capture has nothing for it (its arguments were not kept at enter) */
        MEM_SKIPPED,      /* not read: the rings were filling faster than the tracer emptied them */
        _MEM_STATE_MAX,
};

_const_ const char *mem_state_name(enum mem_state s);
enum mem_state mem_state_from_errno(int err);

struct remote_chunk {
        uint64_t addr;
        void *buf;
        size_t len;
        enum mem_state state; /* out */
};

/* Read one region whole: 0, or a negative errno (a short read is -EFAULT). */
int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Read many regions with as few process_vm_readv calls as the kernel allows; each chunk gets its own state.
 * Returns how many process_vm_readv calls it made. */
unsigned remote_read_chunks(pid_t pid, struct remote_chunk *chunks, size_t n);
