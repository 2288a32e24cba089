/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h" /* the ABI's sizes */
#include "outbuf.h"
#include "remote.h"

struct iocb_info {
        uint64_t addr;          /* the iocb pointer, as read from iocbpp[] (or passed to io_cancel) */
        enum mem_state addr_state; /* of the pointer itself */
        enum mem_state state;   /* of the iocb it points to */
        uint64_t data;
        uint32_t key;
        int32_t rw_flags;
        uint16_t opcode;
        int16_t reqprio;
        uint32_t fd;
        uint64_t buf;
        uint64_t nbytes;
        int64_t offset;
        uint32_t flags;
        uint32_t resfd;
        /* preadv/pwritev: buf is an iovec array of nbytes entries */
        enum mem_state iov_state;
        uint64_t iov_total;
        uint32_t iov_counted; /* how many of the nbytes iovecs were summed */
        /* the open file fd named during the call, when the in-kernel capture saw it */
        bool file_known;
        uint32_t file_mnt_id;
        uint64_t file_ino;
        /* the kernel's own view of it (a direct read or write through iomap): the same as the iocb's memory
         * after the call, or not (written by another thread during the call): then the kernel's file (above),
         * offset and bytes */
        bool kernel_same;
        bool kernel_other;
        bool fd_moved; /* without the kernel's view: the fd named another file at the call's enter */
        int64_t kernel_offset;
        uint64_t kernel_nbytes;
};

struct event_info {
        uint64_t addr; /* where this io_event sits in the caller's array */
        enum mem_state state;
        uint64_t data;
        uint64_t obj;
        int64_t res;
        int64_t res2;
        int32_t fd;           /* from the submit this completes; -1 when it was not seen */
        bool data_mismatch;   /* data differs from the aio_data seen at submit: stale */
        uint64_t expected_data;
};

void iocb_decode(struct iocb_info *info, const uint8_t raw[static IOCB_SIZE]);
void io_event_decode(struct event_info *info, const uint8_t raw[static IO_EVENT_SIZE]);
bool iocb_is_vectored(const struct iocb_info *info);

/* What an opcode does: from the one table of them (bpf/ops.h: names, the direction of its data, iovecs or
 * not). */
enum aio_op_dir {
        AIO_OP_NO_DATA,
        AIO_OP_READ,
        AIO_OP_WRITE,
};

struct aio_op {
        struct word name; /* "pread", ... */
        enum aio_op_dir dir;
        bool vectored; /* buf is an iovec array of nbytes entries */
};

/* The op of an opcode the kernel knows (IOCB_CMD_*); NULL for any other. */
const struct aio_op *aio_op_of(uint16_t opcode);

/* "pread", ...; NULL for an opcode the kernel does not know */
const char *iocb_opcode_name(uint16_t opcode);
const struct word *iocb_opcode_word(uint16_t opcode);
void format_rw_flags(struct outbuf *b, uint32_t flags);
void format_iocb_flags(struct outbuf *b, uint32_t flags);
/* A result the kernel means as -errno (the range the kernel's IS_ERR_VALUE takes). */
static inline bool result_is_errno(int64_t v) {
        return v < 0 && v >= -4095;
}

/* The longest errno_name() ("EIO", or "E4000" for a number libc has no name for): test-json checks every one
 * fits, and a longer one would be cut, not overrun. */
#define ERRNO_NAME_MAX 24
/* "-5 (EIO)" for negative results, "4096" otherwise */
void format_result(struct outbuf *b, int64_t res);
#define SPAN_RESULT (SPAN_S64 + 3 + ERRNO_NAME_MAX)
char *span_result(char *d, int64_t res);
