/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_text.h"

#include <linux/aio_abi.h>

#include "aio_decode.h"
#include "format_fields.h"
#include "util.h"

static void put_state(struct outbuf *b, enum mem_state s) {
        outbuf_puts(b, "<unreadable: ");
        outbuf_puts(b, mem_state_name(s));
        outbuf_putc(b, '>');
}

static void put_stale(struct outbuf *b, enum mem_state s) {
        if (s == MEM_STALE)
                outbuf_puts(b, " [stale]");
}

/* What an iocb sets beyond op, fd, buffer and place: an iocb line's and a request's, alike. */
static void put_iocb_options(struct outbuf *b, int32_t rw_flags, int16_t reqprio, uint32_t flags) {
        if (rw_flags) {
                outbuf_puts(b, ", rw_flags = ");
                format_rw_flags(b, (uint32_t) rw_flags);
        }
        if (reqprio) {
                outbuf_puts(b, ", reqprio = ");
                outbuf_s64(b, reqprio);
        }
        if (flags) {
                outbuf_puts(b, ", flags = ");
                format_iocb_flags(b, flags);
        }
}

/* The words of a line, without its values: a bound each span of a line below stays within, with room to spare
 * (outbuf_span_end stops the daemon should one ever pass its room). */
#define LINE_WORDS 160

/* An iocb line up to its offset: the index, the iocb's address, an op (or an unknown one's number), three
 * pointers and three numbers. */
#define IOCB_LINE_ROOM (LINE_WORDS + SPAN_U64_WIDTH(4) + 3 * SPAN_PTR + SPAN_WORD + 3 * SPAN_U64 + SPAN_S64)

static char *span_iocb_fields(char *d, const struct iocb_info *cb) {
        const struct word *op = iocb_opcode_word(cb->opcode);
        d = span_lit(d, "op = ");
        if (op)
                d = span_word(d, op);
        else {
                d = span_u64(d, cb->opcode);
                d = span_lit(d, " (unknown)");
        }
        d = span_lit(d, ", fd = ");
        d = span_s64(d, (int32_t) cb->fd); /* as the program wrote it: -1 is not 4294967295 */
        d = span_lit(d, ", data = ");
        d = span_ptr(d, cb->data);
        d = span_lit(d, ", buf = ");
        d = span_ptr(d, cb->buf);
        d = span_lit(d, ", nbytes = ");
        d = span_u64(d, cb->nbytes);
        d = span_lit(d, ", offset = ");
        return span_s64(d, cb->offset);
}

/* What few iocbs set, after the offset. */
static void put_iocb_extras(struct outbuf *b, const struct iocb_info *cb) {
        if (iocb_is_vectored(cb)) {
                outbuf_puts(b, ", iov_total = ");
                if (cb->iov_state == MEM_OK || cb->iov_state == MEM_STALE) {
                        outbuf_u64(b, cb->iov_total);
                        put_stale(b, cb->iov_state);
                } else
                        put_state(b, cb->iov_state);
        }
        put_iocb_options(b, cb->rw_flags, cb->reqprio, cb->flags);
        if (cb->flags & IOCB_FLAG_RESFD) {
                outbuf_puts(b, ", resfd = ");
                outbuf_u64(b, cb->resfd);
        }
        if (cb->key) {
                outbuf_puts(b, ", key = ");
                outbuf_u64(b, cb->key);
        }
}

