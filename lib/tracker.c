/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tracker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_summary.h"
#include "pidns.h"
#include "uring.h"
#include "util.h"

#define NIL UINT32_MAX

struct req_node {
        struct request r;
        uint32_t hash;         /* of (pid, ctx, iocb), kept: removal and rehashing need not compute it again */
        uint32_t hnext;        /* bucket chain */
        uint32_t gprev, gnext; /* every request, oldest first; gnext also links the free list */
        uint32_t pprev, pnext; /* its process's, oldest first */
};

struct proc {
        uint32_t pid; /* 0: empty slot */
        char comm[16];
        /* looked up once, at its first call: what names it after it is gone ("" when not known) */
        char unit[UNIT_NAME_MAX];
        char cgroup[CGROUP_PATH_MAX];
        uint32_t ns_pid; /* in its own pid namespace, where that is not pid (a container's); else 0 */
        uint32_t head, tail; /* its requests, oldest first */
        uint32_t n_inflight;
        uint64_t forgotten;    /* submits not tracked (unreadable) or evicted: explains completions not found */
        uint64_t unidentified; /* completions that could not be read: explains requests never seen reaped */
        bool reaps_by_call; /* io_getevents returned completions of it: one seen reaped in the ring may be in one */
        uint32_t n_done_in_ring; /* of n_inflight: completed, seen in the ring, waiting to be known reaped */
        uint64_t interval_start;
        long prime_pos;      /* where the look at its open files goes on (fdpath_prime) */
        uint32_t primed;     /* of its files looked at */
        bool prime_queued;
        struct proc_interval iv;
        struct histogram *latency; /* allocated with the process, not per request */
};

/* Requests the kernel has not completed yet: those seen completed in the ring only wait to be known reaped. */
static uint32_t in_flight(const struct proc *p) {
        return p->n_inflight - p->n_done_in_ring;
}

static void comm_copy(char dst[static 16], const char *src) {
        size_t n = src ? strnlen(src, 15) : 0;
        memcpy(dst, src ? src : "", n);
        memset(dst + n, 0, 16 - n); /* all 16 bytes defined: a formatter reads them at once */
}

/* ---- processes ---- */

static struct proc *proc_find(struct tracker *t, uint32_t pid) {
        return id_table_find(&t->procs, pid); /* pid 0: no process of ours */
}

/* Pointers into the table stay valid until the next proc_get() or proc_remove(). */
static struct proc *proc_get(struct tracker *t, uint32_t pid, const char *comm) {
        bool fresh;
        struct proc *p = id_table_get(&t->procs, pid, &fresh);
        if (!p || !fresh)
                return p;
        struct histogram *h = malloc(sizeof(*h));
        if (!h) {
                id_table_remove(&t->procs, p);
                return NULL;
        }
        histogram_reset(h);
        *p = (struct proc) { .pid = pid, .head = NIL, .tail = NIL, .latency = h };
        if (t->opt.proc_root && proc_cgroup(t->opt.proc_root, pid, p->cgroup) >= 0)
                (void) cgroup_path_unit(p->cgroup, p->unit);
        if (t->opt.proc_root && proc_ns_pid(t->opt.proc_root, pid, &p->ns_pid) >= 0 && p->ns_pid == pid)
                p->ns_pid = 0;
        /* Files it opened before tracing began, and closes before a request's path is looked up (a database
         * reopening its tablespaces), keep their paths: looked at after this drain, a few at a time. */
        if (t->opt.paths && t->opt.paths_by_identity && t->prime_n < TRACKER_PRIME_QUEUE) {
                t->prime_queue[(t->prime_head + t->prime_n++) % TRACKER_PRIME_QUEUE] = pid;
                p->prime_queued = true;
        }
        if (t->next_summary)
                p->interval_start = t->next_summary - t->opt.summary_interval_ns;
        comm_copy(p->comm, comm && comm[0] ? comm : "?");
        return p;
}

/* Each process in the queue in turn, a chunk of its files at a time; one that has more goes to the back.  At
 * most a quarter of the cache's room for one process: the others' files keep theirs. */
void tracker_prime(struct tracker *t) {
        size_t budget = TRACKER_PRIME_PER_DRAIN, per_process = t->paths.cap / 4;
        while (budget && t->prime_n) {
                uint32_t pid = t->prime_queue[t->prime_head];
                t->prime_head = (t->prime_head + 1) % TRACKER_PRIME_QUEUE;
                t->prime_n--;
                struct proc *p = proc_find(t, pid);
                if (!p || !p->prime_queued)
                        continue; /* gone since */
                bool done;
                size_t n = fdpath_prime(&t->paths, pid, &p->prime_pos, MIN(MIN(budget, (size_t) TRACKER_PRIME_CHUNK),
                                                                            per_process - p->primed), &done);
                budget -= MIN(n, budget);
                p->primed += (uint32_t) n;
                if (done || p->primed >= per_process)
                        p->prime_queued = false;
                else
                        t->prime_queue[(t->prime_head + t->prime_n++) % TRACKER_PRIME_QUEUE] = pid;
        }
}

