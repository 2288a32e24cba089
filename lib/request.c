/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "request.h"

#include "uring.h"
#include "util.h"

const struct word *request_kind_word(enum request_kind k) {
        static const struct word names[_REQ_KIND_MAX] = {
                [REQ_COMPLETED] = WORD("completed"), [REQ_CANCELLED] = WORD("cancelled"),
                [REQ_ABANDONED] = WORD("abandoned"), [REQ_STALE] = WORD("stale"),
                [REQ_UNMATCHED] = WORD("unmatched"), [REQ_UNKNOWN] = WORD("unknown"),
                [REQ_STUCK] = WORD("stuck"),
        };
        static const struct word unknown_kind = WORD("?");
        return k < _REQ_KIND_MAX ? &names[k] : &unknown_kind;
}

const char *request_kind_name(enum request_kind k) {
        return request_kind_word(k)->s;
}

const char *request_end_name(enum request_end e) {
        static const char *const names[_END_MAX] = {
                [END_REAPED] = "reaped",       [END_DESTROY] = "io_destroy", [END_EXIT] = "process exit",
                [END_EXEC] = "exec",           [END_EVICTED] = "evicted",
                [END_RESUBMITTED] = "iocb submitted again", [END_SUBMIT_UNTRACKED] = "its submit was not tracked",
                [END_SUBMIT_UNSEEN] = "its submit was not seen", [END_UNTRACED] = "io_uring no longer traced",
                [END_NO_CQE] = "no CQE asked",
        };
        return e < _END_MAX ? names[e] : "?";
}

unsigned request_op_index(uint16_t opcode, bool known) {
        return known && aio_op_of(opcode) ? opcode : REQ_OPS - 1;
}

const struct word *request_op_word(const struct request *r) {
        const struct word *w = uring_opcode_word(r->opcode);
        return w ? w : iocb_opcode_word(r->opcode);
}

const char *request_op_index_name(unsigned i) {
        if (i == REQ_OPS - 1)
                return "other";
        const struct aio_op *op = i < REQ_OPS ? aio_op_of((uint16_t) i) : NULL;
        return op ? op->name.s : NULL;
}

void proc_interval_count_end(struct proc_interval *iv, struct histogram *latency, const struct request *r) {
        iv->active = true;
        if (!r->has_result) {
                if (r->kind == REQ_COMPLETED) /* with no CQE (IOSQE_CQE_SKIP_SUCCESS): no result, no latency */
                        iv->completed[request_op_index(r->opcode, r->submit_known)]++;
                else if (r->kind == REQ_ABANDONED)
                        iv->abandoned++;
                else if (r->kind == REQ_UNKNOWN)
                        iv->unknown++;
                return;
        }
        bool op_known = r->submit_known && r->kind != REQ_STALE;
        bool completed = r->kind == REQ_COMPLETED || r->kind == REQ_CANCELLED;
        /* as the records say: a stale or unmatched completion is counted as that, not as completed too */
        if (completed)
                iv->completed[request_op_index(r->opcode, op_known)]++;
        if (result_is_errno(r->res))
                iv->errors++;
        else if (r->res > 0 && completed && op_known) {
                const struct aio_op *o = aio_op_of(r->opcode);
                if (o && o->dir == AIO_OP_READ)
                        iv->bytes_read += (uint64_t) r->res;
                else if (o && o->dir == AIO_OP_WRITE)
                        iv->bytes_written += (uint64_t) r->res;
        }
        if (r->reaped_in_user_space)
                iv->reaped_in_user_space++; /* its latency is a bound: not among the percentiles */
        if (r->kind == REQ_CANCELLED)
                iv->cancelled++;
        else if (r->kind == REQ_STALE)
                iv->stale++;
        else if (r->kind == REQ_UNMATCHED)
                iv->unmatched++;
        else if (r->kind == REQ_COMPLETED && !r->reaped_in_user_space && r->end_time >= r->submit_time)
                histogram_add(latency, r->end_time - r->submit_time);
}

void proc_interval_merge(struct proc_interval *iv, const struct proc_interval *from) {
        for (unsigned i = 0; i < REQ_OPS; i++) {
                iv->submitted[i] += from->submitted[i];
                iv->completed[i] += from->completed[i];
        }
        iv->bytes_read += from->bytes_read;
        iv->bytes_written += from->bytes_written;
        iv->errors += from->errors;
        iv->cancelled += from->cancelled;
        iv->abandoned += from->abandoned;
        iv->stale += from->stale;
        iv->unmatched += from->unmatched;
        iv->unknown += from->unknown;
        iv->reaped_in_user_space += from->reaped_in_user_space;
        iv->submitted_io_uring += from->submitted_io_uring;
        iv->cq_overflows += from->cq_overflows;
        iv->inflight_max = MAX(iv->inflight_max, from->inflight_max);
        iv->active |= from->active;
}
