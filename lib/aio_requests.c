/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "aio_requests.h"

#include <errno.h>
#include <string.h>

#include "util.h"

#define NIL INFLIGHT_NIL

/* A completion held for the iocb this submit, begun before it, names: the request, whole, at once. */
static bool claim_early(struct tracker *t, struct proc *p, const struct aio_call *call, uint64_t iocb,
                        struct request *ret) {
        for (size_t i = 0; i < t->n_early; i++) {
                struct request *e = &t->early[i];
                if (e->iocb != iocb || e->pid != call->pid || e->ctx != call->args[0] ||
                    e->end_time < call->enter_time)
                        continue;
                *ret = *e;
                memmove(e, e + 1, (t->n_early - i - 1) * sizeof(*e));
                t->n_early--;
                if (ret->end == END_SUBMIT_UNTRACKED)
                        p->forgotten++; /* it did not need that explanation */
                return true;
        }
        return false;
}

/* What the request record says of its submit: the iocb, the file. */
static void fill_submit(struct tracker *t, struct request *r, const struct aio_call *call,
                        const struct iocb_info *cb, uint64_t generation) {
        bool vectored = iocb_is_vectored(cb);
        r->pid = call->pid;
        r->submit_tid = call->tid;
        r->ctx = call->args[0];
        r->iocb = cb->addr;
        r->data = cb->data;
        r->submit_time = call->enter_time;
        r->offset = cb->offset;
        r->submit_known = true;
        r->nbytes = vectored ? cb->iov_total : cb->nbytes;
        r->nbytes_known = !vectored || (cb->iov_state == MEM_OK && cb->iov_counted == cb->nbytes);
        r->opcode = cb->opcode;
        r->reqprio = cb->reqprio;
        r->rw_flags = cb->rw_flags;
        r->flags = cb->flags;
        r->fd = cb->fd;
        r->path = NULL;
        r->path_state = PATH_NONE;
        if (cb->kernel_other) {
                /* the iocb was written during the call: what the kernel used, and its file by identity alone (no
                 * fd of the process is known to name it) */
                r->iocb_changed = true;
                r->offset = cb->kernel_offset;
                r->nbytes = cb->kernel_nbytes;
                r->nbytes_known = true;
                if (t->opt.paths)
                        fdpath_of_identity(&t->paths, call->pid, cb->file_mnt_id, cb->file_ino, generation, &r->path,
                                           &r->path_state);
        } else if (t->opt.paths && cb->fd_moved && !cb->kernel_same) {
                r->path_state = PATH_MOVED; /* which of the files the kernel read, nothing says */
        } else if (t->opt.paths) {
                struct capture_file f = { .fd = cb->fd, .mnt_id = cb->file_mnt_id, .ino = cb->file_ino };
                fdpath_lookup(&t->paths, call->pid, cb->fd, cb->file_known ? &f : NULL, generation, &r->path,
                              &r->path_state);
        }
}

static void submit_one(struct tracker *t, struct proc *p, const struct aio_call *call, const struct iocb_info *cb,
                       uint64_t generation) {
        uint64_t ctx = call->args[0];
        struct request reaped;
        if (t->n_early > 0 && claim_early(t, p, call, cb->addr, &reaped)) {
                struct request *r = tracker_pending(t);
                if (!r)
                        return;
                *r = reaped;
                fill_submit(t, r, call, cb, generation);
                r->end = END_REAPED;
                if (reaped.data != r->data) {
                        r->kind = REQ_STALE;
                        r->event_data = reaped.data;
                } else
                        r->kind = r->cancel_requested ? REQ_CANCELLED : REQ_COMPLETED;
                tracker_account(t, p, r);
                return;
        }
        uint32_t n = inflight_find(&t->aio, call->pid, ctx, cb->addr);
        if (n != NIL) {
                /* The same iocb again: the kernel finished with it, unseen (an event that could not be read). */
                struct request *old = tracker_pending(t);
                if (!old)
                        return;
                tracker_remove(t, &t->aio, n, p, old);
                if (old->ring_seen)
                        tracker_end_reaped_in_user_space(t, p, old);
                else {
                        if (p->unidentified > 0)
                                p->unidentified--;
                        old->end_time = call->enter_time;
                        old->end = END_RESUBMITTED;
                        old->kind = REQ_UNKNOWN;
                        tracker_account(t, p, old);
                }
        }
        if (!tracker_make_room(t, p, &t->aio, call->enter_time)) {
                p->forgotten++;
                return;
        }
        fill_submit(t, inflight_insert(&t->aio, &p->aio, call->pid, ctx, cb->addr), call, cb, generation);
        if (proc_in_flight(p) > p->iv.inflight_max)
                p->iv.inflight_max = proc_in_flight(p);
}

