/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "syscalls.h"
#include "uring.h"
#include "util.h"

static void emit(struct engine *e, const struct entry *en) {
        if (e->cb.emit)
                e->cb.emit(e->cb.userdata, en);
}

static void on_request(void *userdata, const struct request *r) {
        struct engine *e = userdata;
        /* a request stuck is said whatever else is written: it is a warning */
        if ((e->opt.records & RECORD_REQUESTS) || r->kind == REQ_STUCK)
                emit(e, &(struct entry) { .kind = ENTRY_REQUEST, .time = r->end_time, .request = r });
}

static void on_summary(void *userdata, const struct proc_summary *sum) {
        struct engine *e = userdata;
        if (e->cb.summary)
                e->cb.summary(e->cb.userdata, sum);
        if ((e->opt.records & RECORD_SUMMARY) && (e->opt.summary_by & SUMMARY_BY_PROCESS))
                emit(e, &(struct entry) { .kind = ENTRY_SUMMARY, .time = sum->end, .summary = sum });
}

static void on_file_summary(void *userdata, const struct file_summary *sum) {
        struct engine *e = userdata;
        emit(e, &(struct entry) { .kind = ENTRY_FILE_SUMMARY, .time = sum->end, .file_summary = sum });
}

static void on_collect(void *userdata, uint32_t pid, uint64_t start_time) {
        struct engine *e = userdata;
        e->cb.collect(e->cb.userdata, pid, start_time);
}

/* File summaries are made only when they are written; paths looked up for them or for the requests. */
static unsigned files_named(unsigned records, unsigned summary_by, unsigned summary_files) {
        return (records & RECORD_SUMMARY) && (summary_by & SUMMARY_BY_FILE) ? summary_files : 0;
}

int engine_init(struct engine *e, struct ring *rings, size_t n_rings, const struct event_table *events,
                const struct engine_options *opt, const struct engine_callbacks *cb) {
        *e = (struct engine) {
                .rings = rings,
                .n_rings = n_rings,
                .events = events,
                .cb = *cb,
                .opt = *opt,
        };
        if (!e->opt.proc_root)
                e->opt.proc_root = "/proc";
        if (!e->opt.summary_by)
                e->opt.summary_by = SUMMARY_BY_PROCESS;
        e->cursors = calloc(n_rings ? n_rings : 1, sizeof(*e->cursors));
        e->heap = calloc(n_rings ? n_rings : 1, sizeof(*e->heap));
        e->lost_per_ring = calloc(n_rings ? n_rings : 1, sizeof(*e->lost_per_ring));
        e->lost_noted = calloc(n_rings ? n_rings : 1, sizeof(*e->lost_noted));
        e->samples_per_ring = calloc(n_rings ? n_rings : 1, sizeof(*e->samples_per_ring));
        e->more_iocbs = calloc(CAPTURE_MORE_ITEMS, sizeof(*e->more_iocbs));
        e->more_events = calloc(CAPTURE_MORE_ITEMS, sizeof(*e->more_events));
        if (!e->cursors || !e->heap || !e->lost_per_ring || !e->lost_noted || !e->samples_per_ring ||
            !e->more_iocbs || !e->more_events)
                goto fail;
        if (thread_table_init(&e->threads, 1024) < 0)
                goto fail;
        struct tracker_options to = {
                .max_inflight = opt->max_inflight,
                .max_inflight_per_process = opt->max_inflight_per_process,
                .max_iocbs_per_call = opt->max_iocbs_per_call,
                .summary_interval_ns = opt->summary_interval_ns,
                .stuck_after_ns = opt->stuck_after_ns,
                .summary_files = files_named(opt->records, opt->summary_by, opt->summary_files),
                .paths = (opt->records & RECORD_REQUESTS) ||
                         files_named(opt->records, opt->summary_by, opt->summary_files),
                .paths_by_identity = opt->captured,
                .proc_root = e->opt.proc_root,
        };
        struct tracker_callbacks tc = { .request = on_request, .summary = on_summary,
                                        .file_summary = on_file_summary, .collect = cb->collect ? on_collect : NULL,
                                        .userdata = e };
        if (tracker_init(&e->tracker, &to, &tc, &e->stats) < 0)
                goto fail;
        if (call_ctx_init(&e->cctx, opt->max_iocbs_per_call, &e->stats) < 0)
                goto fail;
        return 0;
fail:
        engine_done(e);
        return -ENOMEM;
}

