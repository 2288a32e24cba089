/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* io_uring's requests, from the capture's submit record to their completion, in the tracker's io_uring table
 * keyed by (process, ring, request): each ends at its completion, or, for a multishot one, each completion but
 * the last is a record of its own while it stays in flight.  The requests ended are handed over by
 * tracker_flush(). */

#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "tracker.h"

#define IORING_CQE_F_MORE (1u << 1)  /* the request goes on: more completions come */
#define IORING_CQE_F_NOTIF (1u << 3) /* a zero-copy send's notification: the kernel is done with its buffer */

/* An io_uring request, as its submit was seen. */
struct uring_submit {
        uint32_t pid, tid;
        const char *comm;
        uint64_t ring, req, user_data;
        uint64_t time;
        uint16_t opcode; /* uring_request_opcode() */
        bool details;    /* off, len (nbytes_known: a length in bytes) read by the capture */
        bool nbytes_known;
        bool fixed_file;
        bool no_file;
        bool failed; /* failed before it was submitted: its details are the SQE's */
        bool cqe_skip; /* IOSQE_CQE_SKIP_SUCCESS: no CQE if it succeeds */
        bool linked;   /* IOSQE_IO_LINK or _HARDLINK: the next request of the ring begins once it is done */
        uint32_t fd;
        int64_t off;
        uint64_t len;
        uint32_t rw_flags;
        const struct capture_file *file; /* the file fd named at submit; NULL: not known */
};

void uring_requests_submit(struct tracker *t, const struct uring_submit *u, uint64_t generation);
/* A CQE the kernel posted, kept in its overflow list or dropped: whose, and of which request. */
struct uring_completion {
        uint32_t pid, tid;
        uint64_t ring;
        uint64_t req; /* the kernel's request; 0: none named (a multishot's, an overflow) */
        uint64_t user_data;
        int32_t res;
        uint32_t cflags;
        /* the file the kernel used, which names the request's path even if its fd named another at the submit;
         * NULL: not known */
        const struct capture_file *kernel_file;
        uint64_t time;
};

void uring_requests_complete(struct tracker *t, const struct uring_completion *c, uint64_t generation);
/* A completion the CQ ring had no room for (no request named: found by its user_data), kept in the
 * overflow list or dropped. */
void uring_requests_overflow(struct tracker *t, const struct uring_completion *c, bool dropped);
/* A request handed to an io-wq worker (REQ_ASYNC_IO_WQ) or armed for poll (REQ_ASYNC_POLL): marked, and
 * counted in its process's interval. */
void uring_requests_async(struct tracker *t, uint32_t pid, uint64_t ring, uint64_t req, uint8_t opcode,
                          uint8_t how);
/* io_uring's requests are no longer traced: those in flight end unknown. */
void uring_requests_stop(struct tracker *t, uint64_t time);
