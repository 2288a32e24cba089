/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_fields.h"

#include <stdio.h>
#include <string.h>

#include "aio_decode.h"
#include "util.h"

const double summary_percentiles[SUMMARY_PERCENTILES] = { 50, 90, 99, 99.9 };
static const struct field_name percentile_names[SUMMARY_PERCENTILES] = {
        FIELD_NAME_INIT("LAT_P50_NSEC", "lat_p50_nsec"), FIELD_NAME_INIT("LAT_P90_NSEC", "lat_p90_nsec"),
        FIELD_NAME_INIT("LAT_P99_NSEC", "lat_p99_nsec"), FIELD_NAME_INIT("LAT_P999_NSEC", "lat_p999_nsec"),
};

int request_priority(const struct request *r) {
        if (r->kind == REQ_STALE || r->kind == REQ_UNMATCHED || r->kind == REQ_UNKNOWN || r->end == END_EVICTED ||
            r->iocb_changed)
                return 4;
        if (r->path_state != PATH_NONE && r->path_state != PATH_OK)
                return 4;
        return 6;
}

void call_arg_fields(struct field_writer *w, const struct aio_call *c, bool journal) {
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        for (unsigned i = 0; i < sd->n_args; i++) {
                const struct syscall_arg *a = &sd->args[i];
                if (journal && !a->in_journal)
                        continue;
                if (a->type == ARG_PTR)
                        w->ptr(w, &a->name, c->args[i]);
                else if (a->type == ARG_U32)
                        w->u64(w, &a->name, (uint32_t) c->args[i]);
                else
                        w->s64(w, &a->name, (int64_t) c->args[i]);
        }
}

void call_fields(struct field_writer *w, const struct aio_call *c, bool journal) {
        static const struct field_name object_pid = { "OBJECT_PID=", "", sizeof("OBJECT_PID=") - 1, 0 };
        const char *syscall = aio_syscall_name(c->syscall);
        if (journal)
                w->u64(w, &object_pid, c->pid);
        else
                w->word(w, FIELD_NAME("SYSCALL", "syscall"), syscall);
        w->u64(w, FIELD_NAME("PID", "pid"), c->pid);
        w->u64(w, FIELD_NAME("TID", "tid"), c->tid);
        w->str(w, FIELD_NAME("COMM", "comm"), c->comm, strnlen(c->comm, sizeof(c->comm)));
        process_fields(w, c->unit, c->cgroup, c->ns_pid);
        if (journal)
                w->word(w, FIELD_NAME("SYSCALL", "syscall"), syscall);
        w->s64(w, FIELD_NAME("RET", "ret"), c->ret);
        if (result_is_errno(c->ret)) {
                char name[16];
                w->word(w, FIELD_NAME("ERRNO", "errno"), errno_name((int) -c->ret, name));
        }
        if (c->enter_seen)
                w->u64(w, FIELD_NAME("DURATION_NSEC", "duration_nsec"), c->exit_time - c->enter_time);
        else if (!journal)
                w->word(w, FIELD_NAME("ENTER", "enter"), "not seen");
        if (!c->args_known)
                return;
        call_arg_fields(w, c, journal);
        if (!call_aux_shown(c))
                return;
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        const struct syscall_aux_desc *aux = syscall_aux_desc(sd->aux);
        if (c->aux_state != MEM_OK) {
                if (!journal)
                        w->word(w, &aux->state, mem_state_name(c->aux_state));
        } else if (sd->aux == AUX_CTX)
                w->ptr(w, &aux->name, c->aux[0]);
        else
                w->u64(w, &aux->name, c->aux[0] * 1000000000ull + c->aux[1]);
}

bool call_aux_shown(const struct aio_call *c) {
        const struct syscall_desc *sd = syscall_desc(c->syscall);
        if (sd->aux == AUX_NONE || !c->args_known || !c->args[sd->aux_arg])
                return false;
        return sd->aux == AUX_TIMEOUT || c->aux_state != MEM_NOT_READ;
}

void process_fields(struct field_writer *w, const char *unit, const char *cgroup, uint32_t ns_pid) {
        if (ns_pid)
                w->u64(w, FIELD_NAME("NS_PID", "ns_pid"), ns_pid);
        if (unit && unit[0])
                w->str(w, FIELD_NAME("UNIT", "unit"), unit, strlen(unit));
        if (cgroup && cgroup[0] && strcmp(cgroup, "/") != 0)
                w->str(w, FIELD_NAME("CGROUP", "cgroup"), cgroup, strlen(cgroup));
}