/* index < 0: the iocb io_cancel names */
static void put_iocb_line(struct outbuf *b, int index, const struct iocb_info *cb) {
        char *d = outbuf_span(b, IOCB_LINE_ROOM);
        if (!d)
                return;
        if (index >= 0) {
                d = span_lit(d, "    iocb[");
                d = span_u64_width4(d, (unsigned) index);
                d = span_lit(d, "] = ");
        } else
                d = span_lit(d, "    iocb = ");
        if (cb->addr_state != MEM_OK && cb->addr_state != MEM_STALE) {
                outbuf_span_end(b, d, IOCB_LINE_ROOM);
                put_state(b, cb->addr_state);
                outbuf_putc(b, '\n');
                return;
        }
        d = span_ptr(d, cb->addr);
        d = span_lit(d, ", ");
        if (cb->state == MEM_OK || cb->state == MEM_STALE) {
                d = span_iocb_fields(d, cb);
                outbuf_span_end(b, d, IOCB_LINE_ROOM);
                put_iocb_extras(b, cb);
                put_stale(b, cb->state == MEM_STALE ? MEM_STALE : cb->addr_state);
        } else {
                outbuf_span_end(b, d, IOCB_LINE_ROOM);
                put_state(b, cb->state);
        }
        outbuf_putc(b, '\n');
}

/* An event's two lines: the index, four pointers, a result and res2. */
#define EVENT_LINES_ROOM (LINE_WORDS + SPAN_U64_WIDTH(4) + 4 * SPAN_PTR + SPAN_U64 + SPAN_RESULT + SPAN_S64)

static void put_event(struct outbuf *b, unsigned i, const struct event_info *ev) {
        char *d = outbuf_span(b, EVENT_LINES_ROOM);
        if (!d)
                return;
        d = span_lit(d, "    event[");
        d = span_u64_width4(d, i);
        d = span_lit(d, "] = ");
        d = span_ptr(d, ev->addr);
        if (ev->state != MEM_OK && ev->state != MEM_STALE) {
                outbuf_span_end(b, d, EVENT_LINES_ROOM);
                outbuf_puts(b, ", ");
                put_state(b, ev->state);
                outbuf_putc(b, '\n');
                return;
        }
        d = span_lit(d, "\n      iocb = ");
        d = span_ptr(d, ev->obj);
        d = span_lit(d, ", fd = ");
        if (ev->fd >= 0)
                d = span_u64(d, (uint64_t) ev->fd);
        else
                *d++ = '?';
        d = span_lit(d, ", data = ");
        d = span_ptr(d, ev->data);
        d = span_lit(d, ", res = ");
        d = span_result(d, ev->res);
        d = span_lit(d, ", res2 = ");
        d = span_s64(d, ev->res2);
        if (ev->data_mismatch) {
                d = span_lit(d, " [stale: submitted with data ");
                d = span_ptr(d, ev->expected_data);
                *d++ = ']';
        } else if (ev->state == MEM_STALE)
                d = span_lit(d, " [stale]");
        *d++ = '\n';
        outbuf_span_end(b, d, EVENT_LINES_ROOM);
}

static void put_truncated(struct outbuf *b, const struct aio_call *c, const char *what, unsigned max) {
        if (c->n_wanted <= c->n_items || !c->args_known)
                return;
        outbuf_puts(b, "    ... ");
        outbuf_u64(b, c->n_wanted - c->n_items);
        outbuf_puts(b, " more ");
        outbuf_puts(b, what);
        outbuf_puts(b, " not read (max_iocbs_per_call = ");
        outbuf_u64(b, max);
        outbuf_puts(b, ")\n");
}

/* The most a call's arguments write: io_pgetevents' four pointers and two numbers. */
#define ARGS_ROOM (4 * SPAN_PTR + 2 * SPAN_S64)

static char *span_args(char *d, const struct aio_call *c) {
        if (!c->args_known) {
                *d++ = '?';
                return d;
        }
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        for (unsigned i = 0; i < sd->n_args; i++) {
                if (i)
                        d = span_lit(d, ", ");
                uint64_t v = c->args[i];
                d = sd->args[i].type == ARG_PTR   ? span_ptr(d, v)
                    : sd->args[i].type == ARG_U32 ? span_u64(d, (uint32_t) v)
                                                  : span_s64(d, (int64_t) v);
        }
        return d;
}

/* What the call read beyond its arguments, on a line of its own: io_setup's new context once it was read, a
 * timeout when there was one. */
