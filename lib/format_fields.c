/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_fields.h"

#include <stdio.h>
#include <string.h>

#include "aio_decode.h"
#include "util.h"

const double summary_percentiles[SUMMARY_PERCENTILES] = { 50, 90, 99, 99.9 };
const char *const summary_percentile_names[SUMMARY_PERCENTILES] = { "P50", "P90", "P99", "P999" };

static void str(struct field_writer *w, const char *name, const char *v) {
        w->str(w, name, v, strlen(v));
}

int request_priority(const struct request *r) {
        if (r->kind == REQ_STALE || r->kind == REQ_UNMATCHED || r->kind == REQ_UNKNOWN || r->end == END_EVICTED)
                return 4;
        if (r->path_state != PATH_NONE && r->path_state != PATH_OK)
                return 4;
        return 6;
}

void request_fields(struct field_writer *w, const struct request *r) {
        str(w, "REQUEST", request_kind_name(r->kind));
        if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN || r->kind == REQ_UNMATCHED)
                str(w, "END", request_end_name(r->end));
        w->u64(w, "PID", r->pid);
        str(w, "COMM", r->comm);
        w->ptr(w, "CTX", r->ctx);
        w->ptr(w, "IOCB", r->iocb);
        w->ptr(w, "DATA", r->data);
        if (r->kind == REQ_STALE)
                w->ptr(w, "EVENT_DATA", r->event_data);
        if (r->submit_known) {
                const char *op = iocb_opcode_name(r->opcode);
                if (op)
                        str(w, "OP", op);
                else
                        w->u64(w, "OP", r->opcode);
                w->u64(w, "FD", r->fd);
                if (r->path && (r->path_state == PATH_OK || r->path_state == PATH_UNVERIFIED))
                        w->str(w, "PATH", r->path->s, r->path->len);
                if (r->path_state != PATH_OK && r->path_state != PATH_NONE)
                        str(w, "PATH_STATE", path_state_name(r->path_state));
                w->s64(w, "OFFSET", r->offset);
                if (r->nbytes_known)
                        w->u64(w, "NBYTES", r->nbytes);
                if (r->rw_flags)
                        w->ptr(w, "RW_FLAGS", (uint32_t) r->rw_flags);
                if (r->flags)
                        w->ptr(w, "FLAGS", r->flags);
                if (r->reqprio)
                        w->s64(w, "REQPRIO", r->reqprio);
                w->u64(w, "SUBMIT_TID", r->submit_tid);
                w->u64(w, "SUBMIT_NSEC", r->submit_time);
        }
        if (r->has_result) {
                w->s64(w, "RES", r->res);
                if (result_is_errno(r->res)) {
                        char name[16];
                        str(w, "ERRNO", errno_name((int) -r->res, name));
                }
                w->s64(w, "RES2", r->res2);
                w->u64(w, "REAP_TID", r->reap_tid);
        }
        if (r->submit_known && r->end_time >= r->submit_time) {
                if (r->kind == REQ_COMPLETED || r->kind == REQ_CANCELLED)
                        w->u64(w, "LATENCY_NSEC", r->end_time - r->submit_time);
                else if (r->kind == REQ_ABANDONED || r->kind == REQ_UNKNOWN)
                        w->u64(w, "INFLIGHT_NSEC", r->end_time - r->submit_time);
        }
}

static uint64_t sum_ops(const uint64_t *by_op) {
        uint64_t n = 0;
        for (unsigned i = 0; i < REQ_OPS; i++)
                n += by_op[i];
        return n;
}

static void per_op(struct field_writer *w, const char *prefix, const uint64_t *by_op) {
        for (unsigned i = 0; i < REQ_OPS; i++) {
                const char *op = request_op_index_name(i);
                if (!op || !by_op[i])
                        continue;
                char name[40], upper[16];
                size_t k = 0;
                for (; op[k] && k < sizeof(upper) - 1; k++)
                        upper[k] = (char) (op[k] - 'a' + 'A');
                upper[k] = 0;
                snprintf(name, sizeof(name), "%s_%s", prefix, upper);
                w->u64(w, name, by_op[i]);
        }
}

void summary_fields(struct field_writer *w, const struct proc_summary *s) {
        const struct proc_interval *iv = s->iv;
        w->u64(w, "PID", s->pid);
        str(w, "COMM", s->comm);
        w->u64(w, "SUMMARY_INTERVAL_NSEC", s->end - s->start);
        w->u64(w, "SUBMITTED", sum_ops(iv->submitted));
        per_op(w, "SUBMITTED", iv->submitted);
        w->u64(w, "COMPLETED", sum_ops(iv->completed));
        per_op(w, "COMPLETED", iv->completed);
        w->u64(w, "BYTES_READ", iv->bytes_read);
        w->u64(w, "BYTES_WRITTEN", iv->bytes_written);
        w->u64(w, "ERRORS", iv->errors);
        w->u64(w, "CANCELLED", iv->cancelled);
        w->u64(w, "ABANDONED", iv->abandoned);
        if (iv->stale)
                w->u64(w, "STALE", iv->stale);
        if (iv->unmatched)
                w->u64(w, "UNMATCHED", iv->unmatched);
        if (iv->unknown)
                w->u64(w, "UNKNOWN", iv->unknown);
        w->u64(w, "INFLIGHT", s->inflight);
        w->u64(w, "INFLIGHT_MAX", iv->inflight_max);
        w->u64(w, "LAT_SAMPLES", s->latency->count);
        if (s->latency->count) {
                for (unsigned i = 0; i < SUMMARY_PERCENTILES; i++) {
                        char name[32];
                        snprintf(name, sizeof(name), "LAT_%s_NSEC", summary_percentile_names[i]);
                        w->u64(w, name, histogram_percentile(s->latency, summary_percentiles[i]));
                }
                w->u64(w, "LAT_MAX_NSEC", s->latency->max);
        }
        if (s->last)
                str(w, "SUMMARY_LAST", "yes");
}
