/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tracker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_summary.h"
#include "util.h"

#define NIL INFLIGHT_NIL

/* ---- processes ---- */

static struct proc *get_proc(struct tracker *t, uint32_t pid, const char *comm, uint64_t time,
                             const struct proc_identity *id) {
        /* its interval: the one in progress, or, before the first, from its first record */
        uint64_t start = t->next_summary ? t->next_summary - t->opt.summary_interval_ns : time;
        uint64_t unidentified = t->procs.unidentified;
        struct proc *p = procs_get(&t->procs, pid, comm, start, t->opt.paths && t->opt.paths_by_identity, id, time);
        if (!p)
                t->stats->no_memory++;
        t->stats->unidentified += t->procs.unidentified - unidentified;
        return p;
}

struct proc *tracker_proc(struct tracker *t, uint32_t pid, const char *comm, uint64_t time) {
        return get_proc(t, pid, comm, time, NULL);
}

void tracker_identity(struct tracker *t, uint32_t pid, const struct proc_identity *id, uint64_t time) {
        struct proc *p = procs_find(&t->procs, pid);
        /* another process of the same pid: the one before is gone, though its end was not seen (lost) */
        if (p && p->start_time && id->start_time && p->start_time != id->start_time)
                tracker_process_end(t, pid, time, END_EXIT);
        p = procs_find(&t->procs, pid);
        if (!p)
                (void) get_proc(t, pid, id->comm, time, id);
        else if (!p->start_time)
                procs_identify(p, id);
}

void tracker_prime(struct tracker *t) {
        procs_prime(&t->procs, &t->paths);
}

/* ---- a request's end ---- */

struct request *tracker_pending(struct tracker *t) {
        if (t->n_pending == t->pending_cap) {
                t->stats->no_memory++; /* cannot happen with the sizes of tracker_init; never overrun */
                return NULL;
        }
        return &t->pending[t->n_pending++];
}

