/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tests' AIO workload: makes native AIO calls with raw syscalls and writes the ground truth of each one
 * (what it passed, what the kernel returned, what it found in memory afterwards) so the tracer's output can be
 * compared with it field by field.  By default memory handed to the kernel is never reused or freed before exit,
 * so a correct reader can always find the values that were true at the call; --idiom reuses it at once, as real
 * programs do. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/aio_abi.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fd-reuser.h"

static FILE *truth;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned pause_us, thread_delay_ms;
static char dir[4096] = "/tmp";

static void die(const char *what) {
        fprintf(stderr, "aio-workload: %s: %s\n", what, strerror(errno));
        exit(1);
}

static pid_t gettid_(void) {
        return (pid_t) syscall(SYS_gettid);
}

static void calm(void) {
        if (pause_us)
                usleep(pause_us);
}

/* Buffers of ground truth are written in one go per call, so threads do not interleave inside a call. */
struct record {
        char buf[65536];
        size_t len;
};

static void rec_flush(struct record *r) {
        pthread_mutex_lock(&truth_lock);
        fwrite(r->buf, 1, r->len, truth);
        fflush(truth);
        pthread_mutex_unlock(&truth_lock);
        r->len = 0;
}

/* A line into r, which a call's lines share so that they are written together; a call of more than r holds
 * (--big-submit, one thread) writes what is there first. */
static void rec(struct record *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rec(struct record *r, const char *fmt, ...) {
        for (int tries = 0; tries < 2; tries++) {
                va_list ap;
                va_start(ap, fmt);
                int n = vsnprintf(r->buf + r->len, sizeof(r->buf) - r->len, fmt, ap);
                va_end(ap);
                if (n >= 0 && (size_t) n < sizeof(r->buf) - r->len) {
                        r->len += (size_t) n;
                        return;
                }
                rec_flush(r);
        }
        die("a truth line longer than its buffer");
}

static uint64_t mono_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* The file an fd names, as the truth of every request on it: what /proc says to this process itself. */
static void rec_fd(int fd) {
        char link[64], target[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n < 0)
                die("readlink");
        target[n] = 0;
        struct record rr = {};
        rec(&rr, "file fd=%d path=%s\n", fd, target);
        rec_flush(&rr);
}

static void close_fd(int fd) {
        struct record rr = {};
        rec(&rr, "close fd=%d\n", fd);
        rec_flush(&rr);
        close(fd);
}

static long ret_of(long r) {
        return r < 0 ? -errno : r;
}

static aio_context_t do_setup(unsigned nr) {
        aio_context_t *ctxp = calloc(1, sizeof(*ctxp)); /* never freed: the tracer reads it back */
        uint64_t t0 = mono_ns();
        long r = ret_of(syscall(SYS_io_setup, nr, ctxp));
        uint64_t t1 = mono_ns();
        struct record rr = {};
        rec(&rr, "call syscall=io_setup tid=%d nr_events=%u ctxp=%#" PRIx64 " ret=%ld t0=%" PRIu64 " t1=%" PRIu64 "\n",
            gettid_(), nr, (uint64_t) (uintptr_t) ctxp, r, t0, t1);
        if (r == 0)
                rec(&rr, "ctx value=%#" PRIx64 "\n", (uint64_t) *ctxp);
        rec_flush(&rr);
        if (r < 0)
                die("io_setup");
        calm();
        return *ctxp;
}

/* A page that is not mapped: what points into it cannot be read, by the kernel or by the truth. */
static uintptr_t unmapped_page, page_size;

static void rec_iocb(struct record *rr, unsigned i, const struct iocb *cb) {
        uint64_t iov_total = 0;
        bool vectored = cb->aio_lio_opcode == IOCB_CMD_PREADV || cb->aio_lio_opcode == IOCB_CMD_PWRITEV;
        if (vectored && unmapped_page && cb->aio_buf - unmapped_page < page_size)
                vectored = false; /* no iov_total in the truth: nobody can read those iovecs */
        if (vectored) {
                const struct iovec *iov = (const void *) (uintptr_t) cb->aio_buf;
                for (uint64_t k = 0; k < cb->aio_nbytes; k++)
                        iov_total += iov[k].iov_len;
        }
        rec(rr,
            "iocb i=%u addr=%#" PRIx64 " opcode=%u fd=%u data=%#" PRIx64 " buf=%#" PRIx64 " nbytes=%" PRIu64
            " offset=%" PRId64 " rw_flags=%d reqprio=%d flags=%u resfd=%u key=%u",
            i, (uint64_t) (uintptr_t) cb, cb->aio_lio_opcode, cb->aio_fildes, (uint64_t) cb->aio_data,
            (uint64_t) cb->aio_buf, (uint64_t) cb->aio_nbytes, (int64_t) cb->aio_offset, cb->aio_rw_flags,
            cb->aio_reqprio, cb->aio_flags, cb->aio_resfd, cb->aio_key);
        if (vectored)
                rec(rr, " iov_total=%" PRIu64, iov_total);
        rec(rr, "\n");
}

/* iocbpp: an array that stays valid; n_readable: how many of its entries the truth can show (a bad array). */
static long do_submit(aio_context_t ctx, long nr, struct iocb **iocbpp, long n_readable) {
        uint64_t t0 = mono_ns();
        long r = ret_of(syscall(SYS_io_submit, ctx, nr, iocbpp));
        uint64_t t1 = mono_ns();
        struct record rr = {};
        rec(&rr, "call syscall=io_submit tid=%d ctx=%#" PRIx64 " nr=%ld iocbpp=%#" PRIx64 " ret=%ld t0=%" PRIu64
            " t1=%" PRIu64 "\n", gettid_(), (uint64_t) ctx, nr, (uint64_t) (uintptr_t) iocbpp, r, t0, t1);
        long n = r > 0 ? r : nr;
        for (long i = 0; i < n && i < n_readable; i++)
                rec_iocb(&rr, (unsigned) i, iocbpp[i]);
        rec_flush(&rr);
        calm();
        return r;
}

static long do_getevents(bool pgetevents, aio_context_t ctx, long min_nr, long nr, struct io_event *events,
                         struct timespec *timeout) {
        long r;
        uint64_t t0, t1;
        struct {
                const sigset_t *sigmask;
                size_t sigsetsize;
        } *usig = NULL;
        if (pgetevents) {
                sigset_t *mask = calloc(1, sizeof(*mask));
                sigemptyset(mask);
                sigaddset(mask, SIGUSR2);
                usig = calloc(1, sizeof(*usig));
                usig->sigmask = mask;
                usig->sigsetsize = 8; /* _NSIG / 8 */
                t0 = mono_ns();
                r = ret_of(syscall(SYS_io_pgetevents, ctx, min_nr, nr, events, timeout, usig));
        } else {
                t0 = mono_ns();
                r = ret_of(syscall(SYS_io_getevents, ctx, min_nr, nr, events, timeout));
        }
        t1 = mono_ns();
        struct record rr = {};
        rec(&rr,
            "call syscall=%s tid=%d ctx=%#" PRIx64 " min_nr=%ld nr=%ld events=%#" PRIx64 " timeout=%#" PRIx64,
            pgetevents ? "io_pgetevents" : "io_getevents", gettid_(), (uint64_t) ctx, min_nr, nr,
            (uint64_t) (uintptr_t) events, (uint64_t) (uintptr_t) timeout);
        if (pgetevents)
                rec(&rr, " usig=%#" PRIx64, (uint64_t) (uintptr_t) usig);
        rec(&rr, " ret=%ld t0=%" PRIu64 " t1=%" PRIu64 "\n", r, t0, t1);
        if (timeout)
                rec(&rr, "timeout sec=%ld nsec=%ld\n", (long) timeout->tv_sec, timeout->tv_nsec);
        for (long i = 0; i < r; i++)
                rec(&rr,
                    "event i=%ld addr=%#" PRIx64 " obj=%#" PRIx64 " data=%#" PRIx64 " res=%" PRId64
                    " res2=%" PRId64 "\n",
                    i, (uint64_t) (uintptr_t) &events[i], (uint64_t) events[i].obj, (uint64_t) events[i].data,
                    (int64_t) events[i].res, (int64_t) events[i].res2);
        rec_flush(&rr);
        calm();
        return r;
}

static long do_cancel(aio_context_t ctx, struct iocb *cb) {
        struct io_event *result = calloc(1, sizeof(*result));
        uint64_t t0 = mono_ns();
        long r = ret_of(syscall(SYS_io_cancel, ctx, cb, result));
        uint64_t t1 = mono_ns();
        struct record rr = {};
        rec(&rr, "call syscall=io_cancel tid=%d ctx=%#" PRIx64 " iocb=%#" PRIx64 " result=%#" PRIx64 " ret=%ld t0=%" PRIu64
            " t1=%" PRIu64 "\n", gettid_(), (uint64_t) ctx, (uint64_t) (uintptr_t) cb, (uint64_t) (uintptr_t) result, r,
            t0, t1);
        rec_iocb(&rr, 0, cb);
        rec_flush(&rr);
        calm();
        return r;
}

static long do_destroy(aio_context_t ctx) {
        uint64_t t0 = mono_ns();
        long r = ret_of(syscall(SYS_io_destroy, ctx));
        uint64_t t1 = mono_ns();
        struct record rr = {};
        rec(&rr, "call syscall=io_destroy tid=%d ctx=%#" PRIx64 " ret=%ld t0=%" PRIu64 " t1=%" PRIu64 "\n", gettid_(),
            (uint64_t) ctx, r, t0, t1);
        rec_flush(&rr);
        calm();
        return r;
}

static struct iocb *new_iocb(uint16_t op, int fd, void *buf, uint64_t nbytes, int64_t offset) {
        struct iocb *cb = calloc(1, sizeof(*cb));
        cb->aio_lio_opcode = op;
        cb->aio_fildes = (uint32_t) fd;
        cb->aio_buf = (uint64_t) (uintptr_t) buf;
        cb->aio_nbytes = nbytes;
        cb->aio_offset = offset;
        cb->aio_data = (uint64_t) (uintptr_t) cb ^ 0x5a5a000000000000ull; /* recognisable, unique */
        return cb;
}

static struct iocb **ptr_array(size_t n) {
        return calloc(n ? n : 1, sizeof(struct iocb *));
}

/* Reap exactly `want` events with io_getevents (or io_pgetevents every other call). */
static void reap(aio_context_t ctx, long want, bool use_pgetevents) {
        bool pg = false;
        while (want > 0) {
                struct io_event *ev = calloc(16, sizeof(*ev));
                struct timespec *ts = calloc(1, sizeof(*ts));
                ts->tv_sec = 5;
                ts->tv_nsec = 250000000;
                long r = do_getevents(pg, ctx, 1, want < 16 ? want : 16, ev, ts);
                if (r < 0)
                        die("io_getevents");
                want -= r;
                pg = use_pgetevents && !pg;
        }
}

static int open_file(const char *name, size_t size) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                die(path);
        if (ftruncate(fd, (off_t) size) < 0)
                die("ftruncate");
        rec_fd(fd);
        return fd;
}