void engine_done(struct engine *e) {
        call_ctx_done(&e->cctx);
        tracker_done(&e->tracker);
        id_table_done(&e->threads);
        free(e->cursors);
        free(e->heap);
        e->heap = NULL;
        free(e->lost_per_ring);
        free(e->lost_noted);
        e->lost_noted = NULL;
        free(e->samples_per_ring);
        free(e->more_iocbs);
        free(e->more_events);
        e->more_iocbs = NULL;
        e->more_events = NULL;
        e->cursors = NULL;
        e->lost_per_ring = NULL;
        e->samples_per_ring = NULL;
}

static void read_comm(const struct engine *e, struct thread *th) {
        char path[64];
        /* /proc/TID works for any thread, listed or not, so the pid is not needed yet */
        snprintf(path, sizeof(path), "%s/%u/comm", e->opt.proc_root, th->tid);
        th->comm_known = true;
        if (read_small_file(path, th->comm, sizeof(th->comm)) <= 0) {
                /* gone before its first record was indexed: say so rather than guess */
                snprintf(th->comm, sizeof(th->comm), "?");
                return;
        }
        th->comm[strcspn(th->comm, "\n")] = 0;
}

static void note_record(void *userdata, uint32_t tid, uint64_t time) {
        struct engine *e = userdata;
        struct thread *th = thread_get(&e->threads, tid);
        if (!th)
                return; /* the reader then finds no thread and marks what it read stale */
        if (time > th->newest_seen)
                th->newest_seen = time;
        /* as early as possible: a short-lived thread may be gone by the time its records are processed */
        if (!th->comm_known)
                read_comm(e, th);
}

/* Index what has arrived since the last look: the newest record per thread. */
static void rescan(struct engine *e) {
        for (size_t i = 0; i < e->n_rings; i++)
                if (ring_refresh(&e->rings[i]))
                        ring_scan(&e->rings[i], note_record, e);
        e->rescanned = true;
}

/* A drain's first look.  Read afterwards, a thread's name must be read while it lives and a value read must be
 * checked against its thread's newest record, so what arrived is indexed at once.  With the capture, records
 * carry the thread's name and the values the call used: only a read the capture missed needs the index, and it
 * indexes then (read_call_memory); a pass over every record before processing them is not paid. */
static void look(struct engine *e) {
        if (!e->opt.captured) {
                rescan(e);
                return;
        }
        for (size_t i = 0; i < e->n_rings; i++)
                (void) ring_refresh(&e->rings[i]);
}

static void handle_enter(struct engine *e, struct thread *th, const struct sample *s, const struct event_desc *d) {
        if (th->enter)
                e->stats.unpaired_enter++; /* its exit never came: lost, or the thread died in the call */
        th->pid = s->pid;
        th->enter = d;
        th->enter_time = s->time;
        th->enter_cpu = s->cpu;
        for (unsigned i = 0; i < d->n_args; i++)
                th->args[i] = load_field(s->raw, s->raw_size, d->args[i].offset, d->args[i].size);
}

static int64_t sign_extend(uint64_t v, unsigned size) {
        if (size >= 8)
                return (int64_t) v;
        unsigned shift = 64 - 8 * size;
        return (int64_t) (v << shift) >> shift;
}

/* th is not used after augmenting: the rescan may grow the thread table and move it. */
/* The call's start and arguments: from the capture's record, from the thread's enter record, or from the
 * registers at exit of a call begun before tracing. */
static void pair_enter(struct engine *e, struct thread *th, struct aio_call *call, const struct event_desc *d,
                       const struct capture_view *capture, bool captured) {
        if (captured && (capture->flags & CAPTURE_F_ENTER)) {
                /* the program kept the enter and wrote it here, in place of a record of its own */
                if (th->enter)
                        e->stats.unpaired_enter++;
                call->enter_seen = call->args_known = true;
                call->enter_time = capture->enter_time;
                call->enter_cpu = capture->enter_cpu;
                memcpy(call->args, capture->args, sizeof(call->args));
        } else if (th->enter && th->enter->syscall == d->syscall) {
                call->enter_seen = call->args_known = true;
                call->enter_time = th->enter_time;
                call->enter_cpu = th->enter_cpu;
                memcpy(call->args, th->args, sizeof(call->args));
        } else {
                if (th->enter)
                        e->stats.unpaired_enter++;
                e->stats.unpaired_exit++;
                if (captured && (capture->flags & CAPTURE_F_ARGS_AT_EXIT)) {
                        /* begun before tracing: no start, but its arguments, and what they pointed to */
                        call->args_known = true;
                        memcpy(call->args, capture->args, sizeof(call->args));
                        for (unsigned i = syscall_desc(d->syscall)->n_args; i < AIO_ARGS_MAX; i++)
                                call->args[i] = 0; /* registers, not arguments */
                }
        }
        th->enter = NULL;
}

