/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_fields.h"

#include <stdio.h>
#include <string.h>

#include "aio_decode.h"
#include "util.h"

const double summary_percentiles[SUMMARY_PERCENTILES] = { 50, 90, 99, 99.9 };
static const struct field_name percentile_names[SUMMARY_PERCENTILES] = {
        FIELD_NAME_INIT_LAID_OUT("LAT_P50_NSEC", "lat_p50_nsec"),
        FIELD_NAME_INIT_LAID_OUT("LAT_P90_NSEC", "lat_p90_nsec"),
        FIELD_NAME_INIT_LAID_OUT("LAT_P99_NSEC", "lat_p99_nsec"),
        FIELD_NAME_INIT_LAID_OUT("LAT_P999_NSEC", "lat_p999_nsec"),
};

/* Each list is written out where it is used, with its writer's ops apart from the writer: for the structured
 * formats their writer's, for the text tail a constant the compiler folds, so that there a field the text lays
 * out by hand costs nothing. */
#define FIELD_LIST _always_inline_

int request_priority(const struct request *r) {
        if (r->kind == REQ_STALE || r->kind == REQ_UNMATCHED || r->kind == REQ_UNKNOWN || r->kind == REQ_STUCK ||
            r->end == END_EVICTED || r->iocb_changed)
                return 4;
        if (r->path_state != PATH_NONE && r->path_state != PATH_OK)
                return 4;
        return 6;
}

/* What names a process after it is gone: its systemd unit and its cgroup, when it is in one (the root says
 * nothing); and its pid as its own pid namespace (a container's) has it, where that is another. */
static FIELD_LIST void put_process_fields(const struct field_writer *ops, struct field_writer *w,
                                          const char *unit, const char *cgroup, uint32_t ns_pid) {
        if (ns_pid)
                ops->u64(w, FIELD_NAME_LAID_OUT("NS_PID", "ns_pid"), ns_pid);
        if (unit && unit[0])
                ops->str(w, FIELD_NAME_LAID_OUT("UNIT", "unit"), unit, strlen(unit));
        if (cgroup && cgroup[0] && strcmp(cgroup, "/") != 0)
                ops->str(w, FIELD_NAME_LAID_OUT("CGROUP", "cgroup"), cgroup, strlen(cgroup));
}

/* A call's arguments, as the syscall table lists them (those the journal carries, with journal set). */
static FIELD_LIST void put_call_arg_fields(const struct field_writer *ops, struct field_writer *w,
                                           const struct aio_call *c, bool journal) {
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        for (unsigned i = 0; i < sd->n_args; i++) {
                const struct syscall_arg *a = &sd->args[i];
                if (journal && !a->in_journal)
                        continue;
                if (a->type == ARG_PTR)
                        ops->ptr(w, &a->name, c->args[i]);
                else if (a->type == ARG_U32)
                        ops->u64(w, &a->name, (uint32_t) c->args[i]);
                else
                        ops->s64(w, &a->name, (int64_t) c->args[i]);
        }
}

/* Who made a call, its result and how long it took. */
static FIELD_LIST void put_call_head_fields(const struct field_writer *ops, struct field_writer *w,
                                            const struct aio_call *c, bool journal) {
        static const struct field_name object_pid = { "OBJECT_PID=", "", sizeof("OBJECT_PID=") - 1, 0, true };
        const char *syscall = aio_syscall_name(c->syscall);
        if (journal)
                ops->u64(w, &object_pid, c->pid);
        else
                ops->word(w, FIELD_NAME_LAID_OUT("SYSCALL", "syscall"), syscall);
        ops->u64(w, FIELD_NAME_LAID_OUT("PID", "pid"), c->pid);
        ops->u64(w, FIELD_NAME_LAID_OUT("TID", "tid"), c->tid);
        ops->str(w, FIELD_NAME_LAID_OUT("COMM", "comm"), c->comm, strnlen(c->comm, sizeof(c->comm)));
        put_process_fields(ops, w, c->unit, c->cgroup, c->ns_pid);
        if (journal)
                ops->word(w, FIELD_NAME_LAID_OUT("SYSCALL", "syscall"), syscall);
        ops->s64(w, FIELD_NAME_LAID_OUT("RET", "ret"), c->ret);
        if (result_is_errno(c->ret)) {
                char name[16];
                ops->word(w, FIELD_NAME_LAID_OUT("ERRNO", "errno"), errno_name((int) -c->ret, name));
        }
        if (c->enter_seen)
                ops->u64(w, FIELD_NAME_LAID_OUT("DURATION_NSEC", "duration_nsec"), c->exit_time - c->enter_time);
        else if (!journal)
                ops->word(w, FIELD_NAME_LAID_OUT("ENTER", "enter"), "not seen");
}