struct migrate {
        aio_context_t ctx;
        int pipe_rd;
        pid_t tid;
        volatile int ready;
        int cpu_before, cpu_after;
};

static void *migrate_thread(void *arg) {
        struct migrate *m = arg;
        usleep(thread_delay_ms * 1000);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        sched_setaffinity(0, sizeof(set), &set);
        m->tid = gettid_();
        struct iocb **pp = ptr_array(1);
        pp[0] = new_iocb(5 /* IOCB_CMD_POLL */, m->pipe_rd, (void *) (uintptr_t) POLLIN, 0, 0);
        do_submit(m->ctx, 1, pp, 1);
        m->cpu_before = sched_getcpu();
        __atomic_store_n(&m->ready, 1, __ATOMIC_RELEASE);
        /* Blocks until the main thread, having moved us to CPU 1, writes the pipe: enter on 0, exit on 1. */
        reap(m->ctx, 1, false);
        m->cpu_after = sched_getcpu();
        return NULL;
}

static void run_migration(void) {
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                return;
        struct migrate m = { .ctx = do_setup(8) };
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        rec_fd(p[0]);
        m.pipe_rd = p[0];
        pthread_t t;
        pthread_create(&t, NULL, migrate_thread, &m);
        while (!__atomic_load_n(&m.ready, __ATOMIC_ACQUIRE))
                usleep(1000);
        usleep(100000); /* let it block in io_getevents */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(1, &set);
        sched_setaffinity(m.tid, sizeof(set), &set);
        usleep(50000);
        if (write(p[1], "x", 1) != 1)
                die("write");
        pthread_join(t, NULL);
        struct record rr = {};
        rec(&rr, "migrate tid=%d cpu_before=%d cpu_after=%d\n", m.tid, m.cpu_before, m.cpu_after);
        rec_flush(&rr);
        do_destroy(m.ctx);
}

