/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-kernel capture: attached by libbpf to the syscalls:sys_{enter,exit}_io_* tracepoints (daemon/bpf_capture.c).
 *
 * It selects the watched threads itself (a tracepoint filter applies only after a program has run) and writes
 * every record of theirs to the daemon's perf ring of this CPU: at enter the tracepoint's own record (keeping
 * the arguments); at exit, while the caller is still inside the kernel, the exit record followed by the iocb
 * pointers, iocbs, iovecs, io_events, timeout or context the call used. */
#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "capture.h"

char LICENSE[] SEC("license") = "GPL";

/* The program in rooms, included in this order: each uses only what comes before it. */
#include "kernel_types.h"
#include "state.h"
#include "select.h"
#include "record.h"
#include "aio_ring.h"
#include "summaries.h"
#include "files.h"
#include "more.h"
#include "identity.h"
#include "syscalls.h"
#include "process_life.h"
#include "uring.h"
