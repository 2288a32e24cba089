/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "events.h"
#include "util.h"

/* io_uring's requests, as the capture writes them at io_uring_submit_req and io_uring_complete: one record
 * each, no system call per request. */

/* Requests of io_uring carry opcodes above the AIO ones where no AIO op means the same. */
#define URING_OPCODE_BASE 0x100

/* The op's name: the AIO op's where one means the same (read and read_fixed are pread, fsync with
 * IORING_FSYNC_DATASYNC is fdsync, poll_add is poll, ...), else io_uring's own ("openat", "send").  As an
 * opcode of the request records: the AIO opcode, or URING_OPCODE_BASE + the io_uring one. */
uint16_t uring_request_opcode(uint8_t uring_op, uint32_t op_flags);
/* Whether the op works on the SQE's fd (the kernel's needs_file): the others (nop, openat, timeout, ...) have
 * no file to name. */
bool uring_op_has_file(uint8_t uring_op);
/* Whether the op is one of the table's (bpf/ops.h). */
bool uring_op_known(uint8_t uring_op);
/* Whether its length counts iovecs, not bytes. */
bool uring_op_vectored(uint8_t uring_op);
/* Where its prep keeps what the capture reads of it. */
enum uring_op_layout uring_op_layout(uint8_t uring_op);
/* The name of a request opcode of URING_OPCODE_BASE and above; NULL for others. */
const struct word *uring_opcode_word(uint16_t opcode);

struct uring_event {
        /* EVENT_URING_SUBMIT (or a request failed before it), _COMPLETE, _OVERFLOW; _ASYNC, _POLL_ARM */
        enum event_kind kind;
        bool submit;
        uint32_t pid; /* the ring's process */
        uint32_t tid; /* the thread that submitted (an SQPOLL thread for its process) or completed */
        uint64_t ring, req, user_data;
        /* submit */
        uint8_t opcode; /* IORING_OP_* */
        bool sq_thread;
        bool cqe_skip; /* IOSQE_CQE_SKIP_SUCCESS: no CQE if it succeeds */
        bool linked;   /* IOSQE_IO_LINK or IOSQE_IO_HARDLINK: the next request waits for it */
        bool cap_known; /* cap: what the capture read of the request or completion (without it, the above) */
        struct capture_uring cap;
        /* complete, overflow */
        int32_t res;
        uint32_t cflags;
        bool cqe_dropped; /* overflow: not even kept in the overflow list (no memory for it) */
};

/* A record of one of io_uring's tracepoints (d says which): 0, or -EBADMSG when it is not whole. */
int uring_event_parse(const uint8_t *raw, size_t raw_size, const struct event_desc *d, uint32_t sample_pid,
                      uint32_t sample_tid, struct uring_event *ret);