/* Its arguments and what it read beyond them, from the syscall table, which the text draws from too. */
static FIELD_LIST void put_call_table_fields(const struct field_writer *ops, struct field_writer *w,
                                             const struct aio_call *c, bool journal) {
        if (!c->args_known)
                return;
        put_call_arg_fields(ops, w, c, journal);
        if (!call_aux_shown(c))
                return;
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        const struct syscall_aux_desc *aux = syscall_aux_desc(sd->aux);
        if (c->aux_state != MEM_OK) {
                if (!journal)
                        ops->word(w, &aux->state, mem_state_name(c->aux_state));
        } else if (sd->aux == AUX_CTX)
                ops->ptr(w, &aux->name, c->aux[0]);
        else
                ops->u64(w, &aux->name, c->aux[0] * 1000000000ull + c->aux[1]);
}

bool call_aux_shown(const struct aio_call *c) {
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        if (sd->aux == AUX_NONE || !c->args_known || !c->args[sd->aux_arg])
                return false;
        return sd->aux == AUX_TIMEOUT || c->aux_state != MEM_NOT_READ;
}

static FIELD_LIST void put_request_fields(const struct field_writer *ops, struct field_writer *w,
                                          const struct request *r) {
        ops->word(w, FIELD_NAME_LAID_OUT("REQUEST", "request"), request_kind_name(r->kind));
        if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_UNMATCHED || r->end == END_NO_CQE)
                ops->word(w, FIELD_NAME_LAID_OUT("END", "end"), request_end_name(r->end));
        ops->u64(w, FIELD_NAME_LAID_OUT("PID", "pid"), r->pid);
        ops->str(w, FIELD_NAME_LAID_OUT("COMM", "comm"), r->comm, strlen(r->comm));
        put_process_fields(ops, w, r->unit, r->cgroup, r->ns_pid);
        ops->word(w, FIELD_NAME_LAID_OUT("INTERFACE", "interface"),
                  r->interface == REQ_IO_URING ? "io_uring" : "aio");
        ops->ptr(w, FIELD_NAME_LAID_OUT("CTX", "ctx"), r->ctx);
        ops->ptr(w, FIELD_NAME_LAID_OUT("IOCB", "iocb"), r->iocb);
        ops->ptr(w, FIELD_NAME_LAID_OUT("DATA", "data"), r->data);
        if (r->kind == REQ_STALE)
                ops->ptr(w, FIELD_NAME_LAID_OUT("EVENT_DATA", "event_data"), r->event_data);
        if (r->submit_known) {
                const struct word *op = request_op_word(r);
                if (op)
                        ops->word(w, FIELD_NAME_LAID_OUT("OP", "op"), op->s);
                else
                        ops->u64(w, FIELD_NAME_LAID_OUT("OP", "op"), r->opcode);
                bool fd_known = !r->no_file && !r->iocb_changed;
                if (fd_known && r->fixed_file)
                        ops->u64(w, FIELD_NAME_LAID_OUT("FD", "fd"), r->fd);
                else if (fd_known) /* as the program wrote it: -1 is not 4294967295 */
                        ops->s64(w, FIELD_NAME_LAID_OUT("FD", "fd"), (int32_t) r->fd);
                if (r->iocb_changed)
                        ops->word(w, FIELD_NAME_LAID_OUT("IOCB_CHANGED", "iocb_changed"), "yes");
                if (r->fixed_file)
                        ops->word(w, FIELD_NAME_LAID_OUT("FIXED_FILE", "fixed_file"), "yes");
                if (r->submit_failed)
                        ops->word(w, FIELD_NAME_LAID_OUT("SUBMIT_FAILED", "submit_failed"), "yes");
                if (r->path && (r->path_state == PATH_OK || r->path_state == PATH_UNVERIFIED))
                        ops->str(w, FIELD_NAME_LAID_OUT("PATH", "path"), r->path->s, r->path->len);
                if (r->path_state != PATH_OK && r->path_state != PATH_NONE)
                        ops->word(w, FIELD_NAME_LAID_OUT("PATH_STATE", "path_state"), path_state_name(r->path_state));
                if (!r->no_offset)
                        ops->s64(w, FIELD_NAME_LAID_OUT("OFFSET", "offset"), r->offset);
                if (r->nbytes_known)
                        ops->u64(w, FIELD_NAME_LAID_OUT("NBYTES", "nbytes"), r->nbytes);
                if (r->rw_flags)
                        ops->ptr(w, FIELD_NAME_LAID_OUT("RW_FLAGS", "rw_flags"), (uint32_t) r->rw_flags);
                if (r->flags)
                        ops->ptr(w, FIELD_NAME_LAID_OUT("FLAGS", "flags"), r->flags);
                if (r->reqprio)
                        ops->s64(w, FIELD_NAME_LAID_OUT("REQPRIO", "reqprio"), r->reqprio);
                if (r->submit_tid) /* 0: not known (summed in the kernel) */
                        ops->u64(w, FIELD_NAME_LAID_OUT("SUBMIT_TID", "submit_tid"), r->submit_tid);
                ops->u64(w, FIELD_NAME_LAID_OUT("SUBMIT_NSEC", "submit_nsec"), r->submit_time);
        }
        if (r->has_result) {
                ops->s64(w, FIELD_NAME_LAID_OUT("RES", "res"), r->res);
                if (result_is_errno(r->res)) {
                        char name[16];
                        ops->word(w, FIELD_NAME_LAID_OUT("ERRNO", "errno"), errno_name((int) -r->res, name));
                }
                ops->s64(w, FIELD_NAME_LAID_OUT("RES2", "res2"), r->res2);
                if (r->cq_overflow)
                        ops->word(w, FIELD_NAME_LAID_OUT("CQ_OVERFLOW", "cq_overflow"),
                                r->cq_overflow == CQ_OVERFLOW_KEPT ? "kept" : "dropped");
                if (r->reaped_in_user_space)
                        ops->word(w, FIELD_NAME_LAID_OUT("REAPED", "reaped"), "user-space");
                else
                        ops->u64(w, FIELD_NAME_LAID_OUT("REAP_TID", "reap_tid"), r->reap_tid);
        }
        if (r->async) /* how the kernel ran it: in an io-wq worker, once its file was ready, or both */
                ops->word(w, FIELD_NAME("ASYNC", "async"),
                          r->async == REQ_ASYNC_IO_WQ ? "io-wq" : r->async == REQ_ASYNC_POLL ? "poll" : "poll,io-wq");
        if (r->submit_known && r->end_time >= r->submit_time && r->end != END_NO_CQE) {
                /* reaped in user space: submit to when the completion was first seen, a bound */
                if (r->reaped_in_user_space)
                        ops->u64(w, FIELD_NAME_LAID_OUT("LATENCY_AT_MOST_NSEC", "latency_at_most_nsec"),
                               r->end_time - r->submit_time);
                else if (r->kind == REQ_COMPLETED || r->kind == REQ_CANCELLED)
                        ops->u64(w, FIELD_NAME_LAID_OUT("LATENCY_NSEC", "latency_nsec"),
                                 r->end_time - r->submit_time);
                else if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_STUCK)
                        ops->u64(w, FIELD_NAME_LAID_OUT("INFLIGHT_NSEC", "inflight_nsec"),
                                 r->end_time - r->submit_time);
        }
}