static void put_aux(struct outbuf *b, const struct aio_call *c) {
        if (!call_aux_shown(c))
                return;
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        outbuf_puts(b, "    ");
        outbuf_puts(b, syscall_aux_desc(sd->aux)->label);
        outbuf_puts(b, " = ");
        if (c->aux_state != MEM_OK && c->aux_state != MEM_STALE)
                put_state(b, c->aux_state);
        else if (sd->aux == AUX_CTX) {
                outbuf_ptr(b, c->aux[0]);
                put_stale(b, c->aux_state);
        } else {
                outbuf_s64(b, (int64_t) c->aux[0]);
                outbuf_putc(b, '.');
                outbuf_frac9(b, c->aux[1]);
                put_stale(b, c->aux_state);
        }
        outbuf_putc(b, '\n');
}

/* " - UNIT" in a line's header, when the process is in a systemd unit: a span ends before it, as a unit's name
 * has no bound a span could reserve. */
static void put_unit(struct outbuf *b, const char *unit) {
        outbuf_puts(b, " - ");
        outbuf_escaped_str(b, unit);
}

/* A call's line: comm, pid and tid, the name, the arguments, the result and the time. */
#define CALL_LINE_ROOM (LINE_WORDS + SPAN_COMM + 2 * SPAN_U64 + SPAN_WORD + ARGS_ROOM + SPAN_RESULT + SPAN_U64)

static void format_call(struct outbuf *b, const struct aio_call *c, unsigned max) {
        char *d = outbuf_span(b, CALL_LINE_ROOM);
        if (!d)
                return;
        *d++ = '[';
        d = span_escaped_comm(d, c->comm);
        d = span_lit(d, " - ");
        d = span_u64(d, c->pid);
        d = span_lit(d, " - ");
        d = span_u64(d, c->tid);
        if (c->unit && c->unit[0]) {
                outbuf_span_end(b, d, CALL_LINE_ROOM);
                put_unit(b, c->unit);
                if (!(d = outbuf_span(b, CALL_LINE_ROOM)))
                        return;
        }
        d = span_lit(d, "] ");
        d = span_word(d, aio_syscall_word(c->syscall));
        *d++ = '(';
        d = span_args(d, c);
        d = span_lit(d, ") [retval = ");
        d = span_result(d, c->ret);
        *d++ = ']';
        if (c->enter_seen) {
                d = span_lit(d, " (");
                d = span_u64(d, c->exit_time - c->enter_time);
                d = span_lit(d, " ns)");
        } else
                d = span_lit(d, " (enter not seen)");
        outbuf_span_end(b, d, CALL_LINE_ROOM);
        call_text_tail(b, c);
        outbuf_putc(b, '\n');

        put_aux(b, c);
        switch (c->syscall) {
        case AIO_IO_SUBMIT:
                for (unsigned i = 0; i < c->n_items; i++)
                        put_iocb_line(b, (int) i, &c->iocbs[i]);
                put_truncated(b, c, "iocbs", max);
                break;
        case AIO_IO_CANCEL:
                if (c->cancel_iocb.state != MEM_NOT_READ)
                        put_iocb_line(b, -1, &c->cancel_iocb);
                for (unsigned i = 0; i < c->n_items; i++)
                        put_event(b, i, &c->events[i]);
                break;
        case AIO_IO_GETEVENTS:
        case AIO_IO_PGETEVENTS:
                for (unsigned i = 0; i < c->n_items; i++)
                        put_event(b, i, &c->events[i]);
                put_truncated(b, c, "events", max);
                break;
        default:
                break;
        }
}