static void run_truth(void) {
        int a = open_file("a.dat", 1 << 20), b = open_file("b.dat", 1 << 20);
        int efd = eventfd(0, EFD_CLOEXEC);
        rec_fd(efd);
        char *buf = aligned_alloc(4096, 1 << 20);
        memset(buf, 'x', 1 << 20);

        aio_context_t ctx = do_setup(128);

        /* One batch with every opcode that works on files, two fds, flags and a resfd. */
        struct iovec *iov = calloc(5, sizeof(*iov));
        iov[0] = (struct iovec) { buf + 65536, 4096 };
        iov[1] = (struct iovec) { buf + 69632, 8192 };
        iov[2] = (struct iovec) { buf + 77824, 512 };
        iov[3] = (struct iovec) { buf + 81920, 1024 };
        iov[4] = (struct iovec) { buf + 86016, 2048 };
        struct iocb **pp = ptr_array(8);
        pp[0] = new_iocb(IOCB_CMD_PWRITE, a, buf, 4096, 0);
        pp[1] = new_iocb(IOCB_CMD_PWRITE, b, buf + 4096, 8192, 24363008 % (1 << 20));
        pp[1]->aio_rw_flags = 0x02; /* RWF_DSYNC */
        pp[2] = new_iocb(IOCB_CMD_PREAD, a, buf + 16384, 4096, 0);
        pp[2]->aio_flags = 1; /* IOCB_FLAG_RESFD */
        pp[2]->aio_resfd = (uint32_t) efd;
        pp[3] = new_iocb(IOCB_CMD_PREADV, b, iov, 2, 4096);
        pp[4] = new_iocb(IOCB_CMD_PWRITEV, a, iov + 2, 3, 65536);
        pp[5] = new_iocb(IOCB_CMD_FSYNC, a, NULL, 0, 0);
        pp[6] = new_iocb(IOCB_CMD_FDSYNC, b, NULL, 0, 0);
        pp[7] = new_iocb(IOCB_CMD_PREAD, b, buf + 131072, 512, 1 << 21); /* past EOF: res 0 */
        long r = do_submit(ctx, 8, pp, 8);
        if (r != 8)
                die("io_submit batch");
        reap(ctx, 8, true);

        /* The fd of a.dat closed and reused at once for another file: requests on it name the new file. */
        close_fd(a);
        if (open_file("c.dat", 1 << 20) != a)
                die("the fd was not reused");
        pp = ptr_array(1);
        pp[0] = new_iocb(IOCB_CMD_PWRITE, a, buf, 4096, 4096);
        if (do_submit(ctx, 1, pp, 1) != 1)
                die("io_submit after reuse");
        reap(ctx, 1, false);

        /* A read on a closed fd: the kernel refuses the first iocb, the call fails with EBADF. */
        pp = ptr_array(1);
        pp[0] = new_iocb(IOCB_CMD_PREAD, 999, buf, 512, 0);
        do_submit(ctx, 1, pp, 1);

        /* An opcode the kernel does not take: EINVAL. */
        pp = ptr_array(1);
        pp[0] = new_iocb(IOCB_CMD_NOOP, a, buf, 0, 0);
        do_submit(ctx, 1, pp, 1);

        /* nr of 0: nothing to submit, 0; a negative nr: EINVAL. */
        pp = ptr_array(1);
        pp[0] = new_iocb(IOCB_CMD_PREAD, a, buf, 512, 0);
        do_submit(ctx, 0, pp, 0);
        do_submit(ctx, -1, pp, 0);

        /* A pointer to nothing: EFAULT, and the tracer must say it could not read it. */
        do_submit(ctx, 1, (struct iocb **) (uintptr_t) 0x10, 0);

        /* A huge nr over an array of two pointers that ends at an unmapped page: the kernel takes two. */
        long page = sysconf(_SC_PAGESIZE);
        char *guard = mmap(NULL, 2 * (size_t) page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (guard == MAP_FAILED || munmap(guard + page, (size_t) page) < 0)
                die("guard page");
        struct iocb **edge = (struct iocb **) (guard + page - 2 * sizeof(struct iocb *));
        edge[0] = new_iocb(IOCB_CMD_PREAD, a, buf + 262144, 4096, 8192);
        edge[1] = new_iocb(IOCB_CMD_PREAD, b, buf + 266240, 4096, 12288);
        r = do_submit(ctx, 1L << 40, edge, 2);
        reap(ctx, r > 0 ? r : 0, false);

        /* An iocb pointer into the unmapped page; a preadv whose iovecs are there; an opcode nobody knows. */
        unmapped_page = (uintptr_t) (guard + page);
        page_size = (uintptr_t) page;
        pp = ptr_array(1);
        pp[0] = (struct iocb *) (guard + page);
        do_submit(ctx, 1, pp, 0);
        pp = ptr_array(1);
        pp[0] = new_iocb(IOCB_CMD_PREADV, a, guard + page, 2, 0);
        do_submit(ctx, 1, pp, 1);
        pp = ptr_array(1);
        pp[0] = new_iocb(99, a, buf, 512, 0);
        do_submit(ctx, 1, pp, 1);

        /* An io_submit that fails part way: the second of three on a closed fd, so one is taken. */
        pp = ptr_array(3);
        pp[0] = new_iocb(IOCB_CMD_PREAD, a, buf, 512, 0);
        pp[1] = new_iocb(IOCB_CMD_PREAD, 999, buf + 4096, 512, 0);
        pp[2] = new_iocb(IOCB_CMD_PREAD, a, buf + 8192, 512, 0);
        r = do_submit(ctx, 3, pp, 3);
        reap(ctx, r > 0 ? r : 0, false);

        /* io_event arrays in the unmapped page and across its start: the kernel copies the events it has at once or
         * none (EFAULT), and consumes only what it copied, so a later reap gets the rest. */
        pp = ptr_array(2);
        pp[0] = new_iocb(IOCB_CMD_PREAD, a, buf, 512, 0);
        pp[1] = new_iocb(IOCB_CMD_PREAD, b, buf + 4096, 512, 4096);
        r = do_submit(ctx, 2, pp, 2);
        usleep(20000); /* both done, most likely: one copy of two events */
        struct timespec *brief = calloc(1, sizeof(*brief));
        brief->tv_nsec = 100000000;
        struct io_event *unmapped_events = (struct io_event *) (guard + page);
        long got = do_getevents(false, ctx, 1, 2, unmapped_events, brief);
        long more = do_getevents(false, ctx, 1, 2, unmapped_events - 1, brief);
        got = (got > 0 ? got : 0) + (more > 0 ? more : 0);
        reap(ctx, r > got ? r - got : 0, false);

        /* A poll that cannot complete, cancelled; another, on a socket, left for io_destroy. */
        int p[2], sp[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
                die("socketpair");
        rec_fd(p[0]);
        rec_fd(sp[0]);
        pp = ptr_array(2);
        pp[0] = new_iocb(5 /* IOCB_CMD_POLL */, p[0], (void *) (uintptr_t) POLLIN, 0, 0);
        pp[1] = new_iocb(5, sp[0], (void *) (uintptr_t) POLLIN, 0, 0);
        do_submit(ctx, 2, pp, 2);
        r = do_cancel(ctx, pp[0]);
        if (r == 0 || r == -EINPROGRESS)
                reap(ctx, 1, false);

        /* An empty reap with a short timeout. */
        struct io_event *ev = calloc(4, sizeof(*ev));
        struct timespec *ts = calloc(1, sizeof(*ts));
        ts->tv_nsec = 1000000;
        do_getevents(false, ctx, 1, 4, ev, ts);

        run_migration();

        /* pp[1] is still in flight: io_destroy cancels it. */
        do_destroy(ctx);
}

/* How real programs call AIO: the iocb pointer array lives on the stack of a function that returns right after
 * io_submit, the iocbs come from a small pool reused at once, and one io_event buffer serves every reap.  The
 * truth is written while the memory still holds what the call saw; a reader that comes later finds it reused. */
static unsigned idiom_rounds = 2000;

struct idiom {
        int fd;
        char *buf;
        struct iocb pool[4];
        struct io_event events[8];
};

static long __attribute__((noinline)) submit_from_stack(aio_context_t ctx, struct idiom *w, unsigned round, unsigned n) {
        struct iocb *iocbpp[4];
        for (unsigned i = 0; i < n; i++) {
                struct iocb *cb = &w->pool[i];
                *cb = (struct iocb) {
                        .aio_lio_opcode = (round + i) % 3 == 0 ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD,
                        .aio_fildes = (uint32_t) w->fd,
                        .aio_buf = (uint64_t) (uintptr_t) (w->buf + 4096 * i),
                        .aio_nbytes = 512u << (round % 4),
                        .aio_offset = (int64_t) (4096 * ((round * 4 + i) % 256)),
                        .aio_data = ((uint64_t) gettid_() << 32) | ((uint64_t) round << 4) | i,
                };
                iocbpp[i] = cb;
        }
        return do_submit(ctx, n, iocbpp, n);
}

static void *idiom_thread(void *arg) {
        struct idiom *w = arg;
        aio_context_t ctx = do_setup(16);
        for (unsigned round = 0; round < idiom_rounds; round++) {
                unsigned n = 1 + round % 4;
                long r = submit_from_stack(ctx, w, round, n);
                if (r != (long) n)
                        die("io_submit (idiom)");
                for (long got = 0; got < r;) {
                        long e = do_getevents(round % 2, ctx, 1, r - got, w->events, NULL);
                        if (e < 0)
                                die("io_getevents (idiom)");
                        got += e;
                }
        }
        do_destroy(ctx);
        return NULL;
}

static void run_idiom(unsigned threads) {
        pthread_t t[64];
        struct idiom *w = calloc(threads, sizeof(*w));
        char name[32];
        if (!w || threads > 64)
                die("idiom threads");
        for (unsigned i = 0; i < threads; i++) {
                snprintf(name, sizeof(name), "idiom%u.dat", i);
                w[i].fd = open_file(name, 1 << 20);
                w[i].buf = aligned_alloc(4096, 4 * 4096);
                memset(w[i].buf, 'y', 4 * 4096);
                pthread_create(&t[i], NULL, idiom_thread, &w[i]);
        }
        for (unsigned i = 0; i < threads; i++)
                pthread_join(t[i], NULL);
}

/* More requests in flight at once than a small table holds, then the context destroyed with them. */
static void run_burst(unsigned n) {
        aio_context_t ctx = do_setup(n + 8);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        rec_fd(p[0]);
        struct iocb **pp = ptr_array(n);
        for (unsigned i = 0; i < n; i++)
                pp[i] = new_iocb(5, p[0], (void *) (uintptr_t) POLLIN, 0, 0);
        if (do_submit(ctx, n, pp, n) != (long) n)
                die("io_submit (burst)");
        do_destroy(ctx);
}

/* A process with many files open that starts many children, each making one AIO request and ending: what any
 * user can do to a tracer that looks at each new process's files.  No truth: what is measured is what it does to
 * the tracing of others. */
static void run_fan_out(unsigned children, unsigned open_fds, unsigned linger_ms) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/fan-out.dat", dir);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ftruncate(fd, 4096) < 0)
                die(path);
        for (unsigned i = 0; i < open_fds; i++)
                if (open(path, O_RDONLY) < 0)
                        die("open (--open-fds: raise the limit on open files)");
        for (unsigned i = 0; i < children; i++) {
                pid_t pid = fork();
                if (pid < 0)
                        die("fork");
                if (pid > 0)
                        continue;
                aio_context_t ctx = 0;
                static char buf[512];
                struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t) fd,
                                   .aio_buf = (uintptr_t) buf, .aio_nbytes = sizeof(buf) };
                struct iocb *pp[1] = { &cb };
                struct io_event ev;
                if (syscall(SYS_io_setup, 1, &ctx) < 0 || syscall(SYS_io_submit, ctx, 1, pp) != 1 ||
                    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
                        _exit(1);
                syscall(SYS_io_destroy, ctx);
                usleep(linger_ms * 1000);
                _exit(0);
        }
        unsigned failed = 0;
        for (int status; wait(&status) > 0;)
                failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        if (failed)
                die("a child's AIO failed");
}