void request_fields(struct field_writer *w, const struct request *r) {
        w->word(w, FIELD_NAME("REQUEST", "request"), request_kind_name(r->kind));
        if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_UNMATCHED || r->end == END_NO_CQE)
                w->word(w, FIELD_NAME("END", "end"), request_end_name(r->end));
        w->u64(w, FIELD_NAME("PID", "pid"), r->pid);
        w->str(w, FIELD_NAME("COMM", "comm"), r->comm, strlen(r->comm));
        process_fields(w, r->unit, r->cgroup, r->ns_pid);
        w->word(w, FIELD_NAME("INTERFACE", "interface"), r->interface == REQ_IO_URING ? "io_uring" : "aio");
        w->ptr(w, FIELD_NAME("CTX", "ctx"), r->ctx);
        w->ptr(w, FIELD_NAME("IOCB", "iocb"), r->iocb);
        w->ptr(w, FIELD_NAME("DATA", "data"), r->data);
        if (r->kind == REQ_STALE)
                w->ptr(w, FIELD_NAME("EVENT_DATA", "event_data"), r->event_data);
        if (r->submit_known) {
                const struct word *op = request_op_word(r);
                if (op)
                        w->word(w, FIELD_NAME("OP", "op"), op->s);
                else
                        w->u64(w, FIELD_NAME("OP", "op"), r->opcode);
                bool fd_known = !r->no_file && !r->iocb_changed;
                if (fd_known && r->fixed_file)
                        w->u64(w, FIELD_NAME("FD", "fd"), r->fd);
                else if (fd_known) /* as the program wrote it: -1 is not 4294967295 */
                        w->s64(w, FIELD_NAME("FD", "fd"), (int32_t) r->fd);
                if (r->iocb_changed)
                        w->word(w, FIELD_NAME("IOCB_CHANGED", "iocb_changed"), "yes");
                if (r->fixed_file)
                        w->word(w, FIELD_NAME("FIXED_FILE", "fixed_file"), "yes");
                if (r->submit_failed)
                        w->word(w, FIELD_NAME("SUBMIT_FAILED", "submit_failed"), "yes");
                if (r->path && (r->path_state == PATH_OK || r->path_state == PATH_UNVERIFIED))
                        w->str(w, FIELD_NAME("PATH", "path"), r->path->s, r->path->len);
                if (r->path_state != PATH_OK && r->path_state != PATH_NONE)
                        w->word(w, FIELD_NAME("PATH_STATE", "path_state"), path_state_name(r->path_state));
                if (!r->no_offset)
                        w->s64(w, FIELD_NAME("OFFSET", "offset"), r->offset);
                if (r->nbytes_known)
                        w->u64(w, FIELD_NAME("NBYTES", "nbytes"), r->nbytes);
                if (r->rw_flags)
                        w->ptr(w, FIELD_NAME("RW_FLAGS", "rw_flags"), (uint32_t) r->rw_flags);
                if (r->flags)
                        w->ptr(w, FIELD_NAME("FLAGS", "flags"), r->flags);
                if (r->reqprio)
                        w->s64(w, FIELD_NAME("REQPRIO", "reqprio"), r->reqprio);
                w->u64(w, FIELD_NAME("SUBMIT_TID", "submit_tid"), r->submit_tid);
                w->u64(w, FIELD_NAME("SUBMIT_NSEC", "submit_nsec"), r->submit_time);
        }
        if (r->has_result) {
                w->s64(w, FIELD_NAME("RES", "res"), r->res);
                if (result_is_errno(r->res)) {
                        char name[16];
                        w->word(w, FIELD_NAME("ERRNO", "errno"), errno_name((int) -r->res, name));
                }
                w->s64(w, FIELD_NAME("RES2", "res2"), r->res2);
                if (r->cq_overflow)
                        w->word(w, FIELD_NAME("CQ_OVERFLOW", "cq_overflow"),
                                r->cq_overflow == CQ_OVERFLOW_KEPT ? "kept" : "dropped");
                if (r->reaped_in_user_space)
                        w->word(w, FIELD_NAME("REAPED", "reaped"), "user-space");
                else
                        w->u64(w, FIELD_NAME("REAP_TID", "reap_tid"), r->reap_tid);
        }
        if (r->submit_known && r->end_time >= r->submit_time && r->end != END_NO_CQE) {
                /* reaped in user space: submit to when the completion was first seen, a bound */
                if (r->reaped_in_user_space)
                        w->u64(w, FIELD_NAME("LATENCY_AT_MOST_NSEC", "latency_at_most_nsec"),
                               r->end_time - r->submit_time);
                else if (r->kind == REQ_COMPLETED || r->kind == REQ_CANCELLED)
                        w->u64(w, FIELD_NAME("LATENCY_NSEC", "latency_nsec"), r->end_time - r->submit_time);
                else if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN)
                        w->u64(w, FIELD_NAME("INFLIGHT_NSEC", "inflight_nsec"), r->end_time - r->submit_time);
        }
}

static uint64_t sum_ops(const uint64_t *by_op) {
        uint64_t n = 0;
        for (unsigned i = 0; i < REQ_OPS; i++)
                n += by_op[i];
        return n;
}

