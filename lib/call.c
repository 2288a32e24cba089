/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "call.h"

#include <errno.h>
#include <stdlib.h>

#include "util.h"

int call_ctx_init(struct call_ctx *c, unsigned max_iocbs, struct trace_stats *stats) {
        if (max_iocbs == 0)
                return -EINVAL;
        *c = (struct call_ctx) {
                .max_iocbs = max_iocbs,
                .stats = stats,
                .iocbs = calloc(max_iocbs, sizeof(struct iocb_info)),
                .events = calloc(max_iocbs, sizeof(struct event_info)),
                .raw = calloc(max_iocbs, IOCB_SIZE),
                .ptrs = calloc(max_iocbs, sizeof(uint64_t)),
                /* +1: io_getevents reads the timeout in the same batch as the events */
                .chunks = calloc((size_t) MAX(max_iocbs, CALL_IOV_BUDGET) + 1, sizeof(struct remote_chunk)),
                .owner = calloc(MAX(max_iocbs, CALL_IOV_BUDGET), sizeof(unsigned)),
                .iov_raw = calloc(CALL_IOV_BUDGET, IOVEC_SIZE),
        };
        if (!c->iocbs || !c->events || !c->raw || !c->ptrs || !c->chunks || !c->owner || !c->iov_raw) {
                call_ctx_done(c);
                return -ENOMEM;
        }
        return 0;
}

void call_ctx_done(struct call_ctx *c) {
        free(c->iocbs);
        free(c->events);
        free(c->raw);
        free(c->ptrs);
        free(c->chunks);
        free(c->owner);
        free(c->iov_raw);
        *c = (struct call_ctx) {};
}

const struct call_handler *call_handler_for(enum aio_syscall s) {
        switch (s) {
        case AIO_IO_SETUP:
        case AIO_IO_DESTROY:
                return &handler_context;
        case AIO_IO_SUBMIT:
                return &handler_submit;
        case AIO_IO_CANCEL:
                return &handler_cancel;
        case AIO_IO_GETEVENTS:
        case AIO_IO_PGETEVENTS:
                return &handler_getevents;
        default:
                return NULL;
        }
}

static void stale_state(struct call_ctx *c, enum mem_state *s) {
        if (*s == MEM_OK) {
                *s = MEM_STALE;
                c->stats->stale++;
        }
}

void call_mark_stale(struct call_ctx *c, struct aio_call *call) {
        stale_state(c, &call->aux_state);
        if (call->syscall == AIO_IO_SUBMIT)
                for (unsigned i = 0; i < call->n_items; i++) {
                        stale_state(c, &call->iocbs[i].addr_state);
                        stale_state(c, &call->iocbs[i].state);
                        stale_state(c, &call->iocbs[i].iov_state);
                }
        else if (call->syscall == AIO_IO_GETEVENTS || call->syscall == AIO_IO_PGETEVENTS)
                for (unsigned i = 0; i < call->n_items; i++)
                        stale_state(c, &call->events[i].state);
        else if (call->syscall == AIO_IO_CANCEL) {
                stale_state(c, &call->cancel_iocb.state);
                if (call->n_items)
                        stale_state(c, &call->events[0].state);
        }
}

/* The one place memory is read: from the capture when there is one, else from the process now. */
static void read_chunks(struct call_ctx *c, const struct aio_call *call, struct remote_chunk *chunks, size_t n) {
        if (c->capture)
                capture_view_fill(c->capture, chunks, n);
        else if (c->skip_reads) {
                /* once a call: what a call reads second depends on what it read first */
                for (size_t i = 0; i < n; i++)
                        chunks[i].state = MEM_SKIPPED;
                c->stats->skipped_reads++;
        } else
                c->stats->remote_reads += remote_read_chunks((pid_t) call->pid, chunks, n);
}

static void count_unreadable(struct call_ctx *c, enum mem_state s) {
        if (s != MEM_OK && s != MEM_NOT_READ && s != MEM_SKIPPED) /* skipped calls are counted apart */
                c->stats->unreadable++;
}

/* io_setup writes the new context back to *ctxp; io_destroy reads nothing. */
static void augment_context(struct call_ctx *c, struct aio_call *call) {
        call->aux_state = MEM_NOT_READ;
        if (call->syscall != AIO_IO_SETUP || call->ret != 0 || !call->args_known)
                return;
        uint8_t raw[8];
        struct remote_chunk chunk = { .addr = call->args[1], .buf = raw, .len = sizeof(raw) };
        read_chunks(c, call, &chunk, 1);
        call->aux_state = chunk.state;
        if (chunk.state == MEM_OK)
                call->aux[0] = load_u64(raw);
        count_unreadable(c, call->aux_state);
}