/* The benchmark's load: O_DIRECT 4 KiB random reads of `file`, `depth` in flight, submitted `batch` at a time
 * and reaped as they come (batch 1: one iocb per io_submit, one event per io_getevents), for `secs`
 * seconds.  No truth per call (it would cost more than the calls): it counts them, and says so at the end. */
static void run_bench(const char *file, unsigned secs, unsigned depth, unsigned batch) {
        int fd = open(file, O_RDONLY | O_DIRECT | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (1 << 20))
                die(file);
        uint64_t blocks = (uint64_t) st.st_size / 4096, rng = 0x9e3779b97f4a7c15ull ^ (uint64_t) getpid();
        aio_context_t ctx = 0;
        if (syscall(SYS_io_setup, depth, &ctx) < 0)
                die("io_setup");
        struct iocb *cbs = calloc(depth, sizeof(*cbs));
        struct iocb **pp = calloc(depth, sizeof(*pp)), **free_cbs = calloc(depth, sizeof(*free_cbs));
        struct io_event *ev = calloc(depth, sizeof(*ev));
        char *bufs = aligned_alloc(4096, (size_t) depth * 4096);
        if (!cbs || !pp || !free_cbs || !ev || !bufs)
                die("memory");
        unsigned n_free = depth;
        for (unsigned i = 0; i < depth; i++)
                free_cbs[i] = &cbs[i];
        uint64_t calls = 1, iocbs = 0, in_flight = 0;
        uint64_t start = mono_ns(), end = start + (uint64_t) secs * 1000000000ull;
        for (;;) {
                bool stopping = mono_ns() >= end;
                /* submit what is free, batch at a time */
                while (!stopping && n_free > 0) {
                        unsigned n = n_free < batch ? n_free : batch;
                        for (unsigned i = 0; i < n; i++) {
                                struct iocb *cb = free_cbs[--n_free];
                                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                                *cb = (struct iocb) { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t) fd,
                                                      .aio_buf = (uint64_t) (uintptr_t) (bufs + 4096 * (size_t) (cb - cbs)),
                                                      .aio_nbytes = 4096, .aio_offset = (int64_t) (rng % blocks) * 4096,
                                                      .aio_data = (uint64_t) (uintptr_t) cb };
                                pp[i] = cb;
                        }
                        long r = syscall(SYS_io_submit, ctx, (long) n, pp);
                        calls++;
                        if (r != (long) n)
                                die("io_submit (bench)");
                        in_flight += n;
                }
                if (in_flight == 0)
                        break;
                long got = syscall(SYS_io_getevents, ctx, 1L, batch == 1 ? 1L : (long) depth, ev, NULL);
                calls++;
                if (got < 0)
                        die("io_getevents (bench)");
                for (long i = 0; i < got; i++) {
                        if (ev[i].res != 4096)
                                die("a read that did not read 4 KiB");
                        free_cbs[n_free++] = (struct iocb *) (uintptr_t) ev[i].data;
                }
                in_flight -= (uint64_t) got;
                iocbs += (uint64_t) got;
                calm();
        }
        syscall(SYS_io_destroy, ctx);
        calls++;
        double elapsed = (double) (mono_ns() - start) / 1e9;
        printf("calls=%" PRIu64 " iocbs=%" PRIu64 " seconds=%.3f iops=%.0f\n", calls, iocbs, elapsed, (double) iocbs / elapsed);
}

