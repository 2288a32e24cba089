/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "uring_requests.h"

#include <errno.h>

#include "uring.h"
#include "util.h"

#define NIL INFLIGHT_NIL

/* The same request again while one is in flight: the kernel reuses its requests once they completed, so the
 * completion in between was not seen; or, for one that asked for none on success (IOSQE_CQE_SKIP_SUCCESS),
 * there was none: it completed, with no result to say (a failure would have posted one).  So too for one
 * whose successor in a link chain completed (not cancelled): it began only once this one succeeded. */
static void end_unposted(struct tracker *t, struct proc *p, uint32_t n, uint64_t time) {
        struct request *old = tracker_pending(t);
        if (!old)
                return;
        tracker_remove(t, &t->uring, n, p, old);
        old->end_time = time;
        if (old->cqe_skip) {
                old->end = END_NO_CQE;
                old->kind = REQ_COMPLETED;
        } else {
                if (p->unidentified > 0)
                        p->unidentified--;
                old->end = END_RESUBMITTED;
                old->kind = REQ_UNKNOWN;
        }
        tracker_account(t, p, old);
}

#define LINK_CHAIN_MAX 64 /* how far back a completion ends the requests before it that posted nothing */

static void end_link_chain(struct tracker *t, struct proc *p, uint64_t ring, uint64_t prev, uint64_t time) {
        for (unsigned i = 0; prev && i < LINK_CHAIN_MAX; i++) {
                uint32_t n = inflight_find(&t->uring, p->pid, ring, prev);
                if (n == NIL || !inflight_request(&t->uring, n)->cqe_skip)
                        return;
                prev = inflight_request(&t->uring, n)->link_prev;
                end_unposted(t, p, n, time);
        }
}

void uring_requests_submit(struct tracker *t, const struct uring_submit *u, uint64_t generation) {
        struct proc *p = tracker_proc(t, u->pid, u->comm, u->time);
        if (!p)
                return;
        p->iv.submitted[request_op_index(u->opcode, true)]++;
        p->iv.submitted_io_uring++;
        uint32_t n = inflight_find(&t->uring, u->pid, u->ring, u->req);
        if (n != NIL)
                end_unposted(t, p, n, u->time);
        if (!tracker_make_room(t, p, &t->uring, u->time)) {
                p->forgotten++;
                return;
        }
        struct request *r = inflight_insert(&t->uring, &p->uring, u->pid, u->ring, u->req);
        *r = (struct request) {
                .pid = u->pid, .submit_tid = u->tid, .ctx = u->ring, .iocb = u->req, .data = u->user_data,
                .submit_time = u->time, .submit_known = true, .interface = REQ_IO_URING, .opcode = u->opcode,
                .fixed_file = u->fixed_file, .no_file = u->no_file, .no_offset = !u->details,
                .submit_failed = u->failed, .cqe_skip = u->cqe_skip, .fd = u->fd,
                .file_mnt_id = u->file ? u->file->mnt_id : 0, .file_ino = u->file ? u->file->ino : 0,
                .offset = u->details ? u->off : 0,
                .nbytes = u->len, .nbytes_known = u->details && u->nbytes_known, .rw_flags = (int32_t) u->rw_flags,
        };
        /* in a link chain, it begins once the one before it is done */
        if (p->link_req && p->link_ring == u->ring)
                r->link_prev = p->link_req;
        p->link_ring = u->ring;
        p->link_req = u->linked ? u->req : 0;
        if (proc_in_flight(p) > p->iv.inflight_max)
                p->iv.inflight_max = proc_in_flight(p);
        /* a registered file's index names no fd of the process: its path comes with the completion.  One the
         * kernel refused at submit never took the file its fd names (it is taken at the issue): no path. */
        if (t->opt.paths && !u->fixed_file && !u->no_file && !u->failed)
                fdpath_lookup(&t->paths, u->pid, u->fd, u->file, generation, &r->path, &r->path_state);
}

/* The file the kernel used, where it is not the one the fd named at the submit (another thread pointed the fd
 * elsewhere before the request was issued, or a registered file, which names no fd): its path instead. */
static void kernel_file_path(struct tracker *t, struct request *r, const struct capture_file *kf, int32_t res,
                             uint64_t generation) {
        if (r->no_file || !t->opt.paths)
                return;
        /* The kernel takes the file when it issues the request (after the submit, in a worker, or behind a link):
         * one that failed with EBADF and held none found the fd closed by then.  Not the file the fd named. */
        if (!kf && res == -EBADF && !r->fixed_file && !r->submit_failed && r->path_state != PATH_NOT_FD) {
                path_str_unref(r->path);
                r->path = NULL;
                r->path_state = PATH_GONE;
                return;
        }
        if (!kf || (kf->mnt_id == r->file_mnt_id && kf->ino == r->file_ino))
                return;
        path_str_unref(r->path);
        r->file_mnt_id = kf->mnt_id;
        r->file_ino = kf->ino;
        fdpath_of_identity(&t->paths, r->pid, kf->mnt_id, kf->ino, generation, &r->path, &r->path_state);
        /* Never met under a path (a process in a mount namespace of its own: the capture's walk does not end at
         * the daemon's root): what the fd names now, if that is the file. */
        if (r->path_state == PATH_NOT_KNOWN && !r->fixed_file)
                fdpath_lookup(&t->paths, r->pid, r->fd, kf, generation, &r->path, &r->path_state);
}