static void format_stats(struct outbuf *b, const struct trace_stats *s) {
        const struct {
                const char *name;
                uint64_t value;
        } f[] = {
                { "records", s->records },         { "samples", s->samples },
                { "calls", s->calls },
                { "lost", s->lost },               { "stale", s->stale },
                { "unreadable", s->unreadable },   { "truncated", s->truncated },
                { "unpaired_enter", s->unpaired_enter }, { "unpaired_exit", s->unpaired_exit },
                { "unmatched", s->unmatched },     { "completed", s->completed },
                { "cancelled", s->cancelled },     { "abandoned", s->abandoned },
                { "unknown", s->unknown },         { "evicted", s->evicted },
                { "in_flight", s->in_flight },      { "stuck", s->stuck },
                { "bad_records", s->bad_records }, { "bad_bytes", s->bad_bytes },
                { "foreign", s->foreign },         { "duplicates", s->duplicates },
                { "no_memory", s->no_memory },     { "unselectable", s->unselectable },
                { "unidentified", s->unidentified }, { "summed_untracked", s->summed_untracked },
                { "ring_seen", s->ring_seen },       { "uring_submits", s->uring_submits },
                { "cq_overflows", s->cq_overflows },
                { "remote_reads", s->remote_reads }, { "skipped_reads", s->skipped_reads },
                { "captured", s->captured },
                { "bad_captures", s->bad_captures },
        };
        outbuf_puts(b, "[stats]");
        for (size_t i = 0; i < ELEMENTSOF(f); i++) {
                outbuf_puts(b, i ? ", " : " ");
                outbuf_puts(b, f[i].name);
                outbuf_puts(b, " = ");
                outbuf_u64(b, f[i].value);
        }
        outbuf_putc(b, '\n');
}

static void put_proc(struct outbuf *b, const char *comm, uint32_t pid, const char *unit) {
        outbuf_putc(b, '[');
        outbuf_escaped_str(b, comm);
        outbuf_puts(b, " - ");
        outbuf_u64(b, pid);
        if (unit && unit[0])
                put_unit(b, unit);
        outbuf_puts(b, "] ");
}

/* The most any of a request line's spans writes: the first has a comm, the last (the longest of the others) two
 * results, four pointers, four numbers and two signed ones. */
#define REQUEST_SPAN_ROOM (LINE_WORDS + SPAN_COMM + SPAN_RESULT + 4 * SPAN_PTR + 4 * SPAN_U64 + 2 * SPAN_S64)

/* "[comm - pid - unit] request kind (why): " */
static void put_request_head(struct outbuf *b, const struct request *r) {
        char *d = outbuf_span(b, REQUEST_SPAN_ROOM);
        if (!d)
                return;
        *d++ = '[';
        d = span_escaped_comm(d, r->comm);
        d = span_lit(d, " - ");
        d = span_u64(d, r->pid);
        outbuf_span_end(b, d, REQUEST_SPAN_ROOM);
        if (r->unit && r->unit[0])
                put_unit(b, r->unit);
        outbuf_puts(b, "] request ");
        const struct word *kind = request_kind_word(r->kind);
        outbuf_put(b, kind->s, kind->len);
        if (r->kind == REQ_STUCK)
                outbuf_puts(b, " (still in flight)");
        else if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_UNMATCHED ||
                 r->end == END_NO_CQE) {
                outbuf_puts(b, " (");
                outbuf_puts(b, request_end_name(r->end));
                outbuf_putc(b, ')');
        }
        outbuf_puts(b, ": ");
}

static void put_request_path(struct outbuf *b, const struct request *r) {
        outbuf_puts(b, ", path = ");
        if (r->path && (r->path_state == PATH_OK || r->path_state == PATH_UNVERIFIED)) {
                outbuf_escaped(b, r->path->s, r->path->len);
                if (r->path_state == PATH_UNVERIFIED)
                        outbuf_puts(b, " [unverified]");
        } else {
                outbuf_puts(b, "<unknown: ");
                outbuf_puts(b, path_state_name(r->path_state));
                outbuf_putc(b, '>');
        }
}