/* What the call's memory held: as the capture took it during the call, or read now (process_vm_readv). */
static void read_call_memory(struct engine *e, size_t ring, const struct sample *s, struct aio_call *call,
                             const struct call_handler *h, struct capture_view *capture, bool captured) {
        if (!h)
                return;
        if (captured) {
                /* Captured while the caller was still in the call: what the kernel itself read. */
                e->stats.captured++;
                e->cctx.capture = capture;
                h->augment(&e->cctx, call);
                e->cctx.capture = NULL;
                return;
        }
        if (!e->opt.read_memory)
                return;
        /* A read costs a system call or two, several times what the record does: with the ring more than half
         * full, the reads give way before records would be lost.  The space already processed goes back to the
         * kernel first, so that only what is really waiting counts. */
        struct ring *rg = &e->rings[ring];
        ring_commit(rg);
        e->cctx.skip_reads = ring_used(rg) > rg->size / 2;
        h->augment(&e->cctx, call);
        if (e->cctx.skip_reads) {
                e->cctx.skip_reads = false;
                return;
        }
        /* The thread may have reused the memory once it returned; if the rings already hold a later record of it,
         * what was read cannot be vouched for. */
        rescan(e);
        const struct thread *now = thread_find(&e->threads, s->tid);
        if (!now || now->newest_seen > s->time) /* not found: nothing vouches for it either */
                call_mark_stale(&e->cctx, call);
}

/* The call's requests, and the completions the capture saw in its context's ring.  Those may be of earlier uses
 * of iocbs an io_submit submits again, or of requests of this very call (done before it returned): matched
 * before the call, then what is left after it.  Those an io_getevents returned are its own: after it. */
static void match_requests(struct engine *e, struct aio_call *call, const struct capture_view *capture,
                           bool captured, uint64_t time) {
        struct io_event seen[CAPTURE_RING_MAX];
        bool reaped[CAPTURE_RING_MAX], taken[CAPTURE_RING_MAX];
        size_t n_seen = captured && call->args_known
                                ? capture_view_ring(capture, call->args[0], seen, reaped, CAPTURE_RING_MAX)
                                : 0;
        bool by_call = capture->flags & CAPTURE_F_RING_BY_CALL;
        for (size_t i = 0; i < n_seen; i++)
                taken[i] = call->syscall == AIO_IO_SUBMIT &&
                           aio_requests_ring_event(&e->tracker, call->pid, call->args[0], &seen[i],
                                                   reaped[i] && !by_call, time);
        aio_requests_call(&e->tracker, call, e->drains);
        for (size_t i = 0; i < n_seen; i++)
                if (!taken[i])
                        (void) aio_requests_ring_event(&e->tracker, call->pid, call->args[0], &seen[i],
                                                       reaped[i] && !by_call, time);
}

static void handle_exit(struct engine *e, size_t ring, struct thread *th, const struct sample *s,
                        const struct event_desc *d) {
        th->pid = s->pid;
        th->last_exit_time = s->time;
        struct aio_call *call = &e->call;
        *call = (struct aio_call) {
                .syscall = d->syscall,
                .pid = s->pid,
                .tid = s->tid,
                .exit_time = s->time,
                .exit_cpu = s->cpu,
                .ret = sign_extend(event_field(d, s->raw, s->raw_size, EXIT_RET),
                                   d->args[0].size),
                .array_state = MEM_NOT_READ,
                .aux_state = MEM_NOT_READ,
        };
        struct capture_view capture;
        int r = capture_view_parse(s->raw, s->raw_size, d->record_size, &capture);
        if (r == -EBADMSG)
                e->stats.bad_captures++;
        pair_enter(e, th, call, d, &capture, r == 0);
        /* The name the capture took at the call beats one read from /proc later (or not at all). */
        if (r == 0 && capture.comm[0]) {
                memcpy(th->comm, capture.comm, sizeof(th->comm));
                th->comm_known = true;
        } else if (!th->comm_known)
                read_comm(e, th);
        _Static_assert(sizeof(call->comm) == sizeof(th->comm), "comm sizes");
        memcpy(call->comm, th->comm, sizeof(call->comm));
        read_call_memory(e, ring, s, call, call_handler_for(d->syscall), &capture, r == 0);
        e->stats.calls++;
        /* The requests it ended come after the call itself. */
        match_requests(e, call, &capture, r == 0, s->time);
        if (e->opt.records & RECORD_SYSCALLS)
                emit(e, &(struct entry) { .kind = ENTRY_CALL, .time = s->time, .call = call });
        tracker_flush(&e->tracker);
}