static void proc_remove(struct tracker *t, struct proc *p) {
        free(p->latency);
        id_table_remove(&t->procs, p);
}

/* ---- requests ---- */

static uint32_t key_hash(uint32_t pid, uint64_t ctx, uint64_t iocb) {
        return (uint32_t) hash_u64(iocb ^ hash_u64(ctx ^ ((uint64_t) pid << 32)));
}

static size_t bucket_of(const struct tracker *t, uint32_t hash) {
        return hash & (t->n_buckets - 1);
}

static uint32_t node_find(const struct tracker *t, uint32_t hash, uint32_t pid, uint64_t ctx, uint64_t iocb) {
        for (uint32_t n = t->buckets[bucket_of(t, hash)]; n != NIL; n = t->nodes[n].hnext) {
                const struct request *r = &t->nodes[n].r;
                if (r->iocb == iocb && r->ctx == ctx && r->pid == pid)
                        return n;
        }
        return NIL;
}

static void rehash(struct tracker *t) {
        for (size_t b = 0; b < t->n_buckets; b++)
                t->buckets[b] = NIL;
        for (uint32_t n = t->oldest; n != NIL; n = t->nodes[n].gnext) {
                size_t b = bucket_of(t, t->nodes[n].hash);
                t->nodes[n].hnext = t->buckets[b];
                t->buckets[b] = n;
        }
}

/* Room for cap nodes, the new ones on the free list, and buckets as many. */
static int nodes_resize(struct tracker *t, size_t cap) {
        struct req_node *nodes = realloc(t->nodes, cap * sizeof(*nodes));
        if (!nodes)
                return -ENOMEM;
        t->nodes = nodes;
        for (size_t i = t->nodes_cap; i < cap; i++)
                nodes[i].gnext = i + 1 < cap ? (uint32_t) (i + 1) : t->free_head;
        t->free_head = (uint32_t) t->nodes_cap;
        t->nodes_cap = cap;
        size_t want = t->n_buckets;
        while (want < cap)
                want *= 2;
        if (want != t->n_buckets) {
                uint32_t *b = realloc(t->buckets, want * sizeof(*b));
                if (!b)
                        return 0; /* chains get longer, nothing is lost */
                t->buckets = b;
                t->n_buckets = want;
                rehash(t);
        }
        return 0;
}

static int nodes_grow(struct tracker *t) {
        size_t cap = MIN(t->nodes_cap * 2, t->nodes_limit);
        return cap > t->nodes_cap ? nodes_resize(t, cap) : -ENOSPC;
}

/* Unlink node n from every list and return its slot to the free list; the request itself is moved out. */
static void node_remove(struct tracker *t, uint32_t n, struct proc *p, struct request *ret) {
        struct req_node *x = &t->nodes[n];
        uint32_t *link = &t->buckets[bucket_of(t, x->hash)];
        while (*link != n)
                link = &t->nodes[*link].hnext;
        *link = x->hnext;
        if (x->gprev != NIL)
                t->nodes[x->gprev].gnext = x->gnext;
        else
                t->oldest = x->gnext;
        if (x->gnext != NIL)
                t->nodes[x->gnext].gprev = x->gprev;
        else
                t->newest = x->gprev;
        if (p) {
                if (x->pprev != NIL)
                        t->nodes[x->pprev].pnext = x->pnext;
                else
                        p->head = x->pnext;
                if (x->pnext != NIL)
                        t->nodes[x->pnext].pprev = x->pprev;
                else
                        p->tail = x->pprev;
                p->n_inflight--;
                if (x->r.ring_seen)
                        p->n_done_in_ring--;
        }
        *ret = x->r;
        x->gnext = t->free_head;
        t->free_head = n;
        t->used--;
}

static struct request *pending_add(struct tracker *t) {
        if (t->n_pending == t->pending_cap)
                return NULL; /* cannot happen with the sizes of tracker_init; never overrun */
        return &t->pending[t->n_pending++];
}

/* Account for a request's end in its process's interval, and count it. */
static void account_end(struct tracker *t, struct proc *p, const struct request *r) {
        struct trace_stats *st = t->stats;
        switch (r->kind) {
        case REQ_COMPLETED:
        case REQ_CANCELLED:
                st->completed++;
                break;
        case REQ_ABANDONED:
                st->abandoned++;
                if (r->end == END_EVICTED)
                        st->evicted++;
                break;
        case REQ_UNKNOWN:
                st->unknown++;
                break;
        case REQ_STALE:
                st->stale++;
                break;
        case REQ_UNMATCHED:
                st->unmatched++;
                break;
        default:
                break;
        }
        if (r->kind == REQ_CANCELLED)
                st->cancelled++;
        if (t->files)
                file_tallies_add(t->files, r);
        if (p)
                proc_interval_count_end(&p->iv, p->latency, r);
}