/* "op = pwrite, fd = 4, path = ..., offset = 0, nbytes = 4096, " */
static void put_request_submit(struct outbuf *b, const struct request *r) {
        char *d = outbuf_span(b, REQUEST_SPAN_ROOM);
        if (!d)
                return;
        const struct word *op = request_op_word(r);
        d = span_lit(d, "op = ");
        d = op ? span_word(d, op) : span_u64(d, r->opcode);
        if (!r->no_file && !r->iocb_changed) {
                d = r->fixed_file ? span_lit(d, ", fixed file = ") : span_lit(d, ", fd = ");
                d = r->fixed_file ? span_u64(d, r->fd) : span_s64(d, (int32_t) r->fd);
        }
        outbuf_span_end(b, d, REQUEST_SPAN_ROOM);
        if (r->path_state != PATH_NONE)
                put_request_path(b, r);
        if (!(d = outbuf_span(b, REQUEST_SPAN_ROOM)))
                return;
        if (!r->no_offset) {
                d = span_lit(d, ", offset = ");
                d = span_s64(d, r->offset);
        }
        d = span_lit(d, ", nbytes = ");
        if (r->nbytes_known)
                d = span_u64(d, r->nbytes);
        else
                *d++ = '?';
        outbuf_span_end(b, d, REQUEST_SPAN_ROOM);
        if (r->rw_flags || r->reqprio || r->flags)
                put_iocb_options(b, r->rw_flags, r->reqprio, r->flags);
        outbuf_puts(b, ", ");
}

/* "res = N, res2 = N, latency = N ns, ctx = ..., iocb = ..., data = ..., submitted by T, reaped by T" */
static void put_request_end(struct outbuf *b, const struct request *r) {
        char *d = outbuf_span(b, REQUEST_SPAN_ROOM);
        if (!d)
                return;
        if (r->has_result) {
                d = span_lit(d, "res = ");
                d = span_result(d, r->res);
                d = span_lit(d, ", res2 = ");
                d = span_s64(d, r->res2);
                d = span_lit(d, ", ");
        }
        /* with no CQE, when it ended is not known */
        if (r->submit_known && r->end_time >= r->submit_time && r->end != END_NO_CQE) {
                if (r->kind == REQ_COMPLETED || r->kind == REQ_CANCELLED) {
                        /* reaped in user space: from its submit to when its completion was first seen */
                        d = r->reaped_in_user_space ? span_lit(d, "latency at most ") : span_lit(d, "latency = ");
                        d = span_u64(d, r->end_time - r->submit_time);
                        d = span_lit(d, " ns, ");
                } else if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_STUCK) {
                        d = span_lit(d, "in flight for ");
                        d = span_u64(d, r->end_time - r->submit_time);
                        d = span_lit(d, " ns, ");
                }
        }
        bool uring = r->interface == REQ_IO_URING;
        d = uring ? span_lit(d, "io_uring ring = ") : span_lit(d, "ctx = ");
        d = span_ptr(d, r->ctx);
        d = uring ? span_lit(d, ", req = ") : span_lit(d, ", iocb = ");
        d = span_ptr(d, r->iocb);
        d = uring ? span_lit(d, ", user_data = ") : span_lit(d, ", data = ");
        d = span_ptr(d, r->data);
        if (r->kind == REQ_STALE) {
                d = span_lit(d, " [stale: completed with data ");
                d = span_ptr(d, r->event_data);
                *d++ = ']';
        }
        if (r->submit_known && r->submit_tid) {
                d = span_lit(d, ", submitted by ");
                d = span_u64(d, r->submit_tid);
        }
        if (r->reaped_in_user_space)
                d = span_lit(d, ", reaped in user space");
        else if (r->has_result) {
                d = span_lit(d, ", reaped by ");
                d = span_u64(d, r->reap_tid);
        }
        outbuf_span_end(b, d, REQUEST_SPAN_ROOM);
}