void tracker_account(struct tracker *t, struct proc *p, const struct request *r) {
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

void tracker_end_reaped_in_user_space(struct tracker *t, struct proc *p, struct request *r) {
        r->end_time = r->ring_time;
        r->end = END_REAPED;
        r->kind = r->cancel_requested ? REQ_CANCELLED : REQ_COMPLETED;
        r->reaped_in_user_space = true;
        r->has_result = true;
        r->res = r->ring_res;
        r->res2 = r->ring_res2;
        tracker_account(t, p, r);
}

/* A request that will never be seen reaped: abandoned, or unknown when its process had completions that could
 * not be read (it may have been one of them); or, its completion seen in the ring, reaped in user space. */
static void end_unreaped(struct tracker *t, struct proc *p, struct request *r, uint64_t time, enum request_end why) {
        if (r->ring_seen) {
                tracker_end_reaped_in_user_space(t, p, r);
                return;
        }
        r->end_time = time;
        r->end = why;
        r->kind = REQ_ABANDONED;
        if (r->cqe_skip && why != END_EVICTED) {
                /* completed with no CQE, or still in flight: nothing says which */
                r->end = END_NO_CQE;
                r->kind = REQ_UNKNOWN;
        } else if (p && p->unidentified > 0 && why != END_EVICTED) {
                p->unidentified--;
                r->kind = REQ_UNKNOWN;
        }
        if (why == END_EVICTED && p)
                p->forgotten++;
        tracker_account(t, p, r);
}

void tracker_emit(struct tracker *t, const struct proc *p, struct request *r) {
        if (p)
                memcpy(r->comm, p->comm, sizeof(r->comm)); /* a fixed copy: every byte of it is defined */
        else {
                memset(r->comm, 0, sizeof(r->comm));
                r->comm[0] = '?';
        }
        r->unit = p ? p->unit : "";
        r->cgroup = p ? p->cgroup : "";
        r->ns_pid = p ? p->ns_pid : 0;
        if (t->cb.request)
                t->cb.request(t->cb.userdata, r);
        path_str_unref(r->path);
        r->path = NULL;
}

/* ---- the tables of requests in flight ---- */

static struct inflight_owner *owner_in(struct proc *p, const struct tracker *t, const struct inflight *f) {
        return !p ? NULL : f == &t->aio ? &p->aio : &p->uring;
}

void tracker_remove(struct tracker *t, struct inflight *f, uint32_t n, struct proc *p, struct request *ret) {
        inflight_remove(f, n, owner_in(p, t, f), ret);
        if (p && ret->ring_seen)
                p->n_done_in_ring--;
        if (p && ret->stuck_told)
                p->stuck--;
}

static uint64_t submitted_at(const struct inflight *f, uint32_t n) {
        return n == NIL ? UINT64_MAX : inflight_request(f, n)->submit_time;
}

/* Of two nodes, one in each table, the one submitted first (AIO's on a tie); *ret_f its table. */
static uint32_t older_of(struct tracker *t, uint32_t in_aio, uint32_t in_uring, struct inflight **ret_f) {
        bool uring = submitted_at(&t->uring, in_uring) < submitted_at(&t->aio, in_aio);
        *ret_f = uring ? &t->uring : &t->aio;
        return uring ? in_uring : in_aio;
}

bool tracker_make_room(struct tracker *t, struct proc *p, struct inflight *f, uint64_t time) {
        struct inflight *from = NULL;
        uint32_t victim = NIL;
        if (p->aio.n + p->uring.n >= t->opt.max_inflight_per_process)
                victim = older_of(t, p->aio.head, p->uring.head, &from);
        else if (t->aio.used + t->uring.used >= t->opt.max_inflight || inflight_reserve(f) < 0)
                victim = older_of(t, t->aio.oldest, t->uring.oldest, &from);
        if (victim == NIL)
                return inflight_reserve(f) == 0;
        struct request *r = tracker_pending(t);
        if (!r)
                return false;
        uint32_t pid = inflight_request(from, victim)->pid;
        struct proc *owner = pid == p->pid ? p : procs_find(&t->procs, pid);
        tracker_remove(t, from, victim, owner, r);
        end_unreaped(t, owner, r, time, END_EVICTED);
        return inflight_reserve(f) == 0;
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
                struct proc *p = procs_find(&t->procs, e->pid);
                struct request r = *e;
                tracker_account(t, p, &r);
                tracker_emit(t, p, &r);
        }
        t->n_early = k;
}

/* Every request of pid in f (of one context, or all when ctx is 0) that will never be reaped, oldest first. */
static void abandon_in(struct tracker *t, struct inflight *f, struct proc *p, uint64_t ctx, uint64_t time,
                       enum request_end why) {
        struct inflight_owner *o = owner_in(p, t, f);
        for (uint32_t n = o->head; n != NIL;) {
                uint32_t next = inflight_owner_next(f, n);
                if (ctx == 0 || inflight_request(f, n)->ctx == ctx) {
                        struct request r;
                        tracker_remove(t, f, n, p, &r);
                        end_unreaped(t, p, &r, time, why);
                        tracker_emit(t, p, &r);
                }
                n = next;
        }
}

/* Every request of a process at its end, in both tables, in the order they were submitted. */
static void abandon_all(struct tracker *t, struct proc *p, uint64_t time, enum request_end why) {
        for (;;) {
                struct inflight *f;
                uint32_t n = older_of(t, p->aio.head, p->uring.head, &f);
                if (n == NIL)
                        return;
                struct request r;
                tracker_remove(t, f, n, p, &r);
                end_unreaped(t, p, &r, time, why);
                tracker_emit(t, p, &r);
        }
}