/* A completion of io_uring: of node n (NIL: of no request known) of process p. */
static void uring_end(struct tracker *t, struct proc *p, uint32_t n, const struct uring_completion *c, uint8_t overflow,
                      uint64_t generation) {
        struct request *r = tracker_pending(t);
        if (!r)
                return;
        if (n == NIL) {
                *r = (struct request) { .pid = c->pid, .ctx = c->ring, .iocb = c->req, .data = c->user_data,
                                        .interface = REQ_IO_URING, .kind = REQ_UNMATCHED, .end = END_SUBMIT_UNSEEN };
                if (p && p->forgotten > 0) {
                        p->forgotten--;
                        r->end = END_SUBMIT_UNTRACKED;
                }
        } else if (c->cflags & IORING_CQE_F_MORE) {
                *r = *inflight_request(&t->uring, n); /* a multishot request's completion: it goes on */
                r->path = path_str_ref(r->path);
                r->kind = REQ_COMPLETED;
                r->end = END_REAPED;
        } else {
                tracker_remove(t, &t->uring, n, p, r);
                r->kind = r->cancel_requested ? REQ_CANCELLED : REQ_COMPLETED;
                r->end = END_REAPED;
        }
        if (n != NIL)
                kernel_file_path(t, r, c->kernel_file, c->res, generation);
        r->reap_tid = c->tid;
        r->end_time = c->time;
        r->has_result = true;
        r->res = c->res;
        r->res2 = 0;
        r->cq_overflow = overflow;
        if (overflow) {
                t->stats->cq_overflows++;
                if (p)
                        p->iv.cq_overflows++;
        }
        tracker_account(t, p, r);
}

/* A completion that names no request: the oldest of the ring's requests in flight with that user_data
 * (programs may reuse one). */
static uint32_t find_by_data(const struct tracker *t, const struct proc *p, uint64_t ring, uint64_t user_data) {
        uint32_t n = p ? p->uring.head : NIL;
        while (n != NIL && (inflight_request(&t->uring, n)->ctx != ring ||
                            inflight_request(&t->uring, n)->data != user_data))
                n = inflight_owner_next(&t->uring, n);
        return n;
}

void uring_requests_complete(struct tracker *t, const struct uring_completion *c, uint64_t generation) {
        struct proc *p = procs_find(&t->procs, c->pid);
        /* a multishot request's completions but its last are posted with no request; a zero-copy send's
         * notification, which ends it, by a request of the kernel's own: both are found by user_data */
        bool by_data = !c->req || (c->cflags & IORING_CQE_F_NOTIF);
        uint32_t n = !p        ? NIL
                     : by_data ? find_by_data(t, p, c->ring, c->user_data)
                               : inflight_find(&t->uring, c->pid, c->ring, c->req);
        uint64_t link_prev = n != NIL ? inflight_request(&t->uring, n)->link_prev : 0;
        uring_end(t, p, n, c, 0, generation);
        if (link_prev && c->res != -ECANCELED)
                end_link_chain(t, p, c->ring, link_prev, c->time);
}

void uring_requests_overflow(struct tracker *t, const struct uring_completion *c, bool dropped) {
        struct proc *p = procs_find(&t->procs, c->pid);
        uint32_t n = find_by_data(t, p, c->ring, c->user_data);
        /* no request of the kernel's named, nor the file it used */
        struct uring_completion named = *c;
        named.req = 0;
        named.kernel_file = NULL;
        uring_end(t, p, n, &named, dropped ? CQ_OVERFLOW_DROPPED : CQ_OVERFLOW_KEPT, 0);
}

void uring_requests_async(struct tracker *t, uint32_t pid, uint64_t ring, uint64_t req, uint8_t opcode,
                          uint8_t how) {
        struct proc *p = procs_find(&t->procs, pid);
        uint32_t n = p ? inflight_find(&t->uring, pid, ring, req) : NIL;
        if (n != NIL)
                inflight_request(&t->uring, n)->async |= how;
        if (!p)
                return;
        if (how == REQ_ASYNC_POLL)
                p->iv.polled++;
        else {
                uint16_t op = uring_request_opcode(opcode, 0);
                p->iv.punted[request_op_index(op, true)]++;
        }
        p->iv.active = true;
}

void uring_requests_stop(struct tracker *t, uint64_t time) {
        tracker_flush(t);
        for (uint32_t n = t->uring.oldest; n != NIL;) {
                uint32_t next = inflight_next(&t->uring, n);
                struct proc *p = procs_find(&t->procs, inflight_request(&t->uring, n)->pid);
                struct request r;
                tracker_remove(t, &t->uring, n, p, &r);
                r.end_time = time;
                r.end = END_UNTRACED;
                r.kind = REQ_UNKNOWN;
                tracker_account(t, p, &r);
                tracker_emit(t, p, &r);
                n = next;
        }
}