/* A file's path the capture walked in the kernel: remembered for the file's identity, so that its requests have
 * their path whatever became of the fd. */
static void handle_path(struct engine *e, const uint8_t *at, size_t size) {
        struct capture_path h;
        memcpy(&h, at, sizeof(h));
        if (h.len == 0 || h.len > CAPTURE_PATH_MAX || h.len > size - sizeof(h))
                e->stats.bad_captures++;
        else if (e->tracker.opt.paths &&
                 fdpath_learn(&e->tracker.paths, h.mnt_id, h.ino, (const char *) at + sizeof(h), h.len) < 0)
                e->stats.no_memory++;
}

/* A process as the kernel knew it before its thread's first record: what names it. */
static void handle_identity(struct engine *e, const struct sample *s, const uint8_t *at, size_t size) {
        struct capture_identity h;
        memcpy(&h, at, sizeof(h));
        if (h.cgroup_len > CAPTURE_PATH_MAX || h.cgroup_len > size - sizeof(h) || h.pid == 0) {
                e->stats.bad_captures++;
                return;
        }
        char comm[17];
        memcpy(comm, h.comm, sizeof(h.comm));
        comm[16] = 0;
        struct proc_identity id = { .comm = comm, .start_time = h.start_time, .ns_pid = h.ns_pid,
                                    .cgroup = h.cgroup_len ? (const char *) at + sizeof(h) : NULL,
                                    .cgroup_len = h.cgroup_len };
        tracker_identity(&e->tracker, h.pid, &id, s->time);
}

/* A call's iocbs or io_events past what its record held (max_iocbs_per_call), each decoded as its record's are,
 * for its requests: the call itself was written with its record. */
static void handle_more(struct engine *e, const struct sample *s, const uint8_t *at, size_t size) {
        struct capture_more h;
        memcpy(&h, at, sizeof(h));
        size_t item = h.kind == CAPTURE_MORE_IOCBS ? sizeof(struct capture_more_iocb) : IO_EVENT_SIZE;
        if ((h.kind != CAPTURE_MORE_IOCBS && h.kind != CAPTURE_MORE_EVENTS) || h.n > CAPTURE_MORE_ITEMS ||
            h.n * item > size - sizeof(h)) {
                e->stats.bad_captures++;
                return;
        }
        const uint8_t *items = at + sizeof(h);
        /* the call's exit is its record's, which came just before these from the same thread */
        const struct thread *th = thread_find(&e->threads, s->tid);
        uint64_t exit_time = th && th->last_exit_time <= s->time && th->last_exit_time >= h.enter_time
                                     ? th->last_exit_time
                                     : s->time;
        struct aio_call call = { .syscall = h.syscall, .pid = s->pid, .tid = s->tid, .enter_time = h.enter_time,
                                 .exit_time = exit_time, .enter_seen = h.enter_time != 0, .args_known = true,
                                 .args = { h.ctx } };
        for (uint32_t i = 0; i < h.n; i++) {
                if (h.kind == CAPTURE_MORE_EVENTS) {
                        struct event_info *ev = &e->more_events[i];
                        *ev = (struct event_info) { .state = MEM_OK };
                        io_event_decode(ev, items + i * item);
                        continue;
                }
                struct capture_more_iocb it;
                memcpy(&it, items + i * item, sizeof(it));
                struct iocb_info *cb = &e->more_iocbs[i];
                *cb = (struct iocb_info) { .addr = it.ptr, .addr_state = it.ptr ? MEM_OK : MEM_FAULT,
                                           .state = it.valid == IOCB_SIZE ? MEM_OK : MEM_FAULT,
                                           .iov_state = MEM_NOT_READ };
                if (cb->state == MEM_OK)
                        iocb_decode(cb, it.iocb);
                cb->file_known = it.file.mnt_id != 0;
                cb->file_mnt_id = it.file.mnt_id;
                cb->file_ino = it.file.ino;
        }
        bool iocbs = h.kind == CAPTURE_MORE_IOCBS;
        aio_requests_more(&e->tracker, &call, iocbs ? e->more_iocbs : NULL, iocbs ? NULL : e->more_events, h.n,
                          e->drains);
        tracker_flush(&e->tracker);
}

/* What the capture tells apart from any call, under io_submit's exit: a file's path (CAPTURE_PATH_MAGIC), a
 * process's identity (CAPTURE_IDENTITY_MAGIC), a call's items past its record's (CAPTURE_MORE_MAGIC).  True when
 * it was one of them. */