static void format_request(struct outbuf *b, const struct request *r) {
        put_request_head(b, r);
        if (r->submit_known)
                put_request_submit(b, r);
        put_request_end(b, r);
        /* io_uring's rarer ends */
        if (r->submit_failed)
                outbuf_puts(b, ", failed before its submit");
        if (r->iocb_changed)
                outbuf_puts(b, ", iocb changed during the call: the kernel's file, offset and bytes");
        if (r->cq_overflow)
                outbuf_puts(b, r->cq_overflow == CQ_OVERFLOW_KEPT ? ", completion kept in the CQ overflow list"
                                                                  : ", completion dropped by the kernel (CQ overflow)");
        request_text_tail(b, r);
        outbuf_putc(b, '\n');
}

static void put_by_op(struct outbuf *b, const char *name, const uint64_t *by_op) {
        uint64_t total = 0;
        for (unsigned i = 0; i < REQ_OPS; i++)
                total += by_op[i];
        outbuf_puts(b, name);
        outbuf_u64(b, total);
        if (!total)
                return;
        outbuf_puts(b, " (");
        bool first = true;
        for (unsigned i = 0; i < REQ_OPS; i++) {
                if (!by_op[i] || !request_op_index_name(i))
                        continue;
                if (!first)
                        outbuf_putc(b, ' ');
                first = false;
                outbuf_puts(b, request_op_index_name(i));
                outbuf_putc(b, ':');
                outbuf_u64(b, by_op[i]);
        }
        outbuf_putc(b, ')');
}

static void put_interval(struct outbuf *b, uint64_t ns, bool last, uint64_t records_lost) {
        outbuf_puts(b, "summary over ");
        outbuf_u64(b, ns / 1000000000u);
        outbuf_putc(b, '.');
        outbuf_frac9(b, ns);
        outbuf_puts(b, last ? " s (the last" : " s");
        if (records_lost) {
                outbuf_puts(b, last ? "; " : " (");
                outbuf_puts(b, "incomplete: ");
                outbuf_u64(b, records_lost);
                outbuf_puts(b, " records lost meanwhile)");
        } else if (last)
                outbuf_putc(b, ')');
        outbuf_puts(b, ": ");
}

struct text_count {
        const char *name;
        uint64_t v;
};

static void put_counts(struct outbuf *b, const struct text_count *c, size_t n) {
        for (size_t i = 0; i < n; i++) {
                outbuf_puts(b, c[i].name);
                outbuf_u64(b, c[i].v);
        }
}

/* How the requests of an interval ended: counts, then what is in flight (a process's: the caller's), then the
 * latency. */
static void put_ends(struct outbuf *b, const struct proc_interval *iv) {
        put_by_op(b, ", completed = ", iv->completed);
        const struct text_count c[] = {
                { ", errors = ", iv->errors },         { ", bytes_read = ", iv->bytes_read },
                { ", bytes_written = ", iv->bytes_written }, { ", cancelled = ", iv->cancelled },
                { ", abandoned = ", iv->abandoned },   { ", stale = ", iv->stale },
                { ", unmatched = ", iv->unmatched },   { ", unknown = ", iv->unknown },
        };
        put_counts(b, c, ELEMENTSOF(c));
}

static void put_latency(struct outbuf *b, const struct proc_interval *iv, const struct histogram *latency) {
        if (iv->reaped_in_user_space) {
                outbuf_puts(b, ", reaped_in_user_space = ");
                outbuf_u64(b, iv->reaped_in_user_space);
        }
        if (latency->count == 0)
                outbuf_puts(b, ", latency = none");
        else {
                static const char *const labels[SUMMARY_PERCENTILES] = { "p50", "p90", "p99", "p99.9" };
                outbuf_puts(b, ", latency (");
                outbuf_u64(b, latency->count);
                outbuf_puts(b, ")");
                for (unsigned i = 0; i < SUMMARY_PERCENTILES; i++) {
                        outbuf_puts(b, i ? ", " : " ");
                        outbuf_puts(b, labels[i]);
                        outbuf_puts(b, " = ");
                        outbuf_u64(b, histogram_percentile(latency, summary_percentiles[i]));
                }
                outbuf_puts(b, ", max = ");
                outbuf_u64(b, latency->max);
                outbuf_puts(b, " ns");
        }
}