static void submit_items(struct tracker *t, struct proc *p, const struct aio_call *call, const struct iocb_info *cbs,
                         uint64_t n, uint64_t generation) {
        for (uint64_t i = 0; i < n; i++) {
                const struct iocb_info *cb = &cbs[i];
                bool trusted = cb->state == MEM_OK && cb->addr_state == MEM_OK;
                p->iv.submitted[request_op_index(cb->opcode, trusted)]++;
                if (trusted)
                        submit_one(t, p, call, cb, generation);
                else
                        p->forgotten++; /* its completion will not be found: that is why */
        }
}

static void match_submit(struct tracker *t, struct proc *p, const struct aio_call *call, uint64_t generation) {
        if (call->ret <= 0)
                return;
        /* begun before tracing: when its requests started is not known, nor then their latency */
        uint64_t accepted = (uint64_t) call->ret;
        uint64_t read = call->enter_seen ? MIN(accepted, (uint64_t) call->n_items) : 0;
        submit_items(t, p, call, call->iocbs, read, generation);
        /* beyond max_iocbs_per_call: submitted, not tracked (unless the capture's records of them follow) */
        p->iv.submitted[REQ_OPS - 1] += accepted - read;
        p->forgotten += accepted - read;
}

/* One reaped io_event (or io_cancel's result). */
static void reap_one(struct tracker *t, struct proc *p, const struct aio_call *call, struct event_info *ev,
                     bool cancel_result) {
        ev->fd = -1;
        if (ev->state != MEM_OK) {
                /* no record for it: the request it ended is later said to be unknown */
                p->unidentified++;
                p->iv.active = true;
                return;
        }
        uint64_t ctx = call->args[0];
        uint32_t n = inflight_find(&t->aio, call->pid, ctx, ev->obj);
        /* not found: its submit may still be on its way, and it waits for it, not ended yet, nor counted */
        bool hold = n == NIL && !cancel_result && t->n_early < TRACKER_EARLY_MAX;
        struct request *r = hold ? &t->early[t->n_early] : tracker_pending(t);
        if (!r)
                return;
        if (n == NIL) {
                *r = (struct request) { .pid = call->pid, .ctx = ctx, .iocb = ev->obj, .data = ev->data,
                                        .kind = REQ_UNMATCHED, .end = END_SUBMIT_UNSEEN };
                if (p->forgotten > 0) {
                        p->forgotten--;
                        r->end = END_SUBMIT_UNTRACKED;
                }
        } else {
                tracker_remove(t, &t->aio, n, p, r);
                ev->fd = (int32_t) r->fd;
                if (r->data != ev->data) {
                        /* The kernel copies aio_data into the event: a difference means one of the two reads saw
                         * memory that had already been reused.  Neither is merged into the other. */
                        ev->data_mismatch = true;
                        ev->expected_data = r->data;
                        r->kind = REQ_STALE;
                        r->event_data = ev->data;
                } else
                        r->kind = r->cancel_requested || cancel_result ? REQ_CANCELLED : REQ_COMPLETED;
        }
        r->reap_tid = call->tid;
        r->end_time = call->exit_time;
        if (r->kind != REQ_UNMATCHED)
                r->end = END_REAPED;
        r->has_result = true;
        r->res = ev->res;
        r->res2 = ev->res2;
        if (hold)
                t->n_early++;
        else
                tracker_account(t, p, r);
}

static void match_reap(struct tracker *t, struct proc *p, struct aio_call *call) {
        if (call->n_items)
                p->reaps_by_call = true;
        for (unsigned i = 0; i < call->n_items; i++)
                reap_one(t, p, call, &call->events[i], false);
        if (call->n_wanted > call->n_items)
                p->unidentified += call->n_wanted - call->n_items;
}