static uint64_t sum_ops(const uint64_t *by_op) {
        uint64_t n = 0;
        for (unsigned i = 0; i < REQ_OPS; i++)
                n += by_op[i];
        return n;
}

/* prefix_<op> for each op seen: its names made here (a summary is rare) */
static FIELD_LIST void per_op(const struct field_writer *ops, struct field_writer *w,
                              const char *prefix, const uint64_t *by_op) {
        for (unsigned i = 0; i < REQ_OPS; i++) {
                const char *op = request_op_index_name(i);
                if (!op || !by_op[i])
                        continue;
                char stem[24];
                snprintf(stem, sizeof(stem), "%s_%s", prefix, op);
                size_t n = strlen(stem);
                struct field_name name = { .journal = "AIO_", .journal_len = (uint8_t) (n + 5),
                                           .json_len = (uint8_t) (n + 4), .text_laid_out = true };
                for (size_t k = 0; k < n; k++)
                        name.journal[4 + k] = stem[k] >= 'a' && stem[k] <= 'z' ? (char) (stem[k] - 'a' + 'A') : stem[k];
                name.journal[4 + n] = '=';
                snprintf(name.json, sizeof(name.json), ",\"%s\":", stem);
                ops->u64(w, &name, by_op[i]);
        }
}

/* How the requests that ended in an interval ended: a process's, a file's. */
static FIELD_LIST void end_fields(const struct field_writer *ops, struct field_writer *w,
                                  const struct proc_interval *iv) {
        ops->u64(w, FIELD_NAME_LAID_OUT("COMPLETED", "completed"), sum_ops(iv->completed));
        per_op(ops, w, "completed", iv->completed);
        ops->u64(w, FIELD_NAME_LAID_OUT("BYTES_READ", "bytes_read"), iv->bytes_read);
        ops->u64(w, FIELD_NAME_LAID_OUT("BYTES_WRITTEN", "bytes_written"), iv->bytes_written);
        ops->u64(w, FIELD_NAME_LAID_OUT("ERRORS", "errors"), iv->errors);
        ops->u64(w, FIELD_NAME_LAID_OUT("CANCELLED", "cancelled"), iv->cancelled);
        ops->u64(w, FIELD_NAME_LAID_OUT("ABANDONED", "abandoned"), iv->abandoned);
        if (iv->stale)
                ops->u64(w, FIELD_NAME_LAID_OUT("STALE", "stale"), iv->stale);
        if (iv->unmatched)
                ops->u64(w, FIELD_NAME_LAID_OUT("UNMATCHED", "unmatched"), iv->unmatched);
        if (iv->unknown)
                ops->u64(w, FIELD_NAME_LAID_OUT("UNKNOWN", "unknown"), iv->unknown);
        if (iv->reaped_in_user_space)
                ops->u64(w, FIELD_NAME_LAID_OUT("REAPED_IN_USER_SPACE", "reaped_in_user_space"),
                         iv->reaped_in_user_space);
}