/* prefix_<op> for each op seen: its names made here (a summary is rare) */
static void per_op(struct field_writer *w, const char *prefix, const uint64_t *by_op) {
        for (unsigned i = 0; i < REQ_OPS; i++) {
                const char *op = request_op_index_name(i);
                if (!op || !by_op[i])
                        continue;
                char stem[24];
                snprintf(stem, sizeof(stem), "%s_%s", prefix, op);
                size_t n = strlen(stem);
                struct field_name name = { .journal = "AIO_", .journal_len = (uint8_t) (n + 5),
                                           .json_len = (uint8_t) (n + 4) };
                for (size_t k = 0; k < n; k++)
                        name.journal[4 + k] = stem[k] >= 'a' && stem[k] <= 'z' ? (char) (stem[k] - 'a' + 'A') : stem[k];
                name.journal[4 + n] = '=';
                snprintf(name.json, sizeof(name.json), ",\"%s\":", stem);
                w->u64(w, &name, by_op[i]);
        }
}

/* How the requests that ended in an interval ended: a process's, a file's. */
static void end_fields(struct field_writer *w, const struct proc_interval *iv) {
        w->u64(w, FIELD_NAME("COMPLETED", "completed"), sum_ops(iv->completed));
        per_op(w, "completed", iv->completed);
        w->u64(w, FIELD_NAME("BYTES_READ", "bytes_read"), iv->bytes_read);
        w->u64(w, FIELD_NAME("BYTES_WRITTEN", "bytes_written"), iv->bytes_written);
        w->u64(w, FIELD_NAME("ERRORS", "errors"), iv->errors);
        w->u64(w, FIELD_NAME("CANCELLED", "cancelled"), iv->cancelled);
        w->u64(w, FIELD_NAME("ABANDONED", "abandoned"), iv->abandoned);
        if (iv->stale)
                w->u64(w, FIELD_NAME("STALE", "stale"), iv->stale);
        if (iv->unmatched)
                w->u64(w, FIELD_NAME("UNMATCHED", "unmatched"), iv->unmatched);
        if (iv->unknown)
                w->u64(w, FIELD_NAME("UNKNOWN", "unknown"), iv->unknown);
        if (iv->reaped_in_user_space)
                w->u64(w, FIELD_NAME("REAPED_IN_USER_SPACE", "reaped_in_user_space"), iv->reaped_in_user_space);
}

static void latency_fields(struct field_writer *w, const struct histogram *latency) {
        w->u64(w, FIELD_NAME("LAT_SAMPLES", "lat_samples"), latency->count);
        if (latency->count) {
                for (unsigned i = 0; i < SUMMARY_PERCENTILES; i++)
                        w->u64(w, &percentile_names[i], histogram_percentile(latency, summary_percentiles[i]));
                w->u64(w, FIELD_NAME("LAT_MAX_NSEC", "lat_max_nsec"), latency->max);
        }
}

static void interval_tail_fields(struct field_writer *w, bool last, uint64_t records_lost) {
        if (last)
                w->word(w, FIELD_NAME("SUMMARY_LAST", "summary_last"), "yes");
        if (records_lost)
                w->u64(w, FIELD_NAME("RECORDS_LOST", "records_lost"), records_lost);
}

void summary_fields(struct field_writer *w, const struct proc_summary *s) {
        const struct proc_interval *iv = s->iv;
        w->u64(w, FIELD_NAME("PID", "pid"), s->pid);
        w->str(w, FIELD_NAME("COMM", "comm"), s->comm, strlen(s->comm));
        process_fields(w, s->unit, s->cgroup, s->ns_pid);
        w->u64(w, FIELD_NAME("SUMMARY_INTERVAL_NSEC", "summary_interval_nsec"), s->end - s->start);
        w->u64(w, FIELD_NAME("SUBMITTED", "submitted"), sum_ops(iv->submitted));
        per_op(w, "submitted", iv->submitted);
        if (iv->submitted_io_uring)
                w->u64(w, FIELD_NAME("SUBMITTED_IO_URING", "submitted_io_uring"), iv->submitted_io_uring);
        if (iv->cq_overflows)
                w->u64(w, FIELD_NAME("CQ_OVERFLOWS", "cq_overflows"), iv->cq_overflows);
        end_fields(w, iv);
        w->u64(w, FIELD_NAME("INFLIGHT", "inflight"), s->inflight);
        w->u64(w, FIELD_NAME("INFLIGHT_MAX", "inflight_max"), iv->inflight_max);
        latency_fields(w, s->latency);
        interval_tail_fields(w, s->last, s->records_lost);
}

void file_summary_fields(struct field_writer *w, const struct file_summary *s) {
        if (s->path)
                w->str(w, FIELD_NAME("FILE", "file"), s->path, s->path_len);
        else {
                w->u64(w, FIELD_NAME("OTHER_FILES", "other_files"), s->other_files);
                w->u64(w, FIELD_NAME("WITHOUT_PATH", "without_path"), s->without_path);
        }
        w->u64(w, FIELD_NAME("SUMMARY_INTERVAL_NSEC", "summary_interval_nsec"), s->end - s->start);
        w->u64(w, FIELD_NAME("REQUESTS", "requests"), s->requests);
        if (s->unverified)
                w->u64(w, FIELD_NAME("PATH_UNVERIFIED", "path_unverified"), s->unverified);
        end_fields(w, s->iv);
        latency_fields(w, s->latency);
        interval_tail_fields(w, s->last, s->records_lost);
}
