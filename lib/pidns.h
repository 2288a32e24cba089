/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The pid namespace a process is in, as the capture names it to the kernel (bpf_get_ns_current_pid_tgid). */
struct pidns {
        dev_t dev;      /* of nsfs, as stat(2) gives it */
        uint64_t ino;
        unsigned level; /* 0: the first (the host's) */
};

#define PIDNS_INIT_INO 0xEFFFFFFCu /* PROC_PID_INIT_INO: the host's */

/* The daemon's own, from PROC_ROOT/self/ns/pid and PROC_ROOT/self/status.  0, or a negative errno. */
int pidns_of_self(const char *proc_root, struct pidns *ret);

/* A process's pid in its own (innermost) pid namespace, from the NSpid line of PROC_ROOT/PID/status: 0, or a
 * negative errno (-ENOENT: gone).  ret untouched on failure. */
int proc_ns_pid(const char *proc_root, uint32_t pid, uint32_t *ret);

/* The last pid of an "NSpid:" line's text (the status file's), and how many there are: 0, or -EBADMSG. */
int nspid_parse(const char *status, uint32_t *ret_innermost, unsigned *ret_count);