const struct call_handler handler_context = { .augment = augment_context };

static void iocb_unread(struct iocb_info *cb, enum mem_state s) {
        *cb = (struct iocb_info) { .addr_state = s, .state = s, .iov_state = MEM_NOT_READ };
}

static void sum_iovecs(struct call_ctx *c, struct aio_call *call) {
        size_t n_chunks = 0, used = 0;
        unsigned *owner = c->owner;

        for (unsigned i = 0; i < call->n_items; i++) {
                struct iocb_info *cb = &call->iocbs[i];
                if (cb->state != MEM_OK || !iocb_is_vectored(cb))
                        continue;
                if (cb->nbytes > CALL_IOV_BUDGET - used || n_chunks >= CALL_IOV_BUDGET) {
                        cb->iov_state = MEM_NOT_READ;
                        continue;
                }
                c->chunks[n_chunks] = (struct remote_chunk) {
                        .addr = cb->buf, .buf = c->iov_raw + used * IOVEC_SIZE, .len = cb->nbytes * IOVEC_SIZE,
                };
                owner[n_chunks++] = i;
                used += cb->nbytes;
        }
        if (n_chunks == 0)
                return;
        read_chunks(c, call, c->chunks, n_chunks);
        for (size_t k = 0; k < n_chunks; k++) {
                struct iocb_info *cb = &call->iocbs[owner[k]];
                cb->iov_state = c->chunks[k].state;
                count_unreadable(c, cb->iov_state);
                if (cb->iov_state != MEM_OK)
                        continue;
                const uint8_t *v = c->chunks[k].buf;
                for (uint64_t j = 0; j < cb->nbytes; j++)
                        cb->iov_total += load_u64(v + j * IOVEC_SIZE + 8);
                cb->iov_counted = (uint32_t) cb->nbytes;
        }
}

static void augment_submit(struct call_ctx *c, struct aio_call *call) {
        int64_t nr = (int64_t) call->args[1];
        uint64_t iocbpp = call->args[2];

        call->iocbs = c->iocbs;
        call->n_items = 0;
        call->array_state = MEM_OK;
        /* What the kernel accepted when it accepted any; what was passed when it refused the call. */
        call->n_wanted = call->ret > 0 ? (uint64_t) call->ret : nr > 0 ? (uint64_t) nr : 0;
        if (!call->args_known || call->n_wanted == 0)
                return;
        unsigned n = (unsigned) MIN(call->n_wanted, (uint64_t) c->max_iocbs);
        if (call->n_wanted > n)
                c->stats->truncated += call->n_wanted - n;

        /* One chunk per pointer: an array running into an unmapped page keeps what precedes it. */
        for (unsigned i = 0; i < n; i++)
                c->chunks[i] = (struct remote_chunk) {
                        .addr = iocbpp + 8ull * i, .buf = &c->ptrs[i], .len = sizeof(uint64_t),
                };
        read_chunks(c, call, c->chunks, n);

        unsigned n_chunks = 0;
        unsigned *owner = c->owner;
        for (unsigned i = 0; i < n; i++) {
                struct iocb_info *cb = &call->iocbs[i];
                enum mem_state s = c->chunks[i].state;
                if (s != MEM_OK) {
                        iocb_unread(cb, s);
                        count_unreadable(c, s);
                        continue;
                }
                *cb = (struct iocb_info) { .addr = c->ptrs[i], .addr_state = MEM_OK, .state = MEM_FAULT };
                if (cb->addr == 0) {
                        count_unreadable(c, MEM_FAULT);
                        continue;
                }
                owner[n_chunks++] = i;
        }
        for (unsigned k = 0; k < n_chunks; k++)
                c->chunks[k] = (struct remote_chunk) {
                        .addr = call->iocbs[owner[k]].addr, .buf = c->raw + (size_t) k * IOCB_SIZE, .len = IOCB_SIZE,
                };
        if (n_chunks)
                read_chunks(c, call, c->chunks, n_chunks);
        for (unsigned k = 0; k < n_chunks; k++) {
                struct iocb_info *cb = &call->iocbs[owner[k]];
                struct capture_iocb_file f;
                if (c->chunks[k].state == MEM_OK) {
                        iocb_decode(cb, c->chunks[k].buf);
                        if (c->capture && capture_view_file(c->capture, owner[k], &f) && f.file.fd == cb->fd) {
                                cb->file_known = true;
                                cb->file_mnt_id = f.file.mnt_id;
                                cb->file_ino = f.file.ino;
                                cb->kernel_same = f.flags & CAPTURE_IOCB_KERNEL_SAME;
                                cb->kernel_other = f.flags & CAPTURE_IOCB_KERNEL_OTHER;
                                cb->fd_moved = f.flags & CAPTURE_IOCB_FD_MOVED;
                                cb->kernel_offset = (int64_t) f.kernel_pos;
                                cb->kernel_nbytes = f.kernel_count;
                        }
                } else {
                        cb->state = c->chunks[k].state;
                        cb->iov_state = MEM_NOT_READ;
                        count_unreadable(c, cb->state);
                }
        }
        call->n_items = n;
        sum_iovecs(c, call);
}

