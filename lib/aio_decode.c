/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "aio_decode.h"

#include <linux/aio_abi.h>
#include <stdio.h>

#include "util.h"

/* The decoder below copies into the ABI's own structures: capture.h checks their sizes and the offsets the
 * program reads. */

void iocb_decode(struct iocb_info *info, const uint8_t raw[static IOCB_SIZE]) {
        struct iocb cb;
        memcpy(&cb, raw, sizeof(cb));
        info->state = MEM_OK;
        info->data = cb.aio_data;
        info->key = cb.aio_key;
        info->rw_flags = cb.aio_rw_flags;
        info->opcode = cb.aio_lio_opcode;
        info->reqprio = cb.aio_reqprio;
        info->fd = cb.aio_fildes;
        info->buf = cb.aio_buf;
        info->nbytes = cb.aio_nbytes;
        info->offset = cb.aio_offset;
        info->flags = cb.aio_flags;
        info->resfd = cb.aio_resfd;
        info->iov_state = MEM_NOT_READ;
        info->iov_total = 0;
        info->iov_counted = 0;
}

void io_event_decode(struct event_info *info, const uint8_t raw[static IO_EVENT_SIZE]) {
        struct io_event ev;
        memcpy(&ev, raw, sizeof(ev));
        info->state = MEM_OK;
        info->data = ev.data;
        info->obj = ev.obj;
        info->res = ev.res;
        info->res2 = ev.res2;
}

#define AIO_OP_ROW(opcode, name, dir, vectored) [opcode] = { WORD(name), AIO_OP_##dir, vectored },
static const struct aio_op aio_ops[AIO_OPCODE_MAX + 1] = { AIO_OPS(AIO_OP_ROW) };
_Static_assert(IOCB_CMD_PWRITEV == AIO_OPCODE_MAX, "the opcode table ends at IOCB_CMD_PWRITEV");

const struct aio_op *aio_op_of(uint16_t opcode) {
        return opcode <= AIO_OPCODE_MAX && aio_ops[opcode].name.len ? &aio_ops[opcode] : NULL;
}

bool iocb_is_vectored(const struct iocb_info *info) {
        const struct aio_op *op = aio_op_of(info->opcode);
        return op && op->vectored;
}

const struct word *iocb_opcode_word(uint16_t opcode) {
        const struct aio_op *op = aio_op_of(opcode);
        return op ? &op->name : NULL;
}

const char *iocb_opcode_name(uint16_t opcode) {
        const struct word *w = iocb_opcode_word(opcode);
        return w ? w->s : NULL;
}

struct flag_name {
        uint32_t bit;
        const char *name;
};

/* Kernel ABI values, spelled out so older userspace headers still name what newer kernels accept. */
static const struct flag_name rwf_names[] = {
        { 0x01, "RWF_HIPRI" },  { 0x02, "RWF_DSYNC" },    { 0x04, "RWF_SYNC" },       { 0x08, "RWF_NOWAIT" },
        { 0x10, "RWF_APPEND" }, { 0x20, "RWF_NOAPPEND" }, { 0x40, "RWF_ATOMIC" },     { 0x80, "RWF_DONTCACHE" },
};

static const struct flag_name iocb_flag_names[] = {
        { 0x01, "IOCB_FLAG_RESFD" },
        { 0x02, "IOCB_FLAG_IOPRIO" },
};

static void format_flags(struct outbuf *b, uint32_t flags, const struct flag_name *names, size_t n) {
        bool first = true;
        for (size_t i = 0; i < n; i++)
                if (flags & names[i].bit) {
                        if (!first)
                                outbuf_putc(b, '|');
                        outbuf_puts(b, names[i].name);
                        flags &= ~names[i].bit;
                        first = false;
                }
        if (flags || first) {
                if (!first)
                        outbuf_putc(b, '|');
                outbuf_hex(b, flags);
        }
}

void format_rw_flags(struct outbuf *b, uint32_t flags) {
        format_flags(b, flags, rwf_names, ELEMENTSOF(rwf_names));
}

void format_iocb_flags(struct outbuf *b, uint32_t flags) {
        format_flags(b, flags, iocb_flag_names, ELEMENTSOF(iocb_flag_names));
}

const char *errno_name(int err, char buf[static 16]) {
        const char *n = err > 0 ? strerrorname_np(err) : NULL;
        if (n)
                return n;
        snprintf(buf, 16, "E%d", err);
        return buf;
}

char *span_result(char *d, int64_t res) {
        d = span_s64(d, res);
        if (_likely_(!result_is_errno(res)))
                return d;
        char tmp[16];
        const char *name = errno_name((int) -res, tmp);
        d = span_lit(d, " (");
        d = span_put(d, name, strnlen(name, ERRNO_NAME_MAX));
        *d++ = ')';
        return d;
}

void format_result(struct outbuf *b, int64_t res) {
        if (outbuf_reserve(b, SPAN_RESULT))
                b->len = (size_t) (span_result(b->data + b->len, res) - b->data);
}
