/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_text.h"

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

static void put_iocb_fields(struct outbuf *b, const struct iocb_info *cb) {
        const char *op = iocb_opcode_name(cb->opcode);
        outbuf_puts(b, "op = ");
        if (op)
                outbuf_puts(b, op);
        else {
                outbuf_u64(b, cb->opcode);
                outbuf_puts(b, " (unknown)");
        }
        outbuf_puts(b, ", fd = ");
        outbuf_u64(b, cb->fd);
        outbuf_puts(b, ", data = ");
        outbuf_ptr(b, cb->data);
        outbuf_puts(b, ", buf = ");
        outbuf_ptr(b, cb->buf);
        outbuf_puts(b, ", nbytes = ");
        outbuf_u64(b, cb->nbytes);
        outbuf_puts(b, ", offset = ");
        outbuf_s64(b, cb->offset);
        if (iocb_is_vectored(cb)) {
                outbuf_puts(b, ", iov_total = ");
                if (cb->iov_state == MEM_OK || cb->iov_state == MEM_STALE) {
                        outbuf_u64(b, cb->iov_total);
                        put_stale(b, cb->iov_state);
                } else
                        put_state(b, cb->iov_state);
        }
        put_iocb_options(b, cb->rw_flags, cb->reqprio, cb->flags);
        if (cb->flags & 1 /* IOCB_FLAG_RESFD */) {
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
        if (index >= 0) {
                outbuf_puts(b, "    iocb[");
                outbuf_u64_width(b, (unsigned) index, 4);
                outbuf_puts(b, "] = ");
        } else
                outbuf_puts(b, "    iocb = ");
        if (cb->addr_state != MEM_OK && cb->addr_state != MEM_STALE) {
                put_state(b, cb->addr_state);
                outbuf_putc(b, '\n');
                return;
        }
        outbuf_ptr(b, cb->addr);
        outbuf_puts(b, ", ");
        if (cb->state == MEM_OK || cb->state == MEM_STALE) {
                put_iocb_fields(b, cb);
                put_stale(b, cb->state == MEM_STALE ? MEM_STALE : cb->addr_state);
        } else
                put_state(b, cb->state);
        outbuf_putc(b, '\n');
}

static void put_event(struct outbuf *b, unsigned i, const struct event_info *ev) {
        outbuf_puts(b, "    event[");
        outbuf_u64_width(b, i, 4);
        outbuf_puts(b, "] = ");
        outbuf_ptr(b, ev->addr);
        if (ev->state != MEM_OK && ev->state != MEM_STALE) {
                outbuf_puts(b, ", ");
                put_state(b, ev->state);
                outbuf_putc(b, '\n');
                return;
        }
        outbuf_puts(b, "\n      iocb = ");
        outbuf_ptr(b, ev->obj);
        outbuf_puts(b, ", fd = ");
        if (ev->fd >= 0)
                outbuf_u64(b, (uint64_t) ev->fd);
        else
                outbuf_putc(b, '?');
        outbuf_puts(b, ", data = ");
        outbuf_ptr(b, ev->data);
        outbuf_puts(b, ", res = ");
        format_result(b, ev->res);
        outbuf_puts(b, ", res2 = ");
        outbuf_s64(b, ev->res2);
        if (ev->data_mismatch) {
                outbuf_puts(b, " [stale: submitted with data ");
                outbuf_ptr(b, ev->expected_data);
                outbuf_putc(b, ']');
        } else
                put_stale(b, ev->state);
        outbuf_putc(b, '\n');
}

static void put_truncated(struct outbuf *b, const struct aio_call *c, const char *what, unsigned max) {
        if (c->n_wanted <= c->n_items || !c->enter_seen)
                return;
        outbuf_puts(b, "    ... ");
        outbuf_u64(b, c->n_wanted - c->n_items);
        outbuf_puts(b, " more ");
        outbuf_puts(b, what);
        outbuf_puts(b, " not read (max_iocbs_per_call = ");
        outbuf_u64(b, max);
        outbuf_puts(b, ")\n");
}

static void put_args(struct outbuf *b, const struct aio_call *c) {
        if (!c->enter_seen) {
                outbuf_putc(b, '?');
                return;
        }
        const uint64_t *a = c->args;
        switch (c->syscall) {
        case AIO_IO_SETUP:
                outbuf_u64(b, (uint32_t) a[0]);
                outbuf_puts(b, ", ");
                outbuf_ptr(b, a[1]);
                break;
        case AIO_IO_DESTROY:
                outbuf_ptr(b, a[0]);
                break;
        case AIO_IO_SUBMIT:
                outbuf_ptr(b, a[0]);
                outbuf_puts(b, ", ");
                outbuf_s64(b, (int64_t) a[1]);
                outbuf_puts(b, ", ");
                outbuf_ptr(b, a[2]);
                break;
        case AIO_IO_CANCEL:
                outbuf_ptr(b, a[0]);
                outbuf_puts(b, ", ");
                outbuf_ptr(b, a[1]);
                outbuf_puts(b, ", ");
                outbuf_ptr(b, a[2]);
                break;
        case AIO_IO_GETEVENTS:
        case AIO_IO_PGETEVENTS:
                outbuf_ptr(b, a[0]);
                outbuf_puts(b, ", ");
                outbuf_s64(b, (int64_t) a[1]);
                outbuf_puts(b, ", ");
                outbuf_s64(b, (int64_t) a[2]);
                outbuf_puts(b, ", ");
                outbuf_ptr(b, a[3]);
                outbuf_puts(b, ", ");
                outbuf_ptr(b, a[4]);
                if (c->syscall == AIO_IO_PGETEVENTS) {
                        outbuf_puts(b, ", ");
                        outbuf_ptr(b, a[5]);
                }
                break;
        default:
                break;
        }
}

static void format_call(struct outbuf *b, const struct aio_call *c, unsigned max) {
        outbuf_putc(b, '[');
        outbuf_escaped_str(b, c->comm);
        outbuf_puts(b, " - ");
        outbuf_u64(b, c->pid);
        outbuf_puts(b, " - ");
        outbuf_u64(b, c->tid);
        outbuf_puts(b, "] ");
        outbuf_puts(b, aio_syscall_name(c->syscall));
        outbuf_putc(b, '(');
        put_args(b, c);
        outbuf_puts(b, ") [retval = ");
        format_result(b, c->ret);
        outbuf_putc(b, ']');
        if (c->enter_seen) {
                outbuf_puts(b, " (");
                outbuf_u64(b, c->exit_time - c->enter_time);
                outbuf_puts(b, " ns)\n");
        } else
                outbuf_puts(b, " (enter not seen)\n");

        switch (c->syscall) {
        case AIO_IO_SETUP:
                if (c->aux_state == MEM_NOT_READ)
                        break;
                outbuf_puts(b, "    ctx = ");
                if (c->aux_state == MEM_OK || c->aux_state == MEM_STALE) {
                        outbuf_ptr(b, c->aux[0]);
                        put_stale(b, c->aux_state);
                } else
                        put_state(b, c->aux_state);
                outbuf_putc(b, '\n');
                break;
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
                if (c->enter_seen && c->args[4]) {
                        outbuf_puts(b, "    timeout = ");
                        if (c->aux_state == MEM_OK || c->aux_state == MEM_STALE) {
                                outbuf_s64(b, (int64_t) c->aux[0]);
                                outbuf_putc(b, '.');
                                /* nanoseconds, zero-padded to 9 digits */
                                char ns[10];
                                uint64_t v = c->aux[1];
                                for (int k = 8; k >= 0; k--, v /= 10)
                                        ns[k] = (char) ('0' + v % 10);
                                outbuf_put(b, ns, 9);
                                put_stale(b, c->aux_state);
                        } else
                                put_state(b, c->aux_state);
                        outbuf_putc(b, '\n');
                }
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
                { "in_flight", s->in_flight },
                { "bad_records", s->bad_records }, { "duplicates", s->duplicates },
                { "no_memory", s->no_memory },
                { "remote_reads", s->remote_reads }, { "captured", s->captured },
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

static void put_proc(struct outbuf *b, const char *comm, uint32_t pid) {
        outbuf_putc(b, '[');
        outbuf_escaped_str(b, comm);
        outbuf_puts(b, " - ");
        outbuf_u64(b, pid);
        outbuf_puts(b, "] ");
}

static void put_ns(struct outbuf *b, const char *name, uint64_t ns) {
        outbuf_puts(b, name);
        outbuf_u64(b, ns);
        outbuf_puts(b, " ns");
}

static void format_request(struct outbuf *b, const struct request *r) {
        put_proc(b, r->comm, r->pid);
        outbuf_puts(b, "request ");
        outbuf_puts(b, request_kind_name(r->kind));
        if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_UNMATCHED) {
                outbuf_puts(b, " (");
                outbuf_puts(b, request_end_name(r->end));
                outbuf_putc(b, ')');
        }
        outbuf_puts(b, ": ");
        if (r->submit_known) {
                const char *op = iocb_opcode_name(r->opcode);
                outbuf_puts(b, "op = ");
                if (op)
                        outbuf_puts(b, op);
                else
                        outbuf_u64(b, r->opcode);
                outbuf_puts(b, ", fd = ");
                outbuf_u64(b, r->fd);
                if (r->path_state != PATH_NONE) {
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
                outbuf_puts(b, ", offset = ");
                outbuf_s64(b, r->offset);
                outbuf_puts(b, ", nbytes = ");
                if (r->nbytes_known)
                        outbuf_u64(b, r->nbytes);
                else
                        outbuf_putc(b, '?');
                put_iocb_options(b, r->rw_flags, r->reqprio, r->flags);
                outbuf_puts(b, ", ");
        }
        if (r->has_result) {
                outbuf_puts(b, "res = ");
                format_result(b, r->res);
                outbuf_puts(b, ", res2 = ");
                outbuf_s64(b, r->res2);
                outbuf_puts(b, ", ");
        }
        if (r->submit_known && r->end_time >= r->submit_time) {
                if (r->kind == REQ_COMPLETED || r->kind == REQ_CANCELLED) {
                        put_ns(b, "latency = ", r->end_time - r->submit_time);
                        outbuf_puts(b, ", ");
                } else if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN) {
                        put_ns(b, "in flight for ", r->end_time - r->submit_time);
                        outbuf_puts(b, ", ");
                }
        }
        outbuf_puts(b, "ctx = ");
        outbuf_ptr(b, r->ctx);
        outbuf_puts(b, ", iocb = ");
        outbuf_ptr(b, r->iocb);
        outbuf_puts(b, ", data = ");
        outbuf_ptr(b, r->data);
        if (r->kind == REQ_STALE) {
                outbuf_puts(b, " [stale: completed with data ");
                outbuf_ptr(b, r->event_data);
                outbuf_putc(b, ']');
        }
        if (r->submit_known) {
                outbuf_puts(b, ", submitted by ");
                outbuf_u64(b, r->submit_tid);
        }
        if (r->has_result) {
                outbuf_puts(b, ", reaped by ");
                outbuf_u64(b, r->reap_tid);
        }
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

static void format_summary(struct outbuf *b, const struct proc_summary *s) {
        const struct proc_interval *iv = s->iv;
        put_proc(b, s->comm, s->pid);
        outbuf_puts(b, "summary over ");
        uint64_t ns = s->end - s->start;
        outbuf_u64(b, ns / 1000000000u);
        outbuf_putc(b, '.');
        char frac[10];
        uint64_t f = ns % 1000000000u;
        for (int k = 8; k >= 0; k--, f /= 10)
                frac[k] = (char) ('0' + f % 10);
        outbuf_put(b, frac, 9);
        outbuf_puts(b, s->last ? " s (the last): " : " s: ");
        put_by_op(b, "submitted = ", iv->submitted);
        put_by_op(b, ", completed = ", iv->completed);
        const struct {
                const char *name;
                uint64_t v;
        } f2[] = {
                { ", errors = ", iv->errors },         { ", bytes_read = ", iv->bytes_read },
                { ", bytes_written = ", iv->bytes_written }, { ", cancelled = ", iv->cancelled },
                { ", abandoned = ", iv->abandoned },   { ", stale = ", iv->stale },
                { ", unmatched = ", iv->unmatched },   { ", unknown = ", iv->unknown },
                { ", in_flight = ", s->inflight },     { ", in_flight_max = ", iv->inflight_max },
        };
        for (size_t i = 0; i < ELEMENTSOF(f2); i++) {
                outbuf_puts(b, f2[i].name);
                outbuf_u64(b, f2[i].v);
        }
        if (s->latency->count == 0)
                outbuf_puts(b, ", latency = none");
        else {
                static const char *const labels[SUMMARY_PERCENTILES] = { "p50", "p90", "p99", "p99.9" };
                outbuf_puts(b, ", latency (");
                outbuf_u64(b, s->latency->count);
                outbuf_puts(b, ")");
                for (unsigned i = 0; i < SUMMARY_PERCENTILES; i++) {
                        outbuf_puts(b, i ? ", " : " ");
                        outbuf_puts(b, labels[i]);
                        outbuf_puts(b, " = ");
                        outbuf_u64(b, histogram_percentile(s->latency, summary_percentiles[i]));
                }
                outbuf_puts(b, ", max = ");
                outbuf_u64(b, s->latency->max);
                outbuf_puts(b, " ns");
        }
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
                outbuf_puts(b, " records lost (ring full)\n");
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
        }
}