const struct call_handler handler_submit = { .augment = augment_submit };

/* The events the call returned (only `ret` of them are defined) and its timeout, in one batch. */
static void augment_getevents(struct call_ctx *c, struct aio_call *call) {
        uint64_t events = call->args[3], timeout = call->args[4];

        call->events = c->events;
        call->n_items = 0;
        call->array_state = MEM_OK;
        call->aux_state = MEM_NOT_READ;
        call->n_wanted = call->ret > 0 ? (uint64_t) call->ret : 0;
        if (!call->args_known)
                return;
        unsigned n = (unsigned) MIN(call->n_wanted, (uint64_t) c->max_iocbs);
        if (call->n_wanted > n)
                c->stats->truncated += call->n_wanted - n;

        size_t k = 0;
        uint8_t ts[16];
        if (timeout)
                c->chunks[k++] = (struct remote_chunk) { .addr = timeout, .buf = ts, .len = sizeof(ts) };
        for (unsigned i = 0; i < n; i++)
                c->chunks[k++] = (struct remote_chunk) {
                        .addr = events + (uint64_t) i * IO_EVENT_SIZE, .buf = c->raw + (size_t) i * IO_EVENT_SIZE,
                        .len = IO_EVENT_SIZE,
                };
        if (k == 0)
                return;
        read_chunks(c, call, c->chunks, k);

        const struct remote_chunk *ev_chunks = c->chunks;
        if (timeout) {
                call->aux_state = c->chunks[0].state;
                count_unreadable(c, call->aux_state);
                if (call->aux_state == MEM_OK) {
                        call->aux[0] = load_u64(ts);
                        call->aux[1] = load_u64(ts + 8);
                }
                ev_chunks++;
        }
        for (unsigned i = 0; i < n; i++) {
                struct event_info *ev = &call->events[i];
                *ev = (struct event_info) { .addr = events + (uint64_t) i * IO_EVENT_SIZE, .fd = -1 };
                if (ev_chunks[i].state == MEM_OK)
                        io_event_decode(ev, ev_chunks[i].buf);
                else {
                        ev->state = ev_chunks[i].state;
                        count_unreadable(c, ev->state);
                }
        }
        call->n_items = n;
}

const struct call_handler handler_getevents = { .augment = augment_getevents };

/* The iocb being cancelled; the result io_event only when the kernel says it wrote one (ret 0). */
static void augment_cancel(struct call_ctx *c, struct aio_call *call) {
        uint64_t iocb = call->args[1], result = call->args[2];

        call->events = c->events;
        call->n_items = 0;
        iocb_unread(&call->cancel_iocb, MEM_NOT_READ);
        if (!call->args_known)
                return;
        call->cancel_iocb.addr = iocb;
        call->cancel_iocb.addr_state = MEM_OK;

        uint8_t raw[IOCB_SIZE];
        size_t k = 0;
        c->chunks[k++] = (struct remote_chunk) { .addr = iocb, .buf = raw, .len = sizeof(raw) };
        if (call->ret == 0)
                c->chunks[k++] = (struct remote_chunk) { .addr = result, .buf = c->raw, .len = IO_EVENT_SIZE };
        read_chunks(c, call, c->chunks, k);

        if (c->chunks[0].state == MEM_OK)
                iocb_decode(&call->cancel_iocb, raw);
        else {
                call->cancel_iocb.state = c->chunks[0].state;
                count_unreadable(c, call->cancel_iocb.state);
        }
        if (k > 1) {
                struct event_info *ev = &call->events[0];
                *ev = (struct event_info) { .addr = result, .fd = -1 };
                if (c->chunks[1].state == MEM_OK)
                        io_event_decode(ev, c->raw);
                else {
                        ev->state = c->chunks[1].state;
                        count_unreadable(c, ev->state);
                }
                call->n_items = 1;
        }
}

const struct call_handler handler_cancel = { .augment = augment_cancel };