void aio_requests_more(struct tracker *t, const struct aio_call *call, struct iocb_info *cbs,
                       struct event_info *evs, size_t n, uint64_t generation) {
        struct proc *p = procs_find(&t->procs, call->pid);
        if (!p)
                return; /* its call's record was lost: nothing counted them */
        if (cbs) {
                /* counted by their call's record as submitted and not tracked: tracked now */
                uint64_t untracked = MIN(MIN((uint64_t) n, p->iv.submitted[REQ_OPS - 1]), p->forgotten);
                p->iv.submitted[REQ_OPS - 1] -= untracked;
                p->forgotten -= untracked;
                submit_items(t, p, call, cbs, untracked, generation);
                return;
        }
        /* counted by their call's record as reaped and not read */
        n = MIN(n, p->unidentified);
        p->unidentified -= n;
        for (size_t i = 0; i < n; i++)
                reap_one(t, p, call, &evs[i], false);
}

static void match_cancel(struct tracker *t, struct proc *p, struct aio_call *call) {
        if (call->ret == 0 && call->n_items == 1) {
                /* an old kernel: the result comes back from io_cancel itself */
                reap_one(t, p, call, &call->events[0], true);
        } else if (call->ret == -EINPROGRESS && call->args_known) {
                /* cancelling has begun: the event comes later, through io_getevents */
                uint32_t n = inflight_find(&t->aio, call->pid, call->args[0], call->args[1]);
                if (n != NIL)
                        inflight_request(&t->aio, n)->cancel_requested = true;
        }
}

void aio_requests_call(struct tracker *t, struct aio_call *call, uint64_t generation) {
        call->unit = call->cgroup = "";
        call->ns_pid = 0;
        if (call->pid == 0)
                return; /* not a process's call: malformed */
        struct proc *p = tracker_proc(t, call->pid, call->comm, call->enter_seen ? call->enter_time : call->exit_time);
        if (!p)
                return;
        call->unit = p->unit;
        call->cgroup = p->cgroup;
        call->ns_pid = p->ns_pid;
        if (call->comm[0] && call->comm[0] != '?') {
                _Static_assert(sizeof(p->comm) == sizeof(call->comm), "comm sizes");
                memcpy(p->comm, call->comm, sizeof(p->comm)); /* every call: a fixed copy, not a string's */
                p->comm[sizeof(p->comm) - 1] = 0;
        }
        p->iv.active = true;
        t->destroy_ctx = 0;
        switch (call->syscall) {
        case AIO_IO_SUBMIT:
                match_submit(t, p, call, generation);
                break;
        case AIO_IO_GETEVENTS:
        case AIO_IO_PGETEVENTS:
                match_reap(t, p, call);
                break;
        case AIO_IO_CANCEL:
                match_cancel(t, p, call);
                break;
        case AIO_IO_DESTROY:
                if (call->ret == 0 && call->args_known) {
                        t->destroy_ctx = call->args[0];
                        t->destroy_pid = call->pid;
                        t->destroy_time = call->exit_time;
                }
                break;
        default:
                break;
        }
}

bool aio_requests_ring_event(struct tracker *t, uint32_t pid, uint64_t ctx, const struct io_event *ev, bool reaped,
                             uint64_t time) {
        uint32_t n = inflight_find(&t->aio, pid, ctx, ev->obj);
        if (n == NIL)
                return false; /* reaped by a call already, submitted before tracing began, or not yet */
        struct request *r = inflight_request(&t->aio, n);
        if (r->ring_seen || ev->data != r->data)
                return false;
        r->ring_seen = true;
        r->ring_time = time;
        r->ring_res = (int64_t) ev->res;
        r->ring_res2 = (int64_t) ev->res2;
        t->stats->ring_seen++;
        struct proc *p = procs_find(&t->procs, pid);
        if (p)
                p->n_done_in_ring++;
        if (reaped && p && !p->reaps_by_call) {
                /* reaped already, and never by a call of this process: by the program itself */
                struct request *done = tracker_pending(t);
                if (done) {
                        tracker_remove(t, &t->aio, n, p, done);
                        tracker_end_reaped_in_user_space(t, p, done);
                }
        }
        return true;
}