static bool handle_told(struct engine *e, const struct sample *s, const struct event_desc *d) {
        size_t at = (d->record_size + 7) & ~(size_t) 7;
        uint32_t magic;
        if (d->syscall != AIO_IO_SUBMIT || s->raw_size < at + sizeof(magic))
                return false;
        memcpy(&magic, s->raw + at, sizeof(magic));
        size_t size = s->raw_size - at;
        if (magic == CAPTURE_PATH_MAGIC && size >= sizeof(struct capture_path))
                handle_path(e, s->raw + at, size);
        else if (magic == CAPTURE_IDENTITY_MAGIC && size >= sizeof(struct capture_identity))
                handle_identity(e, s, s->raw + at, size);
        else if (magic == CAPTURE_MORE_MAGIC && size >= sizeof(struct capture_more))
                handle_more(e, s, s->raw + at, size);
        else
                return false;
        return true;
}

/* io_destroy's enter, written by the capture only to carry the ring's last completions (CAPTURE_F_RING_ONLY):
 * true when it was that. */
static bool handle_ring_only(struct engine *e, const struct sample *s, const struct event_desc *d) {
        struct capture_view v;
        if (d->syscall != AIO_IO_DESTROY || capture_view_parse(s->raw, s->raw_size, d->record_size, &v) != 0 ||
            !(v.flags & CAPTURE_F_RING_ONLY))
                return false;
        uint64_t ctx = load_field(s->raw, s->raw_size, d->args[0].offset, d->args[0].size); /* io_destroy's ctx */
        struct io_event seen[CAPTURE_RING_MAX];
        bool reaped[CAPTURE_RING_MAX];
        size_t n = capture_view_ring(&v, ctx, seen, reaped, CAPTURE_RING_MAX);
        bool by_call = v.flags & CAPTURE_F_RING_BY_CALL;
        for (size_t i = 0; i < n; i++)
                (void) aio_requests_ring_event(&e->tracker, s->pid, ctx, &seen[i], reaped[i] && !by_call, s->time);
        tracker_flush(&e->tracker);
        return true;
}

/* A request of an io_uring ring: the capture selected its process (no system call of it to select by). */
static void handle_uring(struct engine *e, const struct sample *s, const struct event_desc *d) {
        struct uring_event u;
        if (uring_event_parse(s->raw, s->raw_size, d, s->pid, s->tid, &u) < 0) {
                e->stats.bad_records++;
                return;
        }
        bool held_file = u.cap_known && (u.cap.flags & CAPTURE_URING_F_FILE);
        struct uring_completion done = { .pid = u.pid, .tid = u.tid, .ring = u.ring, .req = u.req,
                                         .user_data = u.user_data, .res = u.res, .cflags = u.cflags,
                                         .kernel_file = held_file ? &u.cap.file : NULL, .time = s->time };
        if (u.kind == EVENT_URING_ASYNC || u.kind == EVENT_URING_POLL_ARM) {
                uring_requests_async(&e->tracker, u.pid, u.ring, u.req, u.opcode,
                                     u.kind == EVENT_URING_POLL_ARM ? REQ_ASYNC_POLL : REQ_ASYNC_IO_WQ);
                return;
        }
        if (u.kind == EVENT_URING_OVERFLOW) {
                done.kernel_file = NULL;
                uring_requests_overflow(&e->tracker, &done, u.cqe_dropped);
                tracker_flush(&e->tracker);
                return;
        }
        if (!u.submit) {
                uring_requests_complete(&e->tracker, &done, e->drains);
                tracker_flush(&e->tracker);
                return;
        }
        const struct capture_uring *c = u.cap_known ? &u.cap : NULL;
        if (c && (c->flags & CAPTURE_URING_F_NOTE)) {
                char msg[160];
                snprintf(msg, sizeof(msg), "%.16s (pid %u) submits io_uring requests: not traced (io_uring = false)",
                         c->comm, u.pid);
                emit(e, &(struct entry) { .kind = ENTRY_INFO, .time = s->time, .message = msg });
                return;
        }
        uint16_t opcode = uring_request_opcode(u.opcode, c ? c->rw_flags : 0);
        bool details = c && (c->flags & CAPTURE_URING_F_DETAILS);
        struct capture_file file = c ? c->file : (struct capture_file) {};
        /* readv and writev: len counts iovecs, not bytes */
        bool vectored = uring_op_vectored(u.opcode);
        /* without the capture's part, no fd read; an op no kernel knows, failed at submit, has its SQE's */
        bool failed = c && (c->flags & CAPTURE_URING_F_FAILED);
        bool has_file = uring_op_has_file(u.opcode) || (failed && !uring_op_known(u.opcode));
        struct uring_submit us = {
                .pid = u.pid, .tid = u.tid, .comm = c ? c->comm : NULL, .ring = u.ring, .req = u.req,
                .user_data = u.user_data, .time = s->time, .opcode = opcode, .details = details,
                .nbytes_known = details && (!vectored || (c->flags & CAPTURE_URING_F_BYTES)), .fixed_file = c && (c->flags & CAPTURE_URING_F_FIXED_FILE),
                .no_file = !c || !has_file, .failed = failed, .cqe_skip = u.cqe_skip, .linked = u.linked,
                .fd = c ? c->fd : 0, .off = c ? (int64_t) c->off : 0,
                .len = !c ? 0 : vectored && (c->flags & CAPTURE_URING_F_BYTES) ? c->bytes : c->len,
                /* RWF_* where the op has them; an fsync's are its own (IORING_FSYNC_DATASYNC) */
                .rw_flags = c && uring_op_layout(u.opcode) == URING_LAYOUT_RW && !vectored ? c->rw_flags : 0,
                .file = file.mnt_id ? &file : NULL,
        };
        e->stats.uring_submits++;
        uring_requests_submit(&e->tracker, &us, e->drains);
        tracker_flush(&e->tracker);
}