static void format_summary(struct outbuf *b, const struct proc_summary *s) {
        const struct proc_interval *iv = s->iv;
        put_proc(b, s->comm, s->pid, s->unit);
        put_interval(b, s->end - s->start, s->last, s->records_lost);
        put_by_op(b, "submitted = ", iv->submitted);
        if (iv->submitted_io_uring) {
                outbuf_puts(b, " (io_uring: ");
                outbuf_u64(b, iv->submitted_io_uring);
                outbuf_putc(b, ')');
        }
        if (iv->cq_overflows) {
                outbuf_puts(b, ", cq_overflows = ");
                outbuf_u64(b, iv->cq_overflows);
        }
        put_ends(b, iv);
        const struct text_count c[] = { { ", in_flight = ", s->inflight }, { ", in_flight_max = ", iv->inflight_max } };
        put_counts(b, c, ELEMENTSOF(c));
        put_latency(b, iv, s->latency);
        summary_text_tail(b, s);
        outbuf_putc(b, '\n');
}

static void format_file_summary(struct outbuf *b, const struct file_summary *s) {
        outbuf_puts(b, "[file ");
        if (s->path)
                outbuf_escaped(b, s->path, s->path_len);
        else {
                outbuf_puts(b, "(other: ");
                outbuf_u64(b, s->other_files);
                outbuf_puts(b, " files, ");
                outbuf_u64(b, s->without_path);
                outbuf_puts(b, " requests without a path)");
        }
        outbuf_puts(b, "] ");
        put_interval(b, s->end - s->start, s->last, s->records_lost);
        outbuf_puts(b, "requests = ");
        outbuf_u64(b, s->requests);
        if (s->unverified) {
                outbuf_puts(b, " (");
                outbuf_u64(b, s->unverified);
                outbuf_puts(b, " by a path not checked)");
        }
        put_ends(b, s->iv);
        put_latency(b, s->iv, s->latency);
        file_summary_text_tail(b, s);
        outbuf_putc(b, '\n');
}

size_t format_text_message(struct outbuf *text, const struct entry *e, unsigned max_iocbs_per_call) {
        outbuf_reset(text);
        format_text(text, e, max_iocbs_per_call);
        size_t len = text->len;
        if (len && text->data[len - 1] == '\n')
                len--;
        return len;
}

void format_text(struct outbuf *b, const struct entry *e, unsigned max_iocbs_per_call) {
        switch (e->kind) {
        case ENTRY_CALL:
                format_call(b, e->call, max_iocbs_per_call);
                break;
        case ENTRY_LOST:
                outbuf_puts(b, "[lost] cpu ");
                outbuf_u64(b, e->cpu);
                outbuf_puts(b, ": ");
                outbuf_u64(b, e->lost);
                outbuf_puts(b, e->lost_unwritten ? " records lost (counted, never written to the ring)\n"
                                                 : " records lost (ring full)\n");
                break;
        case ENTRY_INFO:
                outbuf_puts(b, "[info] ");
                outbuf_puts(b, e->message);
                outbuf_putc(b, '\n');
                break;
        case ENTRY_STATS:
                format_stats(b, e->stats);
                break;
        case ENTRY_REQUEST:
                format_request(b, e->request);
                break;
        case ENTRY_SUMMARY:
                format_summary(b, e->summary);
                break;
        case ENTRY_FILE_SUMMARY:
                format_file_summary(b, e->file_summary);
                break;
        case ENTRY_DROPPED: {
                char name[16];
                outbuf_puts(b, "[dropped] ");
                outbuf_u64(b, e->dropped);
                outbuf_puts(b, " entries could not be written to ");
                outbuf_escaped_str(b, e->where);
                outbuf_puts(b, " (");
                outbuf_puts(b, errno_name(-e->error, name));
                outbuf_puts(b, ")\n");
                break;
        }
        }
}