static FIELD_LIST void latency_fields(const struct field_writer *ops, struct field_writer *w,
                                      const struct histogram *latency) {
        ops->u64(w, FIELD_NAME_LAID_OUT("LAT_SAMPLES", "lat_samples"), latency->count);
        if (latency->count) {
                for (unsigned i = 0; i < SUMMARY_PERCENTILES; i++)
                        ops->u64(w, &percentile_names[i], histogram_percentile(latency, summary_percentiles[i]));
                ops->u64(w, FIELD_NAME_LAID_OUT("LAT_MAX_NSEC", "lat_max_nsec"), latency->max);
        }
}

static FIELD_LIST void interval_tail_fields(const struct field_writer *ops, struct field_writer *w,
                                            bool last, uint64_t records_lost) {
        if (last)
                ops->word(w, FIELD_NAME_LAID_OUT("SUMMARY_LAST", "summary_last"), "yes");
        if (records_lost)
                ops->u64(w, FIELD_NAME_LAID_OUT("RECORDS_LOST", "records_lost"), records_lost);
}

static FIELD_LIST void put_summary_fields(const struct field_writer *ops, struct field_writer *w,
                                          const struct proc_summary *s) {
        const struct proc_interval *iv = s->iv;
        ops->u64(w, FIELD_NAME_LAID_OUT("PID", "pid"), s->pid);
        ops->str(w, FIELD_NAME_LAID_OUT("COMM", "comm"), s->comm, strlen(s->comm));
        put_process_fields(ops, w, s->unit, s->cgroup, s->ns_pid);
        ops->u64(w, FIELD_NAME_LAID_OUT("SUMMARY_INTERVAL_NSEC", "summary_interval_nsec"), s->end - s->start);
        ops->u64(w, FIELD_NAME_LAID_OUT("SUBMITTED", "submitted"), sum_ops(iv->submitted));
        per_op(ops, w, "submitted", iv->submitted);
        if (iv->submitted_io_uring)
                ops->u64(w, FIELD_NAME_LAID_OUT("SUBMITTED_IO_URING", "submitted_io_uring"), iv->submitted_io_uring);
        if (iv->cq_overflows)
                ops->u64(w, FIELD_NAME_LAID_OUT("CQ_OVERFLOWS", "cq_overflows"), iv->cq_overflows);
        uint64_t punted = sum_ops(iv->punted);
        if (punted) {
                ops->u64(w, FIELD_NAME("PUNTED", "punted"), punted);
                per_op(ops, w, "punted", iv->punted);
        }
        if (iv->polled)
                ops->u64(w, FIELD_NAME("POLLED", "polled"), iv->polled);
        end_fields(ops, w, iv);
        ops->u64(w, FIELD_NAME_LAID_OUT("INFLIGHT", "inflight"), s->inflight);
        ops->u64(w, FIELD_NAME_LAID_OUT("INFLIGHT_MAX", "inflight_max"), iv->inflight_max);
        latency_fields(ops, w, s->latency);
        interval_tail_fields(ops, w, s->last, s->records_lost);
}