/* Whether the daemon watches the thread, asked once (and again after an exec or a reload).  A thread that cannot
 * be told about any more is counted, not traced. */
static bool thread_selected(struct engine *e, struct thread *th, uint32_t pid, uint32_t tid) {
        if (th->selected && th->select_generation == e->select_generation)
                return th->selected == 1;
        if (!th->comm_known)
                read_comm(e, th);
        int r = e->cb.select(e->cb.userdata, pid, tid, th->comm);
        if (r < 0) {
                e->stats.unselectable++;
                return false; /* asked again at its next record */
        }
        th->selected = r > 0 ? 1 : 2;
        th->select_generation = e->select_generation;
        return r > 0;
}

void engine_reselect(struct engine *e) {
        e->select_generation++;
}

/* A new thread or process: indexed as a record of the parent, which may exec before its next one: its name
 * and whether it is watched are looked up again then. */
static void handle_fork(struct engine *e, size_t ring, const struct sample *s, const struct event_desc *d) {
        (void) ring;
        struct thread *parent = thread_find(&e->threads, s->tid);
        if (parent)
                parent->comm_known = false, parent->selected = 0;
        if (e->cb.fork)
                e->cb.fork(e->cb.userdata, (uint32_t) event_field(d, s->raw, s->raw_size, FORK_PARENT_PID),
                           (uint32_t) event_field(d, s->raw, s->raw_size, FORK_CHILD_PID));
}

/* A process's end (its last thread's exit) or exec: its requests end.  The sample's pid is the process (tgid),
 * whichever of its threads was the last. */
static void handle_process(struct engine *e, size_t ring, const struct sample *s, const struct event_desc *d) {
        (void) ring;
        struct thread *leader = thread_find(&e->threads, s->pid);
        if (d->kind == EVENT_PROC_EXEC && leader)
                leader->selected = 0; /* a new program: asked again */
        if (d->kind == EVENT_PROC_EXEC || event_field(d, s->raw, s->raw_size, PROC_EXIT_GROUP_DEAD))
                tracker_process_end(&e->tracker, s->pid, s->time, d->kind == EVENT_PROC_EXIT ? END_EXIT : END_EXEC);
}

static void handle_uring_record(struct engine *e, size_t ring, const struct sample *s, const struct event_desc *d) {
        (void) ring;
        handle_uring(e, s, d);
}

/* A call's enter or exit, of a watched thread. */
static void handle_syscall(struct engine *e, size_t ring, const struct sample *s, const struct event_desc *d) {
        if (d->kind == EVENT_SYS_EXIT && handle_told(e, s, d))
                return;
        struct thread *th = thread_get(&e->threads, s->tid);
        if (!th) {
                e->stats.no_memory++;
                return;
        }
        if (e->cb.select && !thread_selected(e, th, s->pid, s->tid))
                return;
        /* A thread never enters (or leaves) the same syscall twice in a row; when the two records come from
         * different perf events, one event set is being replaced by another: the same hit twice. */
        if (e->opt.replaced_sets && th->last_tp == d->tp_id && th->last_id != s->id && th->last_id != 0) {
                e->stats.duplicates++;
                return;
        }
        th->last_tp = d->tp_id;
        th->last_id = s->id;
        if (d->kind == EVENT_SYS_ENTER && handle_ring_only(e, s, d))
                return;
        if (d->kind == EVENT_SYS_ENTER)
                handle_enter(e, th, s, d);
        else
                handle_exit(e, ring, th, s, d);
}