/* What any enabled syscall tracepoint costs every thread of the host, watched or not: getppid, N times, through
 * the syscall slow path that an enabled tracepoint forces; prints ns a call. */
/* An iocb another thread writes during io_submit: its aio_fildes flips between two O_DIRECT files, A of 8 KiB
 * and B of 4 KiB, while reads of 4 KiB at 4 KiB are submitted with it, one a call.  What the kernel read says
 * which file it used (A: 4096 bytes, B: 0, its end): the truth, a line a request. */
static struct iocb race_cb;
static volatile bool race_stop;
static int race_fds[2];

static void *race_flipper(void *arg) {
        (void) arg;
        volatile uint32_t *fildes = &race_cb.aio_fildes;
        for (unsigned i = 0; !race_stop; i++)
                *fildes = (uint32_t) race_fds[i & 1];
        return NULL;
}

static void run_race_fd(unsigned rounds) {
        char path[2][4200];
        static char data[8192] __attribute__((aligned(4096)));
        memset(data, 'r', sizeof(data));
        for (int k = 0; k < 2; k++) {
                snprintf(path[k], sizeof(path[k]), "%s/race-%c.dat", dir, "AB"[k]);
                int fd = open(path[k], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (fd < 0 || write(fd, data, k ? 4096 : 8192) != (k ? 4096 : 8192))
                        die(path[k]);
                close(fd);
                race_fds[k] = open(path[k], O_RDONLY | O_DIRECT | O_CLOEXEC);
                if (race_fds[k] < 0)
                        die(path[k]);
        }
        aio_context_t ctx = 0;
        if (syscall(SYS_io_setup, 1, &ctx) < 0)
                die("io_setup");
        race_cb.aio_lio_opcode = IOCB_CMD_PREAD;
        race_cb.aio_fildes = (uint32_t) race_fds[0];
        race_cb.aio_buf = (uint64_t) (uintptr_t) data;
        race_cb.aio_nbytes = 4096;
        race_cb.aio_offset = 4096;
        pthread_t flipper;
        if (pthread_create(&flipper, NULL, race_flipper, NULL) != 0)
                die("pthread_create");
        struct iocb *list[1] = { &race_cb };
        for (unsigned i = 0; i < rounds; i++) {
                race_cb.aio_data = i;
                struct io_event ev;
                if (syscall(SYS_io_submit, ctx, 1, list) != 1 || syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
                        die("io_submit");
                fprintf(truth, "race data=%u res=%lld file=%s\n", i, (long long) ev.res,
                        ev.res == 4096 ? path[0] : ev.res == 0 ? path[1] : "?");
        }
        race_stop = true;
        pthread_join(flipper, NULL);
        for (int k = 0; k < 2; k++)
                close(race_fds[k]);
}

/* Reads on an fd another thread points at another file every millisecond.  The truth, a line a request. */
static void run_fd_reuse(unsigned rounds) {
        static struct fd_reuser reuse;
        int r = fd_reuser_start(&reuse, dir, 100);
        if (r < 0) {
                errno = -r;
                die("fd reuser");
        }
        aio_context_t ctx = 0;
        if (syscall(SYS_io_setup, 1, &ctx) < 0)
                die("io_setup");
        for (unsigned i = 0; i < rounds; i++) {
                char byte = 0;
                struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t) reuse.fd,
                                   .aio_buf = (uint64_t) (uintptr_t) &byte, .aio_nbytes = 1, .aio_data = i };
                struct iocb *list[1] = { &cb };
                struct io_event ev;
                if (syscall(SYS_io_submit, ctx, 1, list) != 1 || syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
                        die("io_submit");
                const char *file = fd_reuser_file_of(&reuse, byte);
                fprintf(truth, "reuse data=%u res=%lld file=%s\n", i, (long long) ev.res,
                        ev.res == 1 && file ? file : "?");
        }
        fd_reuser_stop(&reuse);
}

static void run_getppid(unsigned long n) {
        uint64_t start = mono_ns();
        for (unsigned long i = 0; i < n; i++)
                syscall(SYS_getppid);
        printf("ns_per_call=%.1f\n", (double) (mono_ns() - start) / (double) n);
}

static void wait_for_start(const char *start_when);

/* Requests left in flight for the harness to kill us with; or, with release_when, until that file is made:
 * then the pipe is written, and they complete and are reaped. */
static void run_hold(bool then_exec, const char *release_when) {
        aio_context_t ctx = do_setup(16);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        rec_fd(p[0]);
        struct iocb **pp = ptr_array(4);
        for (int i = 0; i < 4; i++)
                pp[i] = new_iocb(5, p[0], (void *) (uintptr_t) POLLIN, 0, 0);
        do_submit(ctx, 4, pp, 4);
        if (then_exec) {
                /* the contexts go with the old memory: the requests end here, unreaped */
                fclose(truth);
                execl("/bin/sleep", "sleep", "0.3", (char *) NULL);
                die("exec");
        }
        printf("holding\n");
        fflush(stdout);
        if (release_when) {
                wait_for_start(release_when);
                if (write(p[1], "x", 1) != 1)
                        die("write");
                reap(ctx, 4, false);
                fclose(truth);
                usleep(300000); /* alive while a tracer without the capture reads the events */
                exit(0);
        }
        for (;;)
                pause();
}

/* InnoDB's pattern: threads that submit, one that reaps, one context.  Buffered I/O completes inside io_submit,
 * so the reaper often returns with a completion before the io_submit that made it does. */
#define REAPED_SUBMITTERS 3

struct reaped_submitter {
        aio_context_t ctx;
        int fd;
        char *buf;
        struct iocb cb; /* one in flight at a time, used again once reaped */
        bool done;
};

static pthread_mutex_t reaped_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaped_cond = PTHREAD_COND_INITIALIZER;
static unsigned reaped_rounds;
static struct reaped_submitter reaped[REAPED_SUBMITTERS];

static void *reaped_submit_thread(void *arg) {
        struct reaped_submitter *s = arg;
        for (unsigned i = 0; i < reaped_rounds; i++) {
                s->cb = (struct iocb) {
                        .aio_lio_opcode = i % 2 ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD, .aio_fildes = (uint32_t) s->fd,
                        .aio_buf = (uint64_t) (uintptr_t) s->buf, .aio_nbytes = 4096,
                        .aio_offset = (int64_t) (4096 * (i % 64)), .aio_data = ((uint64_t) gettid_() << 32) | i,
                };
                pthread_mutex_lock(&reaped_lock);
                s->done = false;
                pthread_mutex_unlock(&reaped_lock);
                struct iocb *pp[1] = { &s->cb };
                if (do_submit(s->ctx, 1, pp, 1) != 1)
                        die("io_submit (reaper thread)");
                pthread_mutex_lock(&reaped_lock);
                while (!s->done)
                        pthread_cond_wait(&reaped_cond, &reaped_lock);
                pthread_mutex_unlock(&reaped_lock);
        }
        return NULL;
}

static void *reaping_thread(void *arg) {
        aio_context_t ctx = *(const aio_context_t *) arg;
        struct io_event ev[8];
        for (unsigned long reaped_n = 0; reaped_n < (unsigned long) REAPED_SUBMITTERS * reaped_rounds;) {
                long e = do_getevents(false, ctx, 1, 8, ev, NULL); /* the truth is written before any reuse */
                if (e < 0)
                        die("io_getevents (reaper thread)");
                pthread_mutex_lock(&reaped_lock);
                for (long k = 0; k < e; k++)
                        for (int i = 0; i < REAPED_SUBMITTERS; i++)
                                if (ev[k].obj == (uint64_t) (uintptr_t) &reaped[i].cb)
                                        reaped[i].done = true;
                pthread_cond_broadcast(&reaped_cond);
                pthread_mutex_unlock(&reaped_lock);
                reaped_n += (unsigned long) e;
        }
        return NULL;
}

static void run_reaper_thread(unsigned rounds) {
        static aio_context_t ctx;
        ctx = do_setup(64);
        reaped_rounds = rounds;
        pthread_t t[REAPED_SUBMITTERS + 1];
        for (int i = 0; i < REAPED_SUBMITTERS; i++) {
                char name[32];
                snprintf(name, sizeof(name), "reaped%d.dat", i);
                reaped[i] = (struct reaped_submitter) { .ctx = ctx, .fd = open_file(name, 1 << 18),
                                                         .buf = aligned_alloc(4096, 4096) };
                memset(reaped[i].buf, 'z', 4096);
        }
        pthread_create(&t[REAPED_SUBMITTERS], NULL, reaping_thread, &ctx);
        for (int i = 0; i < REAPED_SUBMITTERS; i++)
                pthread_create(&t[i], NULL, reaped_submit_thread, &reaped[i]);
        for (int i = 0; i <= REAPED_SUBMITTERS; i++)
                pthread_join(t[i], NULL);
        do_destroy(ctx);
}

/* The AIO ring as the kernel lays it out at the context's address (fs/aio.c). */
struct aio_ring_view {
        unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
        struct io_event io_events[];
};

/* Reap from the ring itself, as QEMU, fio's userspace_reap and SPDK do: no system call.  Recorded as a
 * pseudo-call, user_reap, with the events it took (the tracer sees no call: only the ring). */
static long user_reap(aio_context_t ctx) {
        struct aio_ring_view *ring = (void *) (uintptr_t) ctx;
        uint64_t t0 = mono_ns();
        unsigned head = ring->head, tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
        struct io_event ev[64];
        long n = 0;
        while (head != tail && n < 64) {
                ev[n++] = ring->io_events[head];
                head = (head + 1) % ring->nr;
        }
        __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
        uint64_t t1 = mono_ns();
        if (n == 0)
                return 0;
        struct record rr = {};
        rec(&rr, "call syscall=user_reap tid=%d ctx=%#" PRIx64 " ret=%ld t0=%" PRIu64 " t1=%" PRIu64 "\n", gettid_(),
            (uint64_t) ctx, n, t0, t1);
        for (long i = 0; i < n; i++)
                rec(&rr, "event i=%ld addr=0 obj=%#" PRIx64 " data=%#" PRIx64 " res=%" PRId64 " res2=%" PRId64 "\n", i,
                    (uint64_t) ev[i].obj, (uint64_t) ev[i].data, (int64_t) ev[i].res, (int64_t) ev[i].res2);
        rec_flush(&rr);
        return n;
}

/* Rounds of four requests (reads and writes, the iocbs used again each round; O_DIRECT but every fourth round),
 * their completions reaped from the ring by the program itself, but every third round by io_getevents: the two
 * ways on one context.  Then io_destroy. */
static void run_user_reap(unsigned rounds) {
        aio_context_t ctx = do_setup(32);
        int buffered = open_file("ureap.dat", 1 << 20);
        /* O_DIRECT: completions after io_submit returns; buffered: done before it returns */
        char path[4200];
        snprintf(path, sizeof(path), "%s/ureap.dat", dir);
        int direct = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
        if (direct < 0)
                die(path);
        rec_fd(direct);
        static struct iocb cbs[4];
        static struct iocb *pp[4];
        static struct io_event ev[4];
        char *buf = aligned_alloc(4096, 4 * 4096);
        if (!buf)
                die("memory");
        memset(buf, 'u', 4 * 4096);
        for (unsigned r = 0; r < rounds; r++) {
                int fd = r % 4 == 2 ? buffered : direct;
                for (unsigned i = 0; i < 4; i++) {
                        cbs[i] = (struct iocb) { .aio_lio_opcode = i % 2 ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD,
                                                 .aio_fildes = (uint32_t) fd, .aio_buf = (uint64_t) (uintptr_t) (buf + 4096 * i),
                                                 .aio_nbytes = 4096, .aio_offset = (int64_t) (4 * r + i) % 256 * 4096,
                                                 .aio_data = ((uint64_t) r << 8) | i };
                        pp[i] = &cbs[i];
                }
                if (do_submit(ctx, 4, pp, 4) != 4)
                        die("io_submit (user reap)");
                long got = 0;
                if (r % 3 == 2)
                        while (got < 4)
                                got += do_getevents(false, ctx, 1, 4 - got, ev, NULL);
                else
                        while (got < 4) {
                                long n = user_reap(ctx);
                                got += n;
                                if (n == 0)
                                        usleep(100);
                        }
        }
        do_destroy(ctx);
}

/* A reaper already asleep in io_getevents when tracing starts, as InnoDB's: "waiting" once it is in the call;
 * at a line on standard input, one write submitted for it to reap. */
static pid_t reaper_tid;

static void *waiting_reaper(void *arg) {
        aio_context_t ctx = *(const aio_context_t *) arg;
        __atomic_store_n(&reaper_tid, gettid_(), __ATOMIC_RELEASE);
        struct io_event *ev = calloc(4, sizeof(*ev));
        if (do_getevents(false, ctx, 1, 4, ev, NULL) != 1)
                die("io_getevents");
        return NULL;
}

/* Whether thread tid is inside system call nr now (the first field of /proc/self/task/TID/syscall). */
static bool in_syscall(pid_t tid, long nr) {
        char path[64], line[256] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        bool in = fgets(line, sizeof(line), f) && strtol(line, NULL, 10) == nr;
        fclose(f);
        return in;
}

static void run_reaper_first(void) {
        static aio_context_t ctx;
        ctx = do_setup(16);
        int fd = open_file("reaper.dat", 1 << 16);
        pthread_t reaper;
        if (pthread_create(&reaper, NULL, waiting_reaper, &ctx) != 0)
                die("pthread_create");
        pid_t tid;
        while ((tid = __atomic_load_n(&reaper_tid, __ATOMIC_ACQUIRE)) == 0 || !in_syscall(tid, SYS_io_getevents))
                usleep(1000);
        printf("waiting\n");
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof(line), stdin))
                die("stdin");
        static char buf[4096] __attribute__((aligned(4096)));
        memset(buf, 'r', sizeof(buf));
        struct iocb **pp = ptr_array(1);
        pp[0] = new_iocb(IOCB_CMD_PWRITE, fd, buf, sizeof(buf), 8192);
        if (do_submit(ctx, 1, pp, 1) != 1)
                die("io_submit");
        pthread_join(reaper, NULL);
        do_destroy(ctx);
}