/* A request whose completion was seen in its ring and that no call reaped: the program reaped it itself. */
static void end_reaped_in_user_space(struct tracker *t, struct proc *p, struct request *r) {
        r->end_time = r->ring_time;
        r->end = END_REAPED;
        r->kind = r->cancel_requested ? REQ_CANCELLED : REQ_COMPLETED;
        r->reaped_in_user_space = true;
        r->has_result = true;
        r->res = r->ring_res;
        r->res2 = r->ring_res2;
        account_end(t, p, r);
}

/* A request that will never be seen reaped: abandoned, or unknown when its process had completions that could
 * not be read (it may have been one of them); or, its completion seen in the ring, reaped in user space. */
static void end_unreaped(struct tracker *t, struct proc *p, struct request *r, uint64_t time, enum request_end why) {
        if (r->ring_seen) {
                end_reaped_in_user_space(t, p, r);
                return;
        }
        r->end_time = time;
        r->end = why;
        r->kind = REQ_ABANDONED;
        if (p && p->unidentified > 0 && why != END_EVICTED) {
                p->unidentified--;
                r->kind = REQ_UNKNOWN;
        }
        if (why == END_EVICTED && p)
                p->forgotten++;
        account_end(t, p, r);
}

/* A request handed out, named after its process p (NULL: gone). */
static void emit_request(struct tracker *t, const struct proc *p, struct request *r) {
        if (p)
                memcpy(r->comm, p->comm, sizeof(r->comm)); /* a fixed copy: every byte of it is defined */
        else
                comm_copy(r->comm, "?");
        r->unit = p ? p->unit : "";
        r->cgroup = p ? p->cgroup : "";
        r->ns_pid = p ? p->ns_pid : 0;
        if (t->cb.request)
                t->cb.request(t->cb.userdata, r);
        path_str_unref(r->path);
        r->path = NULL;
}

/* Make room for one more request of p: evict its oldest, or the oldest of all, into the pending list. */
static bool make_room(struct tracker *t, struct proc *p, uint64_t time) {
        uint32_t victim = NIL;
        if (p->n_inflight >= t->opt.max_inflight_per_process)
                victim = p->head;
        else if (t->used >= t->nodes_limit)
                victim = t->oldest;
        else if (t->free_head == NIL && nodes_grow(t) < 0)
                victim = t->oldest;
        if (victim == NIL)
                return t->free_head != NIL;
        struct request *r = pending_add(t);
        if (!r)
                return false;
        struct proc *owner = t->nodes[victim].r.pid == p->pid ? p : proc_find(t, t->nodes[victim].r.pid);
        node_remove(t, victim, owner, r);
        end_unreaped(t, owner, r, time, END_EVICTED);
        return t->free_head != NIL;
}

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

/* Held completions no submit claimed: unmatched after all.  Those of pid (all when 0) older than `before`. */
static void release_early(struct tracker *t, uint32_t pid, uint64_t before) {
        size_t k = 0;
        for (size_t i = 0; i < t->n_early; i++) {
                struct request *e = &t->early[i];
                if ((pid && e->pid != pid) || e->end_time >= before) {
                        t->early[k++] = *e;
                        continue;
                }
                struct proc *p = proc_find(t, e->pid);
                struct request r = *e;
                account_end(t, p, &r);
                emit_request(t, p, &r);
        }
        t->n_early = k;
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
        if (t->opt.paths) {
                struct capture_file f = { .fd = cb->fd, .mnt_id = cb->file_mnt_id, .ino = cb->file_ino };
                fdpath_lookup(&t->paths, call->pid, cb->fd, cb->file_known ? &f : NULL, generation, &r->path,
                              &r->path_state);
        }
}

static struct req_node *node_insert(struct tracker *t, struct proc *p, uint32_t hash);