/* The engine's dispatch: one handler for each family of the tracepoints' table. */
typedef void (*record_handler)(struct engine *e, size_t ring, const struct sample *s, const struct event_desc *d);
static const record_handler handlers[] = {
        [TP_FAMILY_SYSCALL] = handle_syscall,
        [TP_FAMILY_FORK] = handle_fork,
        [TP_FAMILY_PROCESS] = handle_process,
        [TP_FAMILY_URING] = handle_uring_record,
};

static void handle_sample(struct engine *e, size_t ring, const struct perf_event_header *h) {
        struct sample s;
        if (sample_parse(h, &s) < 0) {
                e->stats.bad_records++;
                return;
        }
        e->stats.samples++;
        const struct event_desc *d = event_table_lookup(e->events, s.raw, s.raw_size);
        if (!d || (unsigned) d->family >= ELEMENTSOF(handlers) || !handlers[d->family]) {
                e->stats.foreign++;
                return;
        }
        handlers[d->family](e, ring, &s, d);
}

static void report_lost(struct engine *e, size_t ring, uint64_t time, uint64_t lost, bool unwritten) {
        e->stats.lost += lost;
        e->lost_per_ring[ring] += lost;
        engine_note_dropped(e, ring, e->lost_per_ring[ring]);
        emit(e, &(struct entry) { .kind = ENTRY_LOST, .time = time, .cpu = (uint32_t) e->rings[ring].cpu, .lost = lost,
                                  .lost_unwritten = unwritten });
}

void engine_note_dropped(struct engine *e, size_t ring, uint64_t dropped_total) {
        if (dropped_total <= e->lost_noted[ring])
                return;
        tracker_note_lost(&e->tracker, dropped_total - e->lost_noted[ring]);
        e->lost_noted[ring] = dropped_total;
}

void engine_account_lost(struct engine *e, size_t ring, uint64_t produced) {
        uint64_t seen = e->samples_per_ring[ring] + e->lost_per_ring[ring];
        if (produced > seen)
                report_lost(e, ring, e->processed_up_to, produced - seen, true);
}

static void handle_record(struct engine *e, size_t ring, const struct perf_event_header *h) {
        e->stats.records++;
        if (e->cb.record)
                e->cb.record(e->cb.userdata, h);
        switch (h->type) {
        case PERF_RECORD_SAMPLE:
                e->samples_per_ring[ring]++;
                handle_sample(e, ring, h);
                break;
        case PERF_RECORD_LOST: {
                struct lost_record l;
                if (lost_parse(h, &l) < 0) {
                        e->stats.bad_records++;
                        break;
                }
                report_lost(e, ring, l.time, l.lost, false);
                break;
        }
        default:
                break; /* throttling and the like: nothing of the trace */
        }
}

/* Peek the next record of ring i into its cursor; false when the ring has none before its snapshot head. */
static bool cursor_fill(struct engine *e, size_t i) {
        struct ring_cursor *c = &e->cursors[i];
        if (c->h)
                return true;
        const struct perf_event_header *h;
        int r = ring_peek(&e->rings[i], &h);
        if (r == 0)
                return false;
        if (r < 0) {
                e->stats.bad_records++;
                e->stats.bad_bytes += ring_skip_to_head(&e->rings[i]);
                c->advanced = true;
                return false;
        }
        uint64_t t;
        if (!record_time(h, &t))
                t = 0; /* no time to order it by: process it at once */
        c->h = h;
        c->time = t;
        return true;
}

/* The merge's heap: the older record first; of two as old, the lower ring's. */
static bool heap_before(struct heap_entry a, struct heap_entry b) {
        return (a.time < b.time) | ((a.time == b.time) & (a.ring < b.ring)); /* no branch: the outcome is a coin */
}

/* The top replaced by x.  Where x still goes first (a ring read on while it holds the oldest records), that is
 * all.  Otherwise the hole goes down the smaller children to a leaf, a comparison a level, and x comes up from
 * there: in a merge the new record is mostly among the newest, so this beats stopping at its level on the way
 * down, which takes two comparisons a level. */
