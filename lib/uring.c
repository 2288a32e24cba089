/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "uring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "aio_decode.h"

/* io_uring's ops by number, from the one table of them (bpf/ops.h) */
struct uring_op {
        struct word name;
        int16_t aio; /* the AIO opcode that means the same; -1: none */
        uint8_t layout;
        bool file, vectored;
};
#define URING_OP_ROW(op, n, a, l, f, v) [op] = { WORD(n), a, URING_LAYOUT_##l, f, v },
static const struct uring_op uring_ops[URING_OP_COUNT] = { URING_OPS(URING_OP_ROW) };

static const struct uring_op *op_of(uint8_t op) {
        return op < URING_OP_COUNT ? &uring_ops[op] : NULL;
}

uint16_t uring_request_opcode(uint8_t op, uint32_t op_flags) {
        const struct uring_op *o = op_of(op);
        if (!o || o->aio < 0)
                return (uint16_t) (URING_OPCODE_BASE + op);
        if (o->aio == IOCB_CMD_FSYNC && (op_flags & IORING_FSYNC_DATASYNC))
                return IOCB_CMD_FDSYNC;
        return (uint16_t) o->aio;
}

bool uring_op_known(uint8_t op) {
        return op_of(op) != NULL;
}

bool uring_op_has_file(uint8_t op) {
        const struct uring_op *o = op_of(op);
        return o && o->file;
}

bool uring_op_vectored(uint8_t op) {
        const struct uring_op *o = op_of(op);
        return o && o->vectored;
}

enum uring_op_layout uring_op_layout(uint8_t op) {
        const struct uring_op *o = op_of(op);
        return o ? (enum uring_op_layout) o->layout : URING_LAYOUT_NONE;
}

const struct word *uring_opcode_word(uint16_t opcode) {
        static struct word unknown[256]; /* "op_N", made once each */
        if (opcode < URING_OPCODE_BASE || opcode >= URING_OPCODE_BASE + 256)
                return NULL;
        unsigned op = opcode - URING_OPCODE_BASE;
        if (op < URING_OP_COUNT)
                return &uring_ops[op].name;
        if (!unknown[op].len) {
                int n = snprintf(unknown[op].s, sizeof(unknown[op].s), "op_%u", op);
                unknown[op].len = (uint8_t) n;
        }
        return &unknown[op];
}

int uring_event_parse(const uint8_t *raw, size_t raw_size, const struct event_desc *d, uint32_t sample_pid,
                      uint32_t sample_tid, struct uring_event *ret) {
        if (raw_size < d->record_size)
                return -EBADMSG;
        struct uring_event u = {
                .kind = d->kind,
                .submit = d->kind == EVENT_URING_SUBMIT,
                .pid = sample_pid,
                .tid = sample_tid,
                /* ctx first in each */
                .ring = event_field(d, raw, raw_size, URING_SUBMIT_CTX),
        };
        switch (d->kind) {
        case EVENT_URING_SUBMIT:
                u.req = event_field(d, raw, raw_size, URING_SUBMIT_REQ);
                u.user_data = event_field(d, raw, raw_size, URING_SUBMIT_USER_DATA);
                u.opcode = (uint8_t) event_field(d, raw, raw_size, URING_SUBMIT_OPCODE);
                /* the request's flags begin with the SQE's: IOSQE_IO_LINK bit 2, IOSQE_IO_HARDLINK 3,
                 * IOSQE_CQE_SKIP_SUCCESS 6 */
                uint64_t flags = event_field(d, raw, raw_size, URING_SUBMIT_FLAGS);
                u.linked = flags & (3u << 2);
                u.cqe_skip = flags & (1u << 6);
                u.sq_thread = event_field(d, raw, raw_size, URING_SUBMIT_SQ_THREAD) != 0;
                break;
        case EVENT_URING_COMPLETE:
                u.req = event_field(d, raw, raw_size, URING_COMPLETE_REQ);
                u.user_data = event_field(d, raw, raw_size, URING_COMPLETE_USER_DATA);
                u.res = (int32_t) event_field(d, raw, raw_size, URING_COMPLETE_RES);
                u.cflags = (uint32_t) event_field(d, raw, raw_size, URING_COMPLETE_CFLAGS);
                break;
        case EVENT_URING_OVERFLOW:
                u.user_data = event_field(d, raw, raw_size, URING_OVERFLOW_USER_DATA);
                u.res = (int32_t) event_field(d, raw, raw_size, URING_OVERFLOW_RES);
                u.cflags = (uint32_t) event_field(d, raw, raw_size, URING_OVERFLOW_CFLAGS);
                u.cqe_dropped = event_field(d, raw, raw_size, URING_OVERFLOW_OCQE) == 0;
                break;
        case EVENT_URING_ASYNC:
                u.req = event_field(d, raw, raw_size, URING_ASYNC_REQ);
                u.user_data = event_field(d, raw, raw_size, URING_ASYNC_USER_DATA);
                u.opcode = (uint8_t) event_field(d, raw, raw_size, URING_ASYNC_OPCODE);
                break;
        case EVENT_URING_POLL_ARM:
                u.req = event_field(d, raw, raw_size, URING_POLL_REQ);
                u.user_data = event_field(d, raw, raw_size, URING_POLL_USER_DATA);
                u.opcode = (uint8_t) event_field(d, raw, raw_size, URING_POLL_OPCODE);
                break;
        default:
                return -EBADMSG; /* io_uring_req_failed is written as a submit */
        }
        /* the capture's part, 8-aligned after the record's fields */
        size_t at = (d->record_size + 7) & ~(size_t) 7;
        if (raw_size >= at + sizeof(u.cap)) {
                memcpy(&u.cap, raw + at, sizeof(u.cap)); /* a sample's raw data is 4-aligned */
                if (u.cap.magic == CAPTURE_URING_MAGIC) {
                        u.pid = u.cap.pid;
                        u.tid = u.cap.tid;
                        u.cap_known = true;
                }
        }
        *ret = u;
        return 0;
}