static void submit_one(struct tracker *t, struct proc *p, const struct aio_call *call, const struct iocb_info *cb,
                       uint64_t generation) {
        uint64_t ctx = call->args[0];
        struct request reaped;
        if (t->n_early > 0 && claim_early(t, p, call, cb->addr, &reaped)) {
                struct request *r = pending_add(t);
                if (!r) {
                        t->stats->no_memory++;
                        return;
                }
                *r = reaped;
                fill_submit(t, r, call, cb, generation);
                r->end = END_REAPED;
                if (reaped.data != r->data) {
                        r->kind = REQ_STALE;
                        r->event_data = reaped.data;
                } else
                        r->kind = r->cancel_requested ? REQ_CANCELLED : REQ_COMPLETED;
                account_end(t, p, r);
                return;
        }
        uint32_t hash = key_hash(call->pid, ctx, cb->addr);
        uint32_t n = node_find(t, hash, call->pid, ctx, cb->addr);
        if (n != NIL) {
                /* The same iocb again: the kernel finished with it, unseen (an event that could not be read). */
                struct request *old = pending_add(t);
                if (!old) {
                        t->stats->no_memory++;
                        return;
                }
                node_remove(t, n, p, old);
                if (old->ring_seen)
                        end_reaped_in_user_space(t, p, old);
                else {
                        if (p->unidentified > 0)
                                p->unidentified--;
                        old->end_time = call->enter_time;
                        old->end = END_RESUBMITTED;
                        old->kind = REQ_UNKNOWN;
                        account_end(t, p, old);
                }
        }
        if (!make_room(t, p, call->enter_time)) {
                p->forgotten++;
                return;
        }
        fill_submit(t, &node_insert(t, p, hash)->r, call, cb, generation);
}

/* A new node in flight for p (room made), its request zeroed. */
static struct req_node *node_insert(struct tracker *t, struct proc *p, uint32_t hash) {
        uint32_t n = t->free_head;
        struct req_node *x = &t->nodes[n];
        t->free_head = x->gnext;
        x->r = (struct request) {};
        size_t b = bucket_of(t, hash);
        x->hash = hash;
        x->hnext = t->buckets[b];
        t->buckets[b] = n;
        x->gprev = t->newest;
        x->gnext = NIL;
        if (t->newest != NIL)
                t->nodes[t->newest].gnext = n;
        else
                t->oldest = n;
        t->newest = n;
        x->pprev = p->tail;
        x->pnext = NIL;
        if (p->tail != NIL)
                t->nodes[p->tail].pnext = n;
        else
                p->head = n;
        p->tail = n;
        t->used++;
        p->n_inflight++;
        if (in_flight(p) > p->iv.inflight_max)
                p->iv.inflight_max = in_flight(p);
        return x;
}