static FIELD_LIST void put_file_summary_fields(const struct field_writer *ops, struct field_writer *w,
                                               const struct file_summary *s) {
        if (s->path)
                ops->str(w, FIELD_NAME_LAID_OUT("FILE", "file"), s->path, s->path_len);
        else {
                ops->u64(w, FIELD_NAME_LAID_OUT("OTHER_FILES", "other_files"), s->other_files);
                ops->u64(w, FIELD_NAME_LAID_OUT("WITHOUT_PATH", "without_path"), s->without_path);
        }
        ops->u64(w, FIELD_NAME_LAID_OUT("SUMMARY_INTERVAL_NSEC", "summary_interval_nsec"), s->end - s->start);
        ops->u64(w, FIELD_NAME_LAID_OUT("REQUESTS", "requests"), s->requests);
        if (s->unverified)
                ops->u64(w, FIELD_NAME_LAID_OUT("PATH_UNVERIFIED", "path_unverified"), s->unverified);
        end_fields(ops, w, s->iv);
        latency_fields(ops, w, s->latency);
        interval_tail_fields(ops, w, s->last, s->records_lost);
}

void call_fields(struct field_writer *w, const struct aio_call *c, bool journal) {
        put_call_head_fields(w, w, c, journal);
        put_call_table_fields(w, w, c, journal);
}

void request_fields(struct field_writer *w, const struct request *r) {
        put_request_fields(w, w, r);
}

void summary_fields(struct field_writer *w, const struct proc_summary *s) {
        put_summary_fields(w, w, s);
}

void file_summary_fields(struct field_writer *w, const struct file_summary *s) {
        put_file_summary_fields(w, w, s);
}

/* The text tail: ", name = value" for each field the text layout does not lay out, its name JSON's. */
static FIELD_LIST bool tail_name(struct field_writer *w, const struct field_name *name) {
        if (name->text_laid_out)
                return false;
        struct outbuf *b = ((struct text_tail *) w)->b;
        outbuf_puts(b, ", ");
        outbuf_put(b, name->json + 2, name->json_len - 4u); /* ,"name": */
        outbuf_puts(b, " = ");
        return true;
}

static FIELD_LIST void tail_str(struct field_writer *w, const struct field_name *name, const char *v, size_t len) {
        if (tail_name(w, name))
                outbuf_escaped(((struct text_tail *) w)->b, v, len);
}

static FIELD_LIST void tail_word(struct field_writer *w, const struct field_name *name, const char *v) {
        if (tail_name(w, name))
                outbuf_puts(((struct text_tail *) w)->b, v);
}

static FIELD_LIST void tail_u64(struct field_writer *w, const struct field_name *name, uint64_t v) {
        if (tail_name(w, name))
                outbuf_u64(((struct text_tail *) w)->b, v);
}

static FIELD_LIST void tail_s64(struct field_writer *w, const struct field_name *name, int64_t v) {
        if (tail_name(w, name))
                outbuf_s64(((struct text_tail *) w)->b, v);
}

static FIELD_LIST void tail_ptr(struct field_writer *w, const struct field_name *name, uint64_t v) {
        if (tail_name(w, name))
                outbuf_ptr(((struct text_tail *) w)->b, v);
}

/* Passed to the lists as their ops, apart from the writer: a constant the compiler folds, writer and all. */
static const struct field_writer text_tail_ops = {
        .str = tail_str, .word = tail_word, .u64 = tail_u64, .s64 = tail_s64, .ptr = tail_ptr
};
#define TEXT_TAIL(buf) { .w = text_tail_ops, .b = (buf) }

void text_tail_init(struct text_tail *t, struct outbuf *b) {
        *t = (struct text_tail) TEXT_TAIL(b);
}

void call_text_tail(struct outbuf *b, const struct aio_call *c) {
        struct text_tail t = TEXT_TAIL(b);
        put_call_head_fields(&text_tail_ops, &t.w, c, false);
}

void request_text_tail(struct outbuf *b, const struct request *r) {
        struct text_tail t = TEXT_TAIL(b);
        put_request_fields(&text_tail_ops, &t.w, r);
}

void summary_text_tail(struct outbuf *b, const struct proc_summary *s) {
        struct text_tail t = TEXT_TAIL(b);
        put_summary_fields(&text_tail_ops, &t.w, s);
}

void file_summary_text_tail(struct outbuf *b, const struct file_summary *s) {
        struct text_tail t = TEXT_TAIL(b);
        put_file_summary_fields(&text_tail_ops, &t.w, s);
}
