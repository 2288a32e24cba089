/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "uring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "aio_decode.h"

#define IORING_FSYNC_DATASYNC 1u

/* io_uring's ops by number (linux/io_uring.h, IORING_OP_*): the names its own tracepoints print, in lower
 * case, shortened where they would not fit a word. */
static const struct word uring_ops[] = {
        WORD("nop"),          WORD("readv"),         WORD("writev"),       WORD("fsync"),
        WORD("read_fixed"),   WORD("write_fixed"),   WORD("poll_add"),     WORD("poll_remove"),
        WORD("sync_range"),   WORD("sendmsg"),       WORD("recvmsg"),      WORD("timeout"),
        WORD("timeout_rm"),   WORD("accept"),        WORD("async_cancel"), WORD("link_timeout"),
        WORD("connect"),      WORD("fallocate"),     WORD("openat"),       WORD("close"),
        WORD("files_update"), WORD("statx"),         WORD("read"),         WORD("write"),
        WORD("fadvise"),      WORD("madvise"),       WORD("send"),         WORD("recv"),
        WORD("openat2"),      WORD("epoll_ctl"),     WORD("splice"),       WORD("provide_bufs"),
        WORD("remove_bufs"),  WORD("tee"),           WORD("shutdown"),     WORD("renameat"),
        WORD("unlinkat"),     WORD("mkdirat"),       WORD("symlinkat"),    WORD("linkat"),
        WORD("msg_ring"),     WORD("fsetxattr"),     WORD("setxattr"),     WORD("fgetxattr"),
        WORD("getxattr"),     WORD("socket"),        WORD("uring_cmd"),    WORD("send_zc"),
        WORD("sendmsg_zc"),   WORD("read_mshot"),    WORD("waitid"),       WORD("futex_wait"),
        WORD("futex_wake"),   WORD("futex_waitv"),   WORD("fd_install"),   WORD("ftruncate"),
        WORD("bind"),         WORD("listen"),        WORD("recv_zc"),      WORD("epoll_wait"),
        WORD("readv_fixed"),  WORD("writev_fixed"),  WORD("pipe"),
};

uint16_t uring_request_opcode(uint8_t op, uint32_t op_flags) {
        switch (op) {
        case 0: return IOCB_CMD_NOOP;
        case 1: return IOCB_CMD_PREADV;
        case 2: return IOCB_CMD_PWRITEV;
        case 3: return op_flags & IORING_FSYNC_DATASYNC ? IOCB_CMD_FDSYNC : IOCB_CMD_FSYNC;
        case 4: return IOCB_CMD_PREAD;
        case 5: return IOCB_CMD_PWRITE;
        case 6: return IOCB_CMD_POLL;
        case 22: return IOCB_CMD_PREAD;
        case 23: return IOCB_CMD_PWRITE;
        default: return (uint16_t) (URING_OPCODE_BASE + op);
        }
}

bool uring_op_has_file(uint8_t op) {
        /* io_uring/opdef.c: the ops with needs_file, by number */
        static const uint8_t with_file[] = { 1,  2,  3,  4,  5,  6,  8,  9,  10, 13, 16, 17, 22, 23, 24, 26, 27, 29,
                                             30, 33, 34, 40, 41, 43, 46, 47, 48, 49, 54, 55, 56, 57, 58, 59, 60, 61 };
        for (size_t i = 0; i < ELEMENTSOF(with_file); i++)
                if (with_file[i] == op)
                        return true;
        return false;
}

const struct word *uring_opcode_word(uint16_t opcode) {
        static struct word unknown[256]; /* "op_N", made once each */
        if (opcode < URING_OPCODE_BASE || opcode >= URING_OPCODE_BASE + 256)
                return NULL;
        unsigned op = opcode - URING_OPCODE_BASE;
        if (op < ELEMENTSOF(uring_ops))
                return &uring_ops[op];
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
                .ring = load_field(raw, raw_size, d->args[0].offset, d->args[0].size),
        };
        switch (d->kind) {
        case EVENT_URING_SUBMIT:
                u.req = load_field(raw, raw_size, d->args[1].offset, d->args[1].size);
                u.user_data = load_field(raw, raw_size, d->args[2].offset, d->args[2].size);
                u.opcode = (uint8_t) load_field(raw, raw_size, d->args[3].offset, d->args[3].size);
                u.sq_thread = load_field(raw, raw_size, d->args[5].offset, d->args[5].size) != 0;
                break;
        case EVENT_URING_COMPLETE:
                u.req = load_field(raw, raw_size, d->args[1].offset, d->args[1].size);
                u.user_data = load_field(raw, raw_size, d->args[2].offset, d->args[2].size);
                u.res = (int32_t) load_field(raw, raw_size, d->args[3].offset, d->args[3].size);
                u.cflags = (uint32_t) load_field(raw, raw_size, d->args[4].offset, d->args[4].size);
                break;
        case EVENT_URING_OVERFLOW:
                u.user_data = load_field(raw, raw_size, d->args[1].offset, d->args[1].size);
                u.res = (int32_t) load_field(raw, raw_size, d->args[2].offset, d->args[2].size);
                u.cflags = (uint32_t) load_field(raw, raw_size, d->args[3].offset, d->args[3].size);
                u.cqe_dropped = load_field(raw, raw_size, d->args[4].offset, d->args[4].size) == 0;
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
                        u.cap_known = u.submit;
                }
        }
        *ret = u;
        return 0;
}