/* n reads over 4 files in one io_submit, reaped by io_getevents calls of up to n events each: more than a call's
 * record holds, as a program that batches its requests makes. */
static void run_big_submit(unsigned n) {
        aio_context_t ctx = do_setup(n);
        int fds[4];
        char name[32];
        for (unsigned f = 0; f < 4; f++) {
                snprintf(name, sizeof(name), "big%u.dat", f);
                fds[f] = open_file(name, 1 << 20);
        }
        char *bufs = calloc(n, 512);
        struct iocb **pp = ptr_array(n);
        if (!bufs || !pp)
                die("memory");
        for (unsigned i = 0; i < n; i++)
                pp[i] = new_iocb(IOCB_CMD_PREAD, fds[i % 4], bufs + (size_t) i * 512, 512, (int64_t) (i / 4 % 2048) * 512);
        if (do_submit(ctx, n, pp, n) != (long) n)
                die("io_submit (big)");
        struct io_event *ev = calloc(n, sizeof(*ev));
        for (long want = n; want > 0;) {
                long r = do_getevents(false, ctx, want, want, ev, NULL);
                if (r <= 0)
                        die("io_getevents (big)");
                want -= r;
        }
        do_destroy(ctx);
}

/* One read of 512 bytes of DIR/one.dat, then the end: a process gone before a tracer's next look.  Prints its pid
 * as it sees it, and the time (CLOCK_MONOTONIC ns) after its last call. */