static void heap_replace_top(struct engine *e, struct heap_entry x) {
        struct heap_entry *h = e->heap;
        size_t n = e->heap_n, i = 0;
        if (n < 2 || (heap_before(x, h[1]) && (n < 3 || heap_before(x, h[2])))) {
                h[0] = x;
                return;
        }
        for (size_t c; (c = 2 * i + 1) + 1 < n; i = c) {
                c += heap_before(h[c + 1], h[c]);
                h[i] = h[c];
        }
        if (2 * i + 1 < n) { /* a last child alone */
                h[i] = h[2 * i + 1];
                i = 2 * i + 1;
        }
        while (i > 0 && heap_before(x, h[(i - 1) / 2])) {
                h[i] = h[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        h[i] = x;
}

static void heap_push(struct engine *e, uint32_t ring) {
        struct heap_entry *h = e->heap, x = { .time = e->cursors[ring].time, .ring = ring };
        size_t i = e->heap_n++;
        for (; i > 0 && heap_before(x, h[(i - 1) / 2]); i = (i - 1) / 2)
                h[i] = h[(i - 1) / 2];
        h[i] = x;
        e->cursors[ring].in_heap = true;
}

/* Every ring that holds a record now and is not in the heap yet, into it: at the start of a drain, and after
 * the heads were read again in its course. */
static void heap_gather(struct engine *e) {
        for (size_t i = 0; i < e->n_rings; i++)
                if (!e->cursors[i].in_heap && cursor_fill(e, i))
                        heap_push(e, (uint32_t) i);
        e->rescanned = false;
}

/* Whether records wait in a ring more than a quarter full: the look at new processes' files then waits for a
 * drain that leaves room, since a ring that overflows loses records and a file not looked at only maybe a path. */
static bool rings_filling(struct engine *e) {
        for (size_t i = 0; i < e->n_rings; i++) {
                struct ring *r = &e->rings[i];
                (void) ring_refresh(r);
                if (ring_used(r) > r->size / 4)
                        return true;
        }
        return false;
}

bool engine_drain(struct engine *e, uint64_t until) {
        bool held = false;
        look(e);
        heap_gather(e);
        while (e->heap_n > 0) {
                uint32_t best = e->heap[0].ring;
                struct ring_cursor *c = &e->cursors[best];
                uint64_t best_time = c->time;
                if (best_time > until) {
                        held = true;
                        break;
                }
                const struct perf_event_header *h = c->h;
                handle_record(e, best, h);
                ring_advance(&e->rings[best], h);
                c->h = NULL;
                c->advanced = true;
                if (cursor_fill(e, best))
                        heap_replace_top(e, (struct heap_entry) { .time = c->time, .ring = best });
                else {
                        c->in_heap = false;
                        if (--e->heap_n > 0)
                                heap_replace_top(e, e->heap[e->heap_n]);
                }
                if (e->rescanned) /* reading a caller's memory looked at the rings again */
                        heap_gather(e);
                if (best_time > e->processed_up_to)
                        e->processed_up_to = best_time;
        }
        /* only the rings records were taken from: the others' tails stay as the kernel knows them */
        for (size_t i = 0; i < e->n_rings; i++)
                if (e->cursors[i].advanced) {
                        ring_commit(&e->rings[i]);
                        e->cursors[i].advanced = false;
                }
        if (e->threads.used * 2 > e->threads.cap)
                thread_table_sweep(&e->threads, e->processed_up_to);
        /* Everything up to `until` is processed: the intervals that ended by then are complete. */
        tracker_tick(&e->tracker, until);
        if (!rings_filling(e))
                tracker_prime(&e->tracker);
        e->drains++;
        return held;
}

void engine_finish(struct engine *e, uint64_t now) {
        tracker_finish(&e->tracker, now);
        e->stats.in_flight = tracker_inflight_total(&e->tracker);
}

void engine_set_stuck_after(struct engine *e, uint64_t stuck_after_ns) {
        tracker_set_stuck_after(&e->tracker, stuck_after_ns);
}

void engine_set_uring(struct engine *e, bool on) {
        if (!on && !e->opt.uring_off)
                uring_requests_stop(&e->tracker, e->processed_up_to);
        e->opt.uring_off = !on;
}

int engine_set_records(struct engine *e, unsigned records, unsigned summary_by, unsigned summary_files,
                       uint64_t summary_interval_ns) {
        e->opt.records = records;
        e->opt.summary_by = summary_by;
        e->opt.summary_files = summary_files;
        unsigned files = files_named(records, summary_by, summary_files);
        /* paths are looked up at submit: a request submitted before they were wanted has none */
        return tracker_set_options(&e->tracker, (records & RECORD_REQUESTS) || files, summary_interval_ns, files,
                                   e->processed_up_to);
}