static void match_submit(struct tracker *t, struct proc *p, const struct aio_call *call, uint64_t generation) {
        if (call->ret <= 0)
                return;
        /* begun before tracing: when its requests started is not known, nor then their latency */
        uint64_t accepted = (uint64_t) call->ret;
        uint64_t read = call->enter_seen ? MIN(accepted, (uint64_t) call->n_items) : 0;
        for (uint64_t i = 0; i < read; i++) {
                const struct iocb_info *cb = &call->iocbs[i];
                bool trusted = cb->state == MEM_OK && cb->addr_state == MEM_OK;
                p->iv.submitted[request_op_index(cb->opcode, trusted)]++;
                if (trusted)
                        submit_one(t, p, call, cb, generation);
                else
                        p->forgotten++; /* its completion will not be found: that is why */
        }
        /* beyond max_iocbs_per_call: submitted, not tracked */
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
        uint32_t n = node_find(t, key_hash(call->pid, ctx, ev->obj), call->pid, ctx, ev->obj);
        /* not found: its submit may still be on its way, and it waits for it, not ended yet, nor counted */
        bool hold = n == NIL && !cancel_result && t->n_early < TRACKER_EARLY_MAX;
        struct request *r = hold ? &t->early[t->n_early] : pending_add(t);
        if (!r) {
                t->stats->no_memory++;
                return;
        }
        if (n == NIL) {
                *r = (struct request) { .pid = call->pid, .ctx = ctx, .iocb = ev->obj, .data = ev->data,
                                        .kind = REQ_UNMATCHED, .end = END_SUBMIT_UNSEEN };
                if (p->forgotten > 0) {
                        p->forgotten--;
                        r->end = END_SUBMIT_UNTRACKED;
                }
        } else {
                node_remove(t, n, p, r);
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
                account_end(t, p, r);
}

void tracker_match(struct tracker *t, struct aio_call *call, uint64_t generation) {
        call->unit = call->cgroup = "";
        call->ns_pid = 0;
        if (call->pid == 0)
                return; /* not a process's call: malformed */
        struct proc *p = proc_get(t, call->pid, call->comm);
        if (!p) {
                t->stats->no_memory++;
                return;
        }
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
                if (call->n_items)
                        p->reaps_by_call = true;
                for (unsigned i = 0; i < call->n_items; i++)
                        reap_one(t, p, call, &call->events[i], false);
                if (call->n_wanted > call->n_items)
                        p->unidentified += call->n_wanted - call->n_items;
                break;
        case AIO_IO_CANCEL:
                if (call->ret == 0 && call->n_items == 1) {
                        /* an old kernel: the result comes back from io_cancel itself */
                        reap_one(t, p, call, &call->events[0], true);
                } else if (call->ret == -EINPROGRESS && call->args_known) {
                        /* cancelling has begun: the event comes later, through io_getevents */
                        uint32_t n = node_find(t, key_hash(call->pid, call->args[0], call->args[1]), call->pid,
                                               call->args[0], call->args[1]);
                        if (n != NIL)
                                t->nodes[n].r.cancel_requested = true;
                }
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

bool tracker_ring_event(struct tracker *t, uint32_t pid, uint64_t ctx, const struct io_event *ev, bool reaped,
                        uint64_t time) {
        uint32_t n = node_find(t, key_hash(pid, ctx, ev->obj), pid, ctx, ev->obj);
        if (n == NIL)
                return false; /* reaped by a call already, submitted before tracing began, or not yet */
        struct request *r = &t->nodes[n].r;
        if (r->ring_seen || ev->data != r->data)
                return false;
        r->ring_seen = true;
        r->ring_time = time;
        r->ring_res = (int64_t) ev->res;
        r->ring_res2 = (int64_t) ev->res2;
        t->stats->ring_seen++;
        struct proc *p = proc_find(t, pid);
        if (p)
                p->n_done_in_ring++;
        if (reaped && p && !p->reaps_by_call) {
                /* reaped already, and never by a call of this process: by the program itself */
                struct request *done = pending_add(t);
                if (done) {
                        node_remove(t, n, p, done);
                        end_reaped_in_user_space(t, p, done);
                }
        }
        return true;
}

/* ---- io_uring ---- */

/* The same request again while one is in flight: the kernel reuses its requests once they completed, so the
 * completion in between was not seen. */
static void end_resubmitted(struct tracker *t, struct proc *p, uint32_t n, uint64_t time) {
        struct request *old = pending_add(t);
        if (!old) {
                t->stats->no_memory++;
                return;
        }
        node_remove(t, n, p, old);
        if (p->unidentified > 0)
                p->unidentified--;
        old->end_time = time;
        old->end = END_RESUBMITTED;
        old->kind = REQ_UNKNOWN;
        account_end(t, p, old);
}

void tracker_uring_submit(struct tracker *t, const struct uring_submit *u, uint64_t generation) {
        struct proc *p = proc_get(t, u->pid, u->comm);
        if (!p) {
                t->stats->no_memory++;
                return;
        }
        p->iv.submitted[request_op_index(u->opcode, true)]++;
        p->iv.submitted_io_uring++;
        uint32_t hash = key_hash(u->pid, u->ring, u->req);
        uint32_t n = node_find(t, hash, u->pid, u->ring, u->req);
        if (n != NIL)
                end_resubmitted(t, p, n, u->time);
        if (!make_room(t, p, u->time)) {
                p->forgotten++;
                return;
        }
        struct request *r = &node_insert(t, p, hash)->r;
        *r = (struct request) {
                .pid = u->pid, .submit_tid = u->tid, .ctx = u->ring, .iocb = u->req, .data = u->user_data,
                .submit_time = u->time, .submit_known = true, .interface = REQ_IO_URING, .opcode = u->opcode,
                .fixed_file = u->fixed_file, .no_file = u->no_file || u->failed, .no_offset = !u->details,
                .submit_failed = u->failed, .fd = u->fd,
                .offset = u->details ? u->off : 0,
                .nbytes = u->len, .nbytes_known = u->details && u->nbytes_known, .rw_flags = (int32_t) u->rw_flags,
        };
        /* a registered file's index names no fd of the process: its path is not looked up */
        if (t->opt.paths && !u->fixed_file && !u->no_file && !u->failed)
                fdpath_lookup(&t->paths, u->pid, u->fd, u->file, generation, &r->path, &r->path_state);
}

#define IORING_CQE_F_MORE (1u << 1)

/* A completion of io_uring: of node n (NIL: of no request known) of process p. */
static void uring_end(struct tracker *t, struct proc *p, uint32_t n, uint32_t pid, uint32_t tid, uint64_t ring,
                      uint64_t req, uint64_t user_data, int32_t res, uint32_t cflags, uint8_t overflow,
                      uint64_t time) {
        struct request *r = pending_add(t);
        if (!r) {
                t->stats->no_memory++;
                return;
        }
        if (n == NIL) {
                *r = (struct request) { .pid = pid, .ctx = ring, .iocb = req, .data = user_data,
                                        .interface = REQ_IO_URING, .kind = REQ_UNMATCHED, .end = END_SUBMIT_UNSEEN };
                if (p && p->forgotten > 0) {
                        p->forgotten--;
                        r->end = END_SUBMIT_UNTRACKED;
                }
        } else if (cflags & IORING_CQE_F_MORE) {
                *r = t->nodes[n].r; /* a multishot request's completion: it goes on */
                r->path = path_str_ref(r->path);
                r->kind = REQ_COMPLETED;
                r->end = END_REAPED;
        } else {
                node_remove(t, n, p, r);
                r->kind = r->cancel_requested ? REQ_CANCELLED : REQ_COMPLETED;
                r->end = END_REAPED;
        }
        r->reap_tid = tid;
        r->end_time = time;
        r->has_result = true;
        r->res = res;
        r->res2 = 0;
        r->cq_overflow = overflow;
        if (overflow) {
                t->stats->cq_overflows++;
                if (p)
                        p->iv.cq_overflows++;
        }
        account_end(t, p, r);
}

/* A completion that names no request: the oldest of the ring's requests in flight with that user_data
 * (programs may reuse one). */
static uint32_t uring_find_by_data(const struct tracker *t, const struct proc *p, uint64_t ring, uint64_t user_data) {
        uint32_t n = p ? p->head : NIL;
        while (n != NIL && (t->nodes[n].r.ctx != ring || t->nodes[n].r.data != user_data ||
                            t->nodes[n].r.interface != REQ_IO_URING))
                n = t->nodes[n].pnext;
        return n;
}

void tracker_uring_complete(struct tracker *t, uint32_t pid, uint32_t tid, uint64_t ring, uint64_t req,
                            uint64_t user_data, int32_t res, uint32_t cflags, uint64_t time) {
        struct proc *p = proc_find(t, pid);
        /* a multishot request's completions but its last are posted with no request */
        uint32_t n = !p ? NIL : req ? node_find(t, key_hash(pid, ring, req), pid, ring, req)
                                    : uring_find_by_data(t, p, ring, user_data);
        uring_end(t, p, n, pid, tid, ring, n != NIL ? t->nodes[n].r.iocb : req, user_data, res, cflags, 0, time);
}

void tracker_uring_overflow(struct tracker *t, uint32_t pid, uint32_t tid, uint64_t ring, uint64_t user_data,
                            int32_t res, uint32_t cflags, bool dropped, uint64_t time) {
        struct proc *p = proc_find(t, pid);
        uint32_t n = uring_find_by_data(t, p, ring, user_data);
        uring_end(t, p, n, pid, tid, ring, n != NIL ? t->nodes[n].r.iocb : 0, user_data, res, cflags,
                  dropped ? CQ_OVERFLOW_DROPPED : CQ_OVERFLOW_KEPT, time);
}

void tracker_uring_stop(struct tracker *t, uint64_t time) {
        tracker_flush(t);
        for (uint32_t n = t->oldest; n != NIL;) {
                uint32_t next = t->nodes[n].gnext;
                if (t->nodes[n].r.interface == REQ_IO_URING) {
                        struct proc *p = proc_find(t, t->nodes[n].r.pid);
                        struct request r;
                        node_remove(t, n, p, &r);
                        r.end_time = time;
                        r.end = END_UNTRACED;
                        r.kind = REQ_UNKNOWN;
                        account_end(t, p, &r);
                        emit_request(t, p, &r);
                }
                n = next;
        }
}

/* Every request of pid (of one context, or all when ctx is 0) that will never be reaped. */
static void abandon(struct tracker *t, uint32_t pid, uint64_t ctx, uint64_t time, enum request_end why) {
        struct proc *p = proc_find(t, pid);
        if (!p)
                return;
        for (uint32_t n = p->head; n != NIL;) {
                uint32_t next = t->nodes[n].pnext;
                if (ctx == 0 || t->nodes[n].r.ctx == ctx) {
                        struct request r;
                        node_remove(t, n, p, &r);
                        end_unreaped(t, p, &r, time, why);
                        emit_request(t, p, &r);
                }
                n = next;
        }
}

void tracker_flush(struct tracker *t) {
        for (size_t i = 0; i < t->n_pending; i++) {
                struct request *r = &t->pending[i];
                emit_request(t, proc_find(t, r->pid), r);
        }
        t->n_pending = 0;
        if (t->destroy_ctx) {
                uint64_t ctx = t->destroy_ctx;
                t->destroy_ctx = 0;
                abandon(t, t->destroy_pid, ctx, t->destroy_time, END_DESTROY);
        }
}

static void emit_summary(struct tracker *t, struct proc *p, uint64_t end, bool last) {
        uint64_t start = p->interval_start;
        if (t->cb.summary)
                t->cb.summary(t->cb.userdata, &(struct proc_summary) {
                        .pid = p->pid, .comm = p->comm, .unit = p->unit, .cgroup = p->cgroup, .ns_pid = p->ns_pid,
                        .start = start,
                        .end = end, .iv = &p->iv,
                        .inflight = in_flight(p), .latency = p->latency, .last = last,
                        .records_lost = t->interval_lost });
}

static void interval_reset(struct proc *p, uint64_t start) {
        p->iv = (struct proc_interval) { .inflight_max = in_flight(p) };
        histogram_reset(p->latency);
        p->interval_start = start;
}

void tracker_process_end(struct tracker *t, uint32_t pid, uint64_t time, enum request_end why) {
        tracker_flush(t);
        release_early(t, pid, UINT64_MAX); /* its threads have all left their calls */
        struct proc *p = proc_find(t, pid);
        fdpath_forget(&t->paths, pid);
        if (!p)
                return;
        abandon(t, pid, 0, time, why);
        p = proc_find(t, pid);
        p->unidentified = 0;
        p->forgotten = 0;
        if (why != END_EXIT)
                return;
        if (p->iv.active && t->opt.summary_interval_ns)
                emit_summary(t, p, time, true);
        proc_remove(t, p);
}

static bool start_interval(void *entry, void *userdata) {
        struct proc *p = entry;
        p->interval_start = *(const uint64_t *) userdata;
        return false;
}

struct interval_end {
        struct tracker *t;
        uint64_t end;
        bool any;
};

/* One process at the end of an interval: its summary if it did anything; forgotten if it was quiet for a whole
 * interval with nothing in flight, to come back fresh if it calls again (a process whose exit was not seen goes
 * this way). */
static bool end_interval(void *entry, void *userdata) {
        struct proc *p = entry;
        struct interval_end *ie = userdata;
        if (p->iv.active) {
                ie->any = true;
                emit_summary(ie->t, p, ie->end, false);
        } else if (p->n_inflight == 0) {
                free(p->latency);
                return true;
        }
        interval_reset(p, ie->end);
        return false;
}

static void on_file_summary(void *userdata, const struct file_summary *s) {
        struct tracker *t = userdata;
        if (t->cb.file_summary)
                t->cb.file_summary(t->cb.userdata, s);
}

/* The files' interval ends: their summaries, and the next one starts. */
static void emit_file_summaries(struct tracker *t, uint64_t end, bool last) {
        if (!t->files)
                return;
        file_tallies_emit(t->files, t->opt.summary_files, t->files_start, MAX(end, t->files_start), last,
                          t->interval_lost, on_file_summary, t);
        t->files_start = end;
}

void tracker_tick(struct tracker *t, uint64_t until) {
        if (t->n_early)
                release_early(t, 0, until > TRACKER_EARLY_HOLD_NS ? until - TRACKER_EARLY_HOLD_NS : 0);
        uint64_t interval = t->opt.summary_interval_ns;
        if (!interval || until > UINT64_MAX - 2 * interval)
                return; /* the end (UINT64_MAX), or a time no clock gives: nothing to wrap around */
        if (t->next_summary == 0) {
                t->next_summary = until + interval;
                t->files_start = until;
                id_table_filter(&t->procs, start_interval, &until);
                return;
        }
        while (until >= t->next_summary) {
                struct interval_end ie = { .t = t, .end = t->next_summary };
                id_table_filter(&t->procs, end_interval, &ie);
                emit_file_summaries(t, t->next_summary, false);
                t->interval_lost = 0;
                t->next_summary += interval;
                if (!ie.any && until >= t->next_summary) {
                        /* idle: skip the empty intervals at once */
                        uint64_t skip = (until - t->next_summary) / interval + 1;
                        t->next_summary += skip * interval;
                        uint64_t start = t->next_summary - interval;
                        t->files_start = start;
                        id_table_filter(&t->procs, start_interval, &start);
                }
        }
}

struct last_summary {
        struct tracker *t;
        uint64_t now;
};

static bool finish_interval(void *entry, void *userdata) {
        struct proc *p = entry;
        const struct last_summary *ls = userdata;
        if (p->iv.active) {
                emit_summary(ls->t, p, ls->now > p->interval_start ? ls->now : p->interval_start, true);
                interval_reset(p, ls->now);
        }
        return false;
}

void tracker_finish(struct tracker *t, uint64_t now) {
        tracker_flush(t);
        release_early(t, 0, UINT64_MAX);
        if (t->opt.summary_interval_ns) {
                id_table_filter(&t->procs, finish_interval, &(struct last_summary) { .t = t, .now = now });
                emit_file_summaries(t, now, true);
        }
}

void tracker_note_lost(struct tracker *t, uint64_t records) {
        t->interval_lost += records;
}

static int files_on(struct tracker *t, uint64_t now) {
        t->files = malloc(sizeof(*t->files));
        if (!t->files || file_tallies_init(t->files) < 0) {
                free(t->files);
                t->files = NULL;
                return -ENOMEM;
        }
        t->files_start = now;
        return 0;
}

static void files_off(struct tracker *t) {
        if (!t->files)
                return;
        file_tallies_done(t->files);
        free(t->files);
        t->files = NULL;
}

int tracker_set_options(struct tracker *t, bool paths, uint64_t summary_interval_ns, unsigned summary_files,
                        uint64_t now) {
        t->opt.paths = paths;
        int r = 0;
        if (summary_files && !t->files)
                r = files_on(t, now);
        else if (!summary_files && t->files) {
                emit_file_summaries(t, now, false); /* what was counted, said */
                files_off(t);
        }
        t->opt.summary_files = t->files ? summary_files : 0;
        if (summary_interval_ns == t->opt.summary_interval_ns)
                return r;
        /* the interval in progress ends as the new length says; none started yet: the next tick starts one */
        if (t->next_summary && summary_interval_ns)
                t->next_summary = t->next_summary - t->opt.summary_interval_ns + summary_interval_ns;
        else
                t->next_summary = 0;
        t->opt.summary_interval_ns = summary_interval_ns;
        return r;
}

size_t tracker_inflight_total(const struct tracker *t) {
        return t->used;
}

size_t tracker_inflight(struct tracker *t, uint32_t pid) {
        const struct proc *p = proc_find(t, pid);
        return p ? in_flight(p) : 0;
}

struct foreach_process {
        void (*fn)(void *userdata, const char *comm, const char *unit, uint32_t in_flight);
        void *userdata;
};

static bool visit_process(void *entry, void *userdata) {
        const struct proc *p = entry;
        const struct foreach_process *f = userdata;
        f->fn(f->userdata, p->comm, p->unit, in_flight(p));
        return false;
}

void tracker_foreach_process(struct tracker *t,
                             void (*fn)(void *userdata, const char *comm, const char *unit, uint32_t in_flight),
                             void *userdata) {
        id_table_filter(&t->procs, visit_process, &(struct foreach_process) { .fn = fn, .userdata = userdata });
}

int tracker_init(struct tracker *t, const struct tracker_options *opt, const struct tracker_callbacks *cb,
                 struct trace_stats *stats) {
        *t = (struct tracker) {
                .opt = *opt,
                .cb = cb ? *cb : (struct tracker_callbacks) {},
                .stats = stats,
                .free_head = NIL,
                .oldest = NIL,
                .newest = NIL,
                .nodes_limit = opt->max_inflight ? opt->max_inflight : 1,
        };
        if (!t->opt.max_inflight_per_process)
                t->opt.max_inflight_per_process = t->nodes_limit;
        /* a call ends at most max_iocbs requests, and its submit may evict or replace as many */
        /* a call's iocbs submitted again and its events, and what its look at the ring ends */
        t->pending_cap = 2 * (size_t) MAX(opt->max_iocbs_per_call, 1u) + 2 + CAPTURE_RING_MAX;
        t->pending = calloc(t->pending_cap, sizeof(*t->pending));
        t->early = calloc(TRACKER_EARLY_MAX, sizeof(*t->early));
        t->n_buckets = 64;
        t->buckets = malloc(t->n_buckets * sizeof(*t->buckets));
        if (!t->pending || !t->early || id_table_init(&t->procs, sizeof(struct proc), 64) < 0 || !t->buckets ||
            fdpath_cache_init(&t->paths, 4096, opt->proc_root) < 0) {
                tracker_done(t);
                return -ENOMEM;
        }
        if (opt->summary_files && files_on(t, 0) < 0) {
                tracker_done(t);
                return -ENOMEM;
        }
        for (size_t b = 0; b < t->n_buckets; b++)
                t->buckets[b] = NIL;
        /* the first nodes, then doubling as requests pile up */
        if (nodes_resize(t, MIN(t->nodes_limit, (size_t) 1024)) < 0) {
                tracker_done(t);
                return -ENOMEM;
        }
        return 0;
}

static bool free_latency(void *entry, void *userdata) {
        free(((struct proc *) entry)->latency);
        return false;
}

void tracker_done(struct tracker *t) {
        for (uint32_t n = t->nodes ? t->oldest : NIL; n != NIL; n = t->nodes[n].gnext)
                path_str_unref(t->nodes[n].r.path);
        for (size_t i = 0; t->pending && i < t->n_pending; i++)
                path_str_unref(t->pending[i].path);
        if (t->procs.slots)
                id_table_filter(&t->procs, free_latency, NULL);
        id_table_done(&t->procs);
        free(t->nodes);
        free(t->buckets);
        free(t->pending);
        free(t->early);
        if (t->paths.slots)
                fdpath_cache_done(&t->paths);
        files_off(t);
        *t = (struct tracker) {};
}