static void run_one_request(void) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/one.dat", dir);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        static char buf[512];
        if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != (ssize_t) sizeof(buf))
                die(path);
        aio_context_t ctx = 0;
        struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t) fd,
                           .aio_buf = (uintptr_t) buf, .aio_nbytes = sizeof(buf) };
        struct iocb *pp[1] = { &cb };
        struct io_event ev;
        if (syscall(SYS_io_setup, 1, &ctx) < 0 || syscall(SYS_io_submit, ctx, 1, pp) != 1 ||
            syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1 || ev.res != (int64_t) sizeof(buf))
                die("one request");
        syscall(SYS_io_destroy, ctx);
        printf("pid=%d end=%" PRIu64 "\n", getpid(), mono_ns());
}

/* The rest of the run in a child that has pid `pid` in this pid namespace and 1 in a new one of its own (a
 * process that takes the pid of one just gone, in another namespace): the parent waits, and exits as it did. */
static void become_pid(pid_t pid) {
        pid_t tids[2] = { 1, pid }; /* the innermost namespace's first */
        struct clone_args args = { .flags = CLONE_NEWPID, .exit_signal = SIGCHLD, .set_tid = (uintptr_t) tids,
                                   .set_tid_size = 2 };
        long child = syscall(SYS_clone3, &args, sizeof(args));
        if (child < 0)
                die("clone3 (--as-pid)");
        if (child == 0)
                return;
        int status;
        if (waitpid((pid_t) child, &status, 0) < 0)
                die("waitpid");
        exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* A tracer started after the process (watched by its pid), or a test, says when it is ready: no sleep is long
 * enough on a loaded machine. */
static void wait_for_start(const char *start_when) {
        for (unsigned i = 0; start_when && access(start_when, F_OK) != 0; i++) {
                if (i == 6000)
                        die(start_when);
                usleep(10000);
        }
}

static void usage(FILE *f) {
        fprintf(f,
                "Usage: aio-workload [OPTIONS]\n"
                "Make native AIO calls with raw syscalls and write the ground truth of each to --truth, for the tests to\n"
                "compare aiotraced's output with.  One mode a run:\n"
                "  (default)                every kind of call once: reads, writes, vectored, fsync, poll, a cancel,\n"
                "                           io_destroy with a request in flight, failing calls and unmapped pointers;\n"
                "                           memory handed to the kernel is never reused, so any reader can be exact\n"
                "  --idiom THREADS          as real programs: THREADS threads at full speed, stack-local iocb arrays,\n"
                "    [--rounds N]           pooled iocbs, one event buffer reused at once (N rounds each)\n"
                "  --burst N                N requests in flight at once, then reaped (for the in-flight bounds)\n"
                "  --hold                   requests in flight, then wait to be killed (prints \"holding\")\n"
                "  --hold-until FILE        as --hold, until FILE is made: then they complete, and are reaped\n"
                "  --exec                   requests in flight, then exec sleep: they end with the old memory\n"
                "  --reaper-first           a thread waits in io_getevents (prints \"waiting\"); a line on standard\n"
                "                           input, and a write is submitted for it to reap\n"
                "  --reaper-thread N        3 threads submit N requests each, one at a time, on one context, and\n"
                "                           one thread reaps them all (as InnoDB)\n"                "  --user-reap N            N rounds of 4 requests reaped from the AIO ring by the program itself\n"
                "                           (every third round by io_getevents), as QEMU and fio's userspace_reap\n"
                "  --bench SECONDS --file F O_DIRECT 4 KiB random reads of F, --depth N in flight (16), up to\n"
                "    [--depth N] [--batch N] --batch N a call (16); prints calls, iocbs, seconds and IOPS\n"
                "  --getppid N              no AIO: getppid N times, for what the tracepoints cost every process;\n"
                "                           prints ns a call\n"
                "  --fan-out N [--open-fds M] with M files open, N children that each make one AIO request\n"
                "                           (and stay --linger-ms)\n"
                "  --one-request            one read of DIR/one.dat, then the end (prints pid=N end=NS)\n"
                "  --big-submit N           N reads in one io_submit, reaped by io_getevents of up to N each\n"
                "  --as-pid N               run as pid N of this pid namespace, and 1 of a new one (clone3)\n"
                "Options:\n"
                "  --truth FILE             where the ground truth goes (/dev/null)\n"
                "  --dir DIR                where the files are made (/tmp)\n"
                "  --comm NAME              the command name to run under (prctl PR_SET_NAME)\n"
                "  --pause-us N             sleep between calls\n"
                "  --start-delay-ms N       sleep before the first call\n"
                "  --start-when FILE        wait for FILE to exist before the first call (60 s at most)\n"
                "  --race-fd N              N O_DIRECT reads whose iocb's fd another thread keeps writing\n"
                "  --fd-reuse N             N reads of an fd another thread points at another file each ms\n"
                "  --thread-delay-ms N      sleep in a second thread before its first call\n"
                "  --linger-ms N            stay alive after the last call (a reader of memory may still come)\n");
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "truth", required_argument, NULL, 't' }, { "dir", required_argument, NULL, 'd' },
                { "comm", required_argument, NULL, 'n' },  { "pause-us", required_argument, NULL, 'p' },
                { "linger-ms", required_argument, NULL, 'l' }, { "start-delay-ms", required_argument, NULL, 's' },
                { "hold", no_argument, NULL, 'H' }, { "reaper-first", no_argument, NULL, 'W' },
                { "reaper-thread", required_argument, NULL, 'R' }, { "user-reap", required_argument, NULL, 'U' },
                { "thread-delay-ms", required_argument, NULL, 'T' }, { "start-when", required_argument, NULL, 'w' },
                { "race-fd", required_argument, NULL, 'X' }, { "fd-reuse", required_argument, NULL, 'Y' },
                { "idiom", required_argument, NULL, 'i' },  { "rounds", required_argument, NULL, 'r' },
                { "burst", required_argument, NULL, 'b' },
                { "bench", required_argument, NULL, 'B' }, { "exec", no_argument, NULL, 'E' }, { "depth", required_argument, NULL, 'D' },
                { "batch", required_argument, NULL, 'S' }, { "file", required_argument, NULL, 'F' },
                { "getppid", required_argument, NULL, 'G' }, { "fan-out", required_argument, NULL, 'O' },
                { "open-fds", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
                { "one-request", no_argument, NULL, '1' }, { "as-pid", required_argument, NULL, 'P' },
                { "big-submit", required_argument, NULL, 'g' }, { "hold-until", required_argument, NULL, 'u' }, {},
        };
        const char *truth_path = "/dev/null";
        unsigned linger_ms = 0, start_delay_ms = 0;
        unsigned idiom_threads = 0, burst = 0, bench_secs = 0, depth = 16, batch = 16;
        const char *bench_file = NULL, *start_when = NULL, *hold_until = NULL;
        unsigned long getppid_calls = 0;
        unsigned race_rounds = 0, reuse_rounds = 0;
        unsigned fan_out = 0, open_fds = 0, big_submit = 0;
        bool hold = false, then_exec = false, reaper_first = false, one_request = false;
        pid_t as_pid = 0;
        unsigned reaper_thread_rounds = 0, user_reap_rounds = 0;
        int c;
        while ((c = getopt_long(argc, argv, "", options, NULL)) != -1)
                switch (c) {
                case 't':
                        truth_path = optarg;
                        break;
                case 'd':
                        snprintf(dir, sizeof(dir), "%s", optarg);
                        break;
                case 'n':
                        prctl(PR_SET_NAME, optarg);
                        break;
                case 'p':
                        pause_us = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'l':
                        linger_ms = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 's':
                        start_delay_ms = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'w':
                        start_when = optarg;
                        break;
                case 'X':
                        race_rounds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'Y':
                        reuse_rounds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'H':
                        hold = true;
                        break;
                case 'u':
                        hold = true;
                        hold_until = optarg;
                        break;
                case 'W':
                        reaper_first = true;
                        break;
                case 'R':
                        reaper_thread_rounds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'U':
                        user_reap_rounds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'E':
                        then_exec = true;
                        break;
                case 'T':
                        thread_delay_ms = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'i':
                        idiom_threads = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        idiom_rounds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'b':
                        burst = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'B':
                        bench_secs = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'D':
                        depth = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'S':
                        batch = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'F':
                        bench_file = optarg;
                        break;
                case 'G':
                        getppid_calls = strtoul(optarg, NULL, 10);
                        break;
                case 'O':
                        fan_out = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'o':
                        open_fds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case '1':
                        one_request = true;
                        break;
                case 'P':
                        as_pid = (pid_t) strtol(optarg, NULL, 10);
                        break;
                case 'g':
                        big_submit = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        if (as_pid)
                become_pid(as_pid);
        if (one_request) {
                run_one_request();
                fflush(stdout);
                usleep(linger_ms * 1000);
                return 0;
        }
        if (fan_out || bench_secs)
                wait_for_start(start_when);
        if (getppid_calls) {
                run_getppid(getppid_calls);
                return 0;
        }
        if (fan_out) {
                run_fan_out(fan_out, open_fds, linger_ms);
                return 0;
        }
        if (bench_secs) {
                if (!bench_file || depth == 0 || batch == 0 || batch > depth) {
                        fprintf(stderr, "aio-workload: --bench needs --file, and 0 < --batch <= --depth\n");
                        return 2;
                }
                run_bench(bench_file, bench_secs, depth, batch);
                return 0;
        }
        truth = fopen(truth_path, "we");
        if (!truth)
                die(truth_path);
        struct record rr = {};
        char comm[17] = "";
        prctl(PR_GET_NAME, comm);
        rec(&rr, "process pid=%d comm=%s\n", getpid(), comm);
        rec_flush(&rr);
        usleep(start_delay_ms * 1000);
        wait_for_start(start_when);
        if (race_rounds) {
                run_race_fd(race_rounds);
                return 0;
        }
        if (reuse_rounds) {
                run_fd_reuse(reuse_rounds);
                return 0;
        }
        if (hold || then_exec)
                run_hold(then_exec, hold_until);
        if (reaper_first)
                run_reaper_first();
        else if (reaper_thread_rounds)
                run_reaper_thread(reaper_thread_rounds);
        else if (user_reap_rounds)
                run_user_reap(user_reap_rounds);
        else if (idiom_threads)
                run_idiom(idiom_threads);
        else if (burst)
                run_burst(burst);
        else if (big_submit)
                run_big_submit(big_submit);
        else
                run_truth();
        /* Stay alive so a reader that runs after the calls can still reach this memory. */
        usleep(linger_ms * 1000);
        fclose(truth);
        return 0;
}