void tracker_flush(struct tracker *t) {
        for (size_t i = 0; i < t->n_pending; i++) {
                struct request *r = &t->pending[i];
                tracker_emit(t, procs_find(&t->procs, r->pid), r);
        }
        t->n_pending = 0;
        if (t->destroy_ctx) {
                uint64_t ctx = t->destroy_ctx;
                t->destroy_ctx = 0;
                struct proc *p = procs_find(&t->procs, t->destroy_pid);
                if (p)
                        abandon_in(t, &t->aio, p, ctx, t->destroy_time, END_DESTROY);
        }
}

/* ---- summaries ---- */

static void emit_summary(struct tracker *t, struct proc *p, uint64_t end, bool last) {
        uint64_t start = p->interval_start;
        if (t->cb.summary)
                t->cb.summary(t->cb.userdata, &(struct proc_summary) {
                        .pid = p->pid, .comm = p->comm, .unit = p->unit, .cgroup = p->cgroup, .ns_pid = p->ns_pid,
                        .start = start,
                        .end = end, .iv = &p->iv,
                        .inflight = proc_in_flight(p), .latency = p->latency, .last = last,
                        .records_lost = t->interval_lost });
}

static void interval_reset(struct proc *p, uint64_t start) {
        p->iv = (struct proc_interval) { .inflight_max = proc_in_flight(p) };
        histogram_reset(p->latency);
        p->interval_start = start;
}

void tracker_kernel_sum(struct tracker *t, uint32_t pid, uint64_t start_time, const struct capture_sum *s,
                        uint64_t time) {
        struct proc *p = procs_find(&t->procs, pid);
        if (p && p->start_time && start_time && p->start_time != start_time)
                return; /* of a process gone whose end was not seen: its records were lost */
        if (!p)
                p = tracker_proc(t, pid, NULL, time);
        if (!p)
                return;
        struct proc_interval *iv = &p->iv;
        struct trace_stats *st = t->stats;
        _Static_assert(CAPTURE_SUM_OPS == REQ_OPS, "the kernel's ops are the daemon's");
        uint64_t completed = 0;
        for (unsigned i = 0; i < REQ_OPS; i++) {
                iv->submitted[i] += s->submitted[i];
                iv->completed[i] += s->completed[i];
                completed += s->completed[i];
        }
        iv->bytes_read += s->bytes_read;
        iv->bytes_written += s->bytes_written;
        iv->errors += s->errors;
        iv->cancelled += s->cancelled;
        iv->abandoned += s->abandoned;
        iv->stale += s->stale;
        iv->unmatched += s->unmatched;
        iv->unknown += s->unknown;
        iv->reaped_in_user_space += s->reaped_in_user_space;
        iv->submitted_io_uring += s->submitted_io_uring;
        iv->cq_overflows += s->cq_overflows;
        for (unsigned i = 0; i < REQ_OPS; i++)
                iv->punted[i] += s->punted[i];
        iv->polled += s->polled;
        /* the changes of one interval, taken in its order: from what was in flight before them */
        uint64_t before = p->kernel_inflight, most = before + s->inflight_rise_max;
        iv->inflight_max = MAX(iv->inflight_max, (uint32_t) MIN(most, UINT32_MAX));
        int64_t change = (int64_t) s->inflight_change;
        p->kernel_inflight = change < 0 && (uint64_t) -change > before ? 0 : before + (uint64_t) change;
        iv->active = true;
        st->completed += completed;
        st->cancelled += s->cancelled;
        st->abandoned += s->abandoned;
        st->stale += s->stale;
        st->unmatched += s->unmatched;
        st->unknown += s->unknown;
        st->cq_overflows += s->cq_overflows;
        st->summed_untracked += s->untracked;
        struct histogram *h = p->latency;
        if (s->lat_count) {
                for (unsigned b = 0; b < HIST_BUCKETS; b++)
                        h->buckets[b] += s->buckets[b];
                if (h->count == 0 || s->lat_min < h->min)
                        h->min = s->lat_min;
                h->max = MAX(h->max, s->lat_max);
                h->count += s->lat_count;
                h->sum += s->lat_sum;
        }
}

void tracker_process_end(struct tracker *t, uint32_t pid, uint64_t time, enum request_end why) {
        tracker_flush(t);
        release_early(t, pid, UINT64_MAX); /* its threads have all left their calls */
        struct proc *p = procs_find(&t->procs, pid);
        fdpath_forget(&t->paths, pid);
        if (p && t->cb.collect && why == END_EXIT) {
                /* what the kernel summed of it, to the end (its requests in flight abandoned there) */
                t->cb.collect(t->cb.userdata, pid, p->start_time);
                p = procs_find(&t->procs, pid);
        }
        if (!p)
                return;
        abandon_all(t, p, time, why);
        p->unidentified = 0;
        p->forgotten = 0;
        if (why != END_EXIT)
                return;
        if (p->iv.active && t->opt.summary_interval_ns)
                emit_summary(t, p, time, true);
        procs_remove(&t->procs, p);
}

static bool start_interval(struct proc *p, void *userdata) {
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
static bool end_interval(struct proc *p, void *userdata) {
        struct interval_end *ie = userdata;
        if (p->iv.active) {
                ie->any = true;
                emit_summary(ie->t, p, ie->end, false);
        } else if (p->aio.n + p->uring.n == 0 && p->kernel_inflight == 0)
                return true;
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

/* ---- requests stuck ---- */

/* The requests of f in flight since before `before` and not said to be stuck yet: said so, once each, as they
 * are now.  The table is in the order the submits were seen: the walk ends at the first younger. */
static void note_stuck_in(struct tracker *t, struct inflight *f, uint64_t before, uint64_t now) {
        for (uint32_t n = f->oldest; n != NIL; n = inflight_next(f, n)) {
                struct request *r = inflight_request(f, n);
                if (r->submit_time >= before)
                        break;
                /* completed already (seen in its AIO ring), or with no completion asked for: not known stuck */
                if (r->stuck_told || r->ring_seen || r->cqe_skip || !r->submit_known)
                        continue;
                struct proc *p = procs_find(&t->procs, r->pid);
                r->stuck_told = true;
                if (p)
                        p->stuck++;
                t->stats->stuck++;
                struct request told = *r;
                told.path = path_str_ref(r->path);
                told.kind = REQ_STUCK;
                told.end_time = now;
                tracker_emit(t, p, &told);
        }
}

static void note_stuck(struct tracker *t, uint64_t now) {
        uint64_t after = t->opt.stuck_after_ns;
        if (!after || now == UINT64_MAX || now < t->next_stuck_look)
                return;
        t->next_stuck_look = now + TRACKER_STUCK_LOOK_NS;
        if (now > after) {
                note_stuck_in(t, &t->aio, now - after, now);
                note_stuck_in(t, &t->uring, now - after, now);
        }
}

void tracker_set_stuck_after(struct tracker *t, uint64_t stuck_after_ns) {
        t->opt.stuck_after_ns = stuck_after_ns;
        t->next_stuck_look = 0;
}

void tracker_tick(struct tracker *t, uint64_t until) {
        note_stuck(t, until);
        if (t->n_early)
                release_early(t, 0, until > TRACKER_EARLY_HOLD_NS ? until - TRACKER_EARLY_HOLD_NS : 0);
        uint64_t interval = t->opt.summary_interval_ns;
        if (!interval || until > UINT64_MAX - 2 * interval)
                return; /* the end (UINT64_MAX), or a time no clock gives: nothing to wrap around */
        if (t->next_summary == 0) {
                /* the processes seen so far keep the start of their first record */
                t->next_summary = until + interval;
                t->files_start = until;
                return;
        }
        while (until >= t->next_summary) {
                struct interval_end ie = { .t = t, .end = t->next_summary };
                if (t->cb.collect)
                        t->cb.collect(t->cb.userdata, 0, 0);
                procs_filter(&t->procs, end_interval, &ie);
                emit_file_summaries(t, t->next_summary, false);
                t->interval_lost = 0;
                t->next_summary += interval;
                if (!ie.any && until >= t->next_summary) {
                        /* idle: skip the empty intervals at once */
                        uint64_t skip = (until - t->next_summary) / interval + 1;
                        t->next_summary += skip * interval;
                        uint64_t start = t->next_summary - interval;
                        t->files_start = start;
                        procs_filter(&t->procs, start_interval, &start);
                }
        }
}

struct last_summary {
        struct tracker *t;
        uint64_t now;
};

static bool finish_interval(struct proc *p, void *userdata) {
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
        if (t->cb.collect)
                t->cb.collect(t->cb.userdata, 0, 0);
        if (t->opt.summary_interval_ns) {
                procs_filter(&t->procs, finish_interval, &(struct last_summary) { .t = t, .now = now });
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
        return t->aio.used + t->uring.used;
}

size_t tracker_inflight(struct tracker *t, uint32_t pid) {
        const struct proc *p = procs_find(&t->procs, pid);
        return p ? proc_in_flight(p) : 0;
}

struct foreach_process {
        void (*fn)(void *userdata, const char *comm, const char *unit, uint32_t in_flight, uint32_t stuck);
        void *userdata;
};

static bool visit_process(struct proc *p, void *userdata) {
        const struct foreach_process *f = userdata;
        f->fn(f->userdata, p->comm, p->unit, proc_in_flight(p), p->stuck + p->kernel_stuck);
        return false;
}

void tracker_foreach_process(struct tracker *t,
                             void (*fn)(void *userdata, const char *comm, const char *unit, uint32_t in_flight,
                                        uint32_t stuck),
                             void *userdata) {
        procs_filter(&t->procs, visit_process, &(struct foreach_process) { .fn = fn, .userdata = userdata });
}

int tracker_init(struct tracker *t, const struct tracker_options *opt, const struct tracker_callbacks *cb,
                 struct trace_stats *stats) {
        *t = (struct tracker) { .opt = *opt, .cb = cb ? *cb : (struct tracker_callbacks) {}, .stats = stats };
        if (!t->opt.max_inflight)
                t->opt.max_inflight = 1;
        if (!t->opt.max_inflight_per_process)
                t->opt.max_inflight_per_process = t->opt.max_inflight;
        /* a call ends at most max_iocbs requests (the capture's record of more of its items, CAPTURE_MORE_ITEMS),
         * and its submit may evict or replace as many; and what its look at the ring ends */
        t->pending_cap = 2 * (size_t) MAX(MAX(opt->max_iocbs_per_call, 1u), CAPTURE_MORE_ITEMS) + 2 + CAPTURE_RING_MAX;
        t->pending = calloc(t->pending_cap, sizeof(*t->pending));
        t->early = calloc(TRACKER_EARLY_MAX, sizeof(*t->early));
        if (!t->pending || !t->early || procs_init(&t->procs, opt->proc_root) < 0 ||
            inflight_init(&t->aio, t->opt.max_inflight) < 0 || inflight_init(&t->uring, t->opt.max_inflight) < 0 ||
            fdpath_cache_init(&t->paths, 4096, opt->proc_root) < 0 || (opt->summary_files && files_on(t, 0) < 0)) {
                tracker_done(t);
                return -ENOMEM;
        }
        return 0;
}

void tracker_done(struct tracker *t) {
        inflight_done(&t->aio);
        inflight_done(&t->uring);
        for (size_t i = 0; t->pending && i < t->n_pending; i++)
                path_str_unref(t->pending[i].path);
        procs_done(&t->procs);
        free(t->pending);
        free(t->early);
        if (t->paths.slots)
                fdpath_cache_done(&t->paths);
        files_off(t);
        *t = (struct tracker) {};
}
