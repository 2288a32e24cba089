/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io_uring requests made with liburing, each written to --truth as the program knows it: one JSON object per
 * request, with the op aiotraced should name, fd (or registered file index), path, offset, bytes and the result
 * the completion carried.  The tests compare aiotraced's request records with it, field by field. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include "fd-reuser.h"

struct want {
        const char *op;
        int fd;
        bool fixed;
        char *path; /* NULL: none */
        long long off;
        long long nbytes; /* -1: not known to aiotraced (vectored: a count of iovecs) */
        int res;
        bool done;
        bool failed; /* at submit: the kernel's prep refused it */
        bool no_cqe; /* IOSQE_CQE_SKIP_SUCCESS, and it succeeded: no completion came */
        int more[8]; /* a multishot request's results before its last (IORING_CQE_F_MORE) */
        unsigned n_more;
};

#define MAX_REQ 64
static struct want wants[MAX_REQ];
static unsigned n_wants;
static FILE *truth;

static void die(const char *what, int err) {
        fprintf(stderr, "uring-workload: %s: %s\n", what, strerror(err < 0 ? -err : err));
        exit(1);
}

static struct io_uring_sqe *sqe_for(struct io_uring *ring, const char *op, int fd, bool fixed, const char *path,
                                    long long off, long long nbytes) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        if (!sqe || n_wants == MAX_REQ)
                die("no SQE", ENOSPC);
        wants[n_wants] = (struct want) { .op = op, .fd = fd, .fixed = fixed, .path = path ? strdup(path) : NULL,
                                         .off = off, .nbytes = nbytes };
        return sqe;
}

static void tag(struct io_uring_sqe *sqe) {
        io_uring_sqe_set_data64(sqe, 0x7700000000ull + n_wants++);
}

/* Wait for n completions, recording each result. */
static void reap(struct io_uring *ring, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                struct io_uring_cqe *cqe;
                int r = io_uring_wait_cqe(ring, &cqe);
                if (r < 0)
                        die("io_uring_wait_cqe", r);
                unsigned k = (unsigned) (cqe->user_data - 0x7700000000ull);
                if (k >= n_wants)
                        die("a completion of no request", EINVAL);
                if ((cqe->flags & IORING_CQE_F_MORE) && wants[k].n_more < 8)
                        wants[k].more[wants[k].n_more++] = cqe->res;
                else {
                        wants[k].res = cqe->res;
                        wants[k].done = true;
                }
                io_uring_cqe_seen(ring, cqe);
        }
}

static void submit(struct io_uring *ring, unsigned n) {
        int r = io_uring_submit(ring);
        if (r < 0 || (unsigned) r != n)
                die("io_uring_submit", r < 0 ? r : EIO);
}

static void write_truth(void) {
        for (unsigned i = 0; i < n_wants; i++) {
                const struct want *w = &wants[i];
                fprintf(truth, "{\"pid\":%d,\"user_data\":%llu,\"op\":\"%s\",\"fd\":%d,\"fixed\":%s,\"failed\":%s,",
                        getpid(), 0x7700000000ull + i, w->op, w->fd, w->fixed ? "true" : "false",
                        w->failed ? "true" : "false");
                if (w->path)
                        fprintf(truth, "\"path\":\"%s\",", w->path);
                fprintf(truth, "\"more\":[");
                for (unsigned m = 0; m < w->n_more; m++)
                        fprintf(truth, "%s%d", m ? "," : "", w->more[m]);
                fprintf(truth, "],\"off\":%lld,\"nbytes\":%lld,\"res\":%d,\"done\":%s,\"no_cqe\":%s}\n", w->off,
                        w->nbytes, w->res, w->done ? "true" : "false", w->no_cqe ? "true" : "false");
        }
}

/* More completions than the CQ ring holds before any is reaped: the kernel keeps the rest in its overflow
 * list (io_uring_cqe_overflow, not io_uring_complete), and hands them over once the ring has room.  How many
 * overflowed goes to the truth as a line of its own. */
static void overflow(void) {
        struct io_uring small;
        struct io_uring_params p = { 0 };
        int r = io_uring_queue_init_params(4, &small, &p);
        if (r < 0)
                die("io_uring_queue_init_params", r);
        unsigned n = 2 * p.cq_entries;
        for (unsigned i = 0; i < n; i++) {
                struct io_uring_sqe *sqe = sqe_for(&small, "noop", 0, false, NULL, 0, 0);
                io_uring_prep_nop(sqe);
                tag(sqe);
                if ((i + 1) % 4 == 0)
                        submit(&small, 4);
        }
        reap(&small, n);
        fprintf(truth, "{\"pid\":%d,\"cq_overflows\":%u}\n", getpid(), n - p.cq_entries);
        io_uring_queue_exit(&small);
}

/* Every opcode the kernel knows (its probe's last_op), each alone in a zeroed SQE on fd -1 with user_data
 * 0x7800000000 + opcode, waited for before the next: each fails (or, as nop, succeeds) at once.  The kernel's
 * own tracepoints name them; the test compares those names with aiotraced's. */
static int every_op(void) {
        struct io_uring ring;
        int r = io_uring_queue_init(8, &ring, 0);
        if (r < 0)
                die("io_uring_queue_init", r);
        struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
        if (!probe)
                die("io_uring_get_probe_ring", ENOMEM);
        unsigned last = probe->last_op;
        io_uring_free_probe(probe);
        for (unsigned op = 0; op <= last; op++) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                if (!sqe)
                        die("no SQE", ENOSPC);
                memset(sqe, 0, sizeof(*sqe));
                sqe->opcode = (uint8_t) op;
                sqe->fd = -1;
                sqe->user_data = 0x7800000000ull + op;
                submit(&ring, 1);
                /* a zero-copy send's result comes with IORING_CQE_F_MORE: its notification follows */
                for (bool more = true; more;) {
                        struct io_uring_cqe *cqe;
                        struct __kernel_timespec two_s = { .tv_sec = 2 };
                        r = io_uring_wait_cqe_timeout(&ring, &cqe, &two_s);
                        if (r < 0) {
                                fprintf(stderr, "uring-workload: opcode %u did not complete: %s\n", op, strerror(-r));
                                return 1;
                        }
                        more = cqe->flags & IORING_CQE_F_MORE;
                        io_uring_cqe_seen(&ring, cqe);
                }
        }
        printf("%u\n", last);
        io_uring_queue_exit(&ring);
        return 0;
}

/* A new pipe, and the name /proc gives its read end. */
static void new_pipe(int fds[2], char path[64]) {
        char link[32];
        if (pipe2(fds, O_CLOEXEC) < 0)
                die("pipe2", errno);
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fds[0]);
        ssize_t n = readlink(link, path, 63);
        if (n < 0)
                die("readlink", errno);
        path[n] = 0;
}

static char *path_in(const char *dir, const char *name) {
        char *p;
        if (asprintf(&p, "%s/%s", dir, name) < 0)
                die("asprintf", ENOMEM);
        return p;
}

/* Reads on an fd another thread points at another file every millisecond.  The truth, a line a request: its
 * user_data and that file's path. */
static int fd_reuse(const char *dir, unsigned rounds) {
        static struct fd_reuser reuse;
        int r = fd_reuser_start(&reuse, dir, 100);
        if (r < 0)
                die("fd reuser", -r);
        struct io_uring ring;
        r = io_uring_queue_init(8, &ring, 0);
        if (r < 0)
                die("io_uring_queue_init", r);
        for (unsigned i = 0; i < rounds; i++) {
                char byte = 0;
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                io_uring_prep_read(sqe, reuse.fd, &byte, 1, 0);
                sqe->user_data = 0x7900000000ull + i;
                submit(&ring, 1);
                struct io_uring_cqe *cqe;
                if ((r = io_uring_wait_cqe(&ring, &cqe)) < 0)
                        die("io_uring_wait_cqe", r);
                int res = cqe->res;
                io_uring_cqe_seen(&ring, cqe);
                const char *file = fd_reuser_file_of(&reuse, byte);
                fprintf(truth, "{\"user_data\":%llu,\"res\":%d,\"path\":\"%s\"}\n", 0x7900000000ull + i, res,
                        res == 1 && file ? file : "");
        }
        fd_reuser_stop(&reuse);
        io_uring_queue_exit(&ring);
        return 0;
}

/* An SQE written again right after its submit: the kernel reads it once (at io_uring_enter, or when the SQPOLL
 * thread comes to it, which may be after), and what it read is what the request says.  A read of 512 bytes at
 * 0 becomes one at 4096; the file has 'X' at 0 and 'Y' at 4096, so the bytes read say which offset the kernel
 * took. */
static void scribbled_sqe(struct io_uring *ring, const char *dir) {
        char *c = path_in(dir, "uc.dat");
        int fc = open(c, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        static char xy[8192], got[512];
        memset(xy, 'X', 4096);
        memset(xy + 4096, 'Y', 4096);
        if (fc < 0 || write(fc, xy, sizeof(xy)) != (ssize_t) sizeof(xy))
                die("uc.dat", errno);
        struct io_uring_sqe *sqe = sqe_for(ring, "pread", fc, false, c, 0, 512);
        io_uring_prep_read(sqe, fc, got, 512, 0);
        tag(sqe);
        submit(ring, 1);
        sqe->off = 4096;
        reap(ring, 1);
        wants[n_wants - 1].off = got[0] == 'Y' ? 4096 : 0;
        free(c);
}

/* An fsync linked behind a poll on a pipe, its fd closed (and with reopen, opened again on another file) before
 * the pipe is written: the kernel takes a request's file when it issues it, once the poll is done, so it finds
 * the fd closed (EBADF, no file: no path) or naming the other file (whose path it is). */
static void fsync_after_close(struct io_uring *ring, const char *dir, bool reopen) {
        int p[2];
        char ppath[64];
        new_pipe(p, ppath);
        char *old = path_in(dir, "closed.dat"), *other = path_in(dir, "reopened.dat");
        int fd = open(old, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                die(old, errno);
        struct io_uring_sqe *sqe = sqe_for(ring, "poll", p[0], false, ppath, 0, 0);
        io_uring_prep_poll_add(sqe, p[0], POLLIN);
        sqe->flags |= IOSQE_IO_LINK;
        tag(sqe);
        sqe = sqe_for(ring, "fsync", fd, false, reopen ? other : NULL, 0, 0);
        io_uring_prep_fsync(sqe, fd, 0);
        tag(sqe);
        submit(ring, 2);
        usleep(20000);
        close(fd);
        if (reopen && open(other, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) != fd)
                die("the fd was not reused", EBADF);
        if (write(p[1], "x", 1) != 1)
                die("write", errno);
        reap(ring, 2);
        /* the reopened file stays open: in a mount namespace of its own (tests/container.sh) the capture's walk
         * of its path does not reach the daemon's root, and the daemon finds it under the fd */
        close(p[0]);
        close(p[1]);
        free(old);
        free(other);
}

/* A ring that makes one request (a nop) and is torn down, then the process lives on for linger_ms: its ring's
 * memory goes back to the kernel, which may give it to the next ring made on the host. */
static int ring_once(unsigned linger_ms) {
        struct io_uring ring;
        int r = io_uring_queue_init(8, &ring, 0);
        if (r < 0)
                die("io_uring_queue_init", r);
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        io_uring_prep_nop(sqe);
        sqe->user_data = 0x7a00000001ull;
        submit(&ring, 1);
        struct io_uring_cqe *cqe;
        if ((r = io_uring_wait_cqe(&ring, &cqe)) < 0)
                die("io_uring_wait_cqe", r);
        io_uring_cqe_seen(&ring, cqe);
        io_uring_queue_exit(&ring);
        printf("torn down\n");
        fflush(stdout);
        usleep(linger_ms * 1000);
        return 0;
}

/* n rings made one after another, each with polls on a pipe nobody writes, torn down with the polls in flight:
 * the kernel cancels them at the teardown, from a kernel worker, with this program's own user_data
 * (0x0bad0000 + ring). */
static int ring_churn(unsigned n) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
                die("pipe2", errno);
        for (unsigned i = 0; i < n; i++) {
                struct io_uring ring;
                int r = io_uring_queue_init(8, &ring, 0);
                if (r < 0)
                        die("io_uring_queue_init", r);
                for (unsigned k = 0; k < 4; k++) {
                        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                        io_uring_prep_poll_add(sqe, fds[0], POLLIN);
                        sqe->user_data = 0x0bad0000ull + i;
                }
                submit(&ring, 4);
                io_uring_queue_exit(&ring);
        }
        return 0;
}

static void wait_for_file(const char *path) {
        for (unsigned i = 0; access(path, F_OK) != 0; i++) {
                if (i == 6000)
                        die(path, ETIMEDOUT);
                usleep(10000);
        }
}

/* A read of a pipe and a poll of another, which nobody writes until `release_when` is made: then both are
 * written, and the two complete (user_data 0x57000001 the read, 0x57000002 the poll).  With `file`, opened
 * first (prints "opened"), a read of it too (0x57000003) once `go` is made: a FUSE file whose server then
 * stalls.  Prints "holding" once all are in flight, and each completion's "user_data=N res=N". */
static int stuck_until(const char *release_when, const char *file, const char *go) {
        struct io_uring ring;
        int r = io_uring_queue_init(8, &ring, 0);
        if (r < 0)
                die("io_uring_queue_init", r);
        int f = -1;
        if (file) {
                f = open(file, O_RDONLY | O_CLOEXEC);
                if (f < 0)
                        die(file, errno);
                printf("opened\n");
                fflush(stdout);
                wait_for_file(go);
        }
        int a[2], b[2];
        if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
                die("pipe", errno);
        static char buf[16];
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        io_uring_prep_read(sqe, a[0], buf, sizeof(buf), 0);
        sqe->user_data = 0x57000001;
        sqe = io_uring_get_sqe(&ring);
        io_uring_prep_poll_add(sqe, b[0], POLLIN);
        sqe->user_data = 0x57000002;
        static char fbuf[4096];
        if (f >= 0) {
                sqe = io_uring_get_sqe(&ring);
                io_uring_prep_read(sqe, f, fbuf, sizeof(fbuf), 0);
                sqe->user_data = 0x57000003;
        }
        unsigned n_requests = f >= 0 ? 3 : 2;
        submit(&ring, n_requests);
        printf("holding\n");
        fflush(stdout);
        wait_for_file(release_when);
        if (write(a[1], "x", 1) != 1 || write(b[1], "x", 1) != 1)
                die("write", errno);
        for (unsigned n = 0; n < n_requests; n++) {
                struct io_uring_cqe *cqe;
                r = io_uring_wait_cqe(&ring, &cqe);
                if (r < 0)
                        die("io_uring_wait_cqe", r);
                printf("user_data=%llu res=%d\n", (unsigned long long) cqe->user_data, cqe->res);
                io_uring_cqe_seen(&ring, cqe);
        }
        io_uring_queue_exit(&ring);
        return 0;
}

/* n completions, whatever their requests */
static void reap_any(struct io_uring *ring, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                struct io_uring_cqe *cqe;
                int r = io_uring_wait_cqe(ring, &cqe);
                if (r < 0)
                        die("io_uring_wait_cqe", r);
                if (cqe->res < 0)
                        die("a request failed", -cqe->res);
                io_uring_cqe_seen(ring, cqe);
        }
}

/* n reads of /dev/zero (which never blocks), IOSQE_ASYNC on every fourth, then two reads of empty pipes (armed
 * for poll), then the pipes written: prints each request's "user_data=N async=io-wq|poll|none", as asked or as
 * the file makes it, and reaps them all. */
static int async_mix(unsigned n) {
        struct io_uring ring;
        int r = io_uring_queue_init(64, &ring, 0);
        if (r < 0)
                die("io_uring_queue_init", r);
        int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        int a[2], b[2];
        if (zero < 0 || pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
                die("open", errno);
        static char buf[4096], pbuf[2][8];
        unsigned in_flight = 0;
        for (unsigned i = 0; i < n; i++) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                io_uring_prep_read(sqe, zero, buf, sizeof(buf), 0);
                sqe->user_data = 0x5a000000ull + i;
                bool punt = i % 4 == 3;
                if (punt)
                        sqe->flags |= IOSQE_ASYNC;
                printf("user_data=%llu async=%s\n", 0x5a000000ull + i, punt ? "io-wq" : "none");
                submit(&ring, 1);
                if (++in_flight == 32) {
                        reap_any(&ring, in_flight);
                        in_flight = 0;
                }
        }
        reap_any(&ring, in_flight);
        int pipes[2] = { a[0], b[0] };
        for (unsigned k = 0; k < 2; k++) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                io_uring_prep_read(sqe, pipes[k], pbuf[k], sizeof(pbuf[k]), 0);
                sqe->user_data = 0x5b000000ull + k;
                printf("user_data=%llu async=poll\n", 0x5b000000ull + k);
        }
        submit(&ring, 2);
        usleep(100000);
        if (write(a[1], "x", 1) != 1 || write(b[1], "y", 1) != 1)
                die("write", errno);
        reap_any(&ring, 2);
        fflush(stdout);
        io_uring_queue_exit(&ring);
        return 0;
}

int main(int argc, char **argv) {
        const char *dir = "/tmp", *truth_path = "/dev/null", *comm = NULL, *release_when = NULL;
        const char *stuck_file = NULL, *stuck_go = NULL;
        bool sqpoll = false, hold = false, all_ops = false;
        unsigned reuse_rounds = 0, once_linger_ms = 0, churn = 0, mix = 0;
        bool once = false;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
                        dir = argv[++i];
                else if (strcmp(argv[i], "--truth") == 0 && i + 1 < argc)
                        truth_path = argv[++i];
                else if (strcmp(argv[i], "--comm") == 0 && i + 1 < argc)
                        comm = argv[++i];
                else if (strcmp(argv[i], "--sqpoll") == 0)
                        sqpoll = true;
                else if (strcmp(argv[i], "--hold") == 0)
                        hold = true;
                else if (strcmp(argv[i], "--async-mix") == 0 && i + 1 < argc)
                        mix = (unsigned) strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "--stuck-until") == 0 && i + 1 < argc)
                        release_when = argv[++i];
                else if (strcmp(argv[i], "--stuck-file") == 0 && i + 2 < argc) {
                        stuck_file = argv[++i];
                        stuck_go = argv[++i];
                }
                else if (strcmp(argv[i], "--every-op") == 0)
                        all_ops = true;
                else if (strcmp(argv[i], "--fd-reuse") == 0 && i + 1 < argc)
                        reuse_rounds = (unsigned) strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "--ring-once") == 0 && i + 1 < argc) {
                        once = true;
                        once_linger_ms = (unsigned) strtoul(argv[++i], NULL, 10);
                } else if (strcmp(argv[i], "--ring-churn") == 0 && i + 1 < argc)
                        churn = (unsigned) strtoul(argv[++i], NULL, 10);
                else {
                        fprintf(stderr, "usage: uring-workload [--dir DIR] [--truth FILE] [--comm NAME] [--sqpoll] "
                                        "[--hold] [--every-op] [--fd-reuse N] [--ring-once LINGER_MS] "
                                        "[--ring-churn N] [--stuck-until FILE [--stuck-file PATH GO]] "
                                        "[--async-mix N]\n");
                        return 2;
                }
        }
        if (comm)
                prctl(PR_SET_NAME, comm);
        if (once)
                return ring_once(once_linger_ms);
        if (release_when)
                return stuck_until(release_when, stuck_file, stuck_go);
        if (mix)
                return async_mix(mix);
        if (churn)
                return ring_churn(churn);
        if (all_ops)
                return every_op();
        truth = fopen(truth_path, "we");
        if (!truth)
                die(truth_path, errno);
        if (reuse_rounds)
                return fd_reuse(dir, reuse_rounds);
        char *a = path_in(dir, "ua.dat"), *b = path_in(dir, "ub.dat");
        int fa = open(a, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int fb = open(b, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fa < 0 || fb < 0)
                die("open", errno);
        static char buf[8][8192] __attribute__((aligned(4096)));
        memset(buf, 'u', sizeof(buf));

        struct io_uring ring;
        struct io_uring_params p = { .flags = sqpoll ? IORING_SETUP_SQPOLL : 0, .sq_thread_idle = 2000 };
        int r = io_uring_queue_init_params(32, &ring, &p);
        if (r < 0)
                die("io_uring_queue_init_params", r);
        /* the requests are made only once the SQPOLL thread is there: its first wakeup is slow */
        if (sqpoll)
                usleep(10000);

        struct io_uring_sqe *sqe;
        /* plain reads and writes */
        sqe = sqe_for(&ring, "pwrite", fa, false, a, 0, 4096);
        io_uring_prep_write(sqe, fa, buf[0], 4096, 0);
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        sqe = sqe_for(&ring, "pread", fa, false, a, 0, 4096);
        io_uring_prep_read(sqe, fa, buf[1], 4096, 0);
        tag(sqe);
        sqe = sqe_for(&ring, "pwrite", fb, false, b, 8192, 512);
        io_uring_prep_write(sqe, fb, buf[2], 512, 8192);
        tag(sqe);
        submit(&ring, 2);
        reap(&ring, 2);
        /* vectored: len counts iovecs; the bytes are their sum, as the kernel imported them at submit.  The
         * iovecs scribbled on once submitted: what the kernel took stands, and its result says what that was
         * (all of it, a regular file's write): with SQPOLL the kernel's thread may import them before or after */
        struct iovec iov[3] = { { buf[3], 4096 }, { buf[4], 4096 }, { buf[5], 1024 } };
        sqe = sqe_for(&ring, "pwritev", fb, false, b, 16384, 9216);
        io_uring_prep_writev(sqe, fb, iov, 3, 16384);
        tag(sqe);
        submit(&ring, 1);
        iov[2].iov_len = 7;
        reap(&ring, 1);
        wants[n_wants - 1].nbytes = wants[n_wants - 1].res;
        iov[2].iov_len = 1024;
        sqe = sqe_for(&ring, "preadv", fb, false, b, 16384, 8192);
        io_uring_prep_readv(sqe, fb, iov, 2, 16384);
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        /* a write that asks for no CQE if it succeeds, and succeeds: none comes; the read linked after it,
         * completed, says it is done */
        sqe = sqe_for(&ring, "pwrite", fa, false, a, 0, 512);
        io_uring_prep_write(sqe, fa, buf[6], 512, 0);
        sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
        wants[n_wants].no_cqe = wants[n_wants].done = true;
        tag(sqe);
        sqe = sqe_for(&ring, "pread", fa, false, a, 0, 512);
        io_uring_prep_read(sqe, fa, buf[7], 512, 0);
        tag(sqe);
        submit(&ring, 2);
        reap(&ring, 1);
        scribbled_sqe(&ring, dir);
        /* fsync, and with IORING_FSYNC_DATASYNC */
        sqe = sqe_for(&ring, "fsync", fa, false, a, 0, 0);
        io_uring_prep_fsync(sqe, fa, 0);
        tag(sqe);
        sqe = sqe_for(&ring, "fdsync", fb, false, b, 0, 0);
        io_uring_prep_fsync(sqe, fb, IORING_FSYNC_DATASYNC);
        tag(sqe);
        submit(&ring, 2);
        reap(&ring, 2);
        fsync_after_close(&ring, dir, false);
        fsync_after_close(&ring, dir, true);
        /* fixed buffers */
        struct iovec fixed[2] = { { buf[6], 8192 }, { buf[7], 8192 } };
        if ((r = io_uring_register_buffers(&ring, fixed, 2)) < 0)
                die("io_uring_register_buffers", r);
        sqe = sqe_for(&ring, "pwrite", fa, false, a, 4096, 8192);
        io_uring_prep_write_fixed(sqe, fa, buf[6], 8192, 4096, 0);
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        sqe = sqe_for(&ring, "pread", fa, false, a, 4096, 8192);
        io_uring_prep_read_fixed(sqe, fa, buf[7], 8192, 4096, 1);
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        /* a registered file: fd is its index; its path, the file the kernel wrote */
        if ((r = io_uring_register_files(&ring, &fb, 1)) < 0)
                die("io_uring_register_files", r);
        sqe = sqe_for(&ring, "pwrite", 0, true, b, 0, 4096);
        io_uring_prep_write(sqe, 0, buf[0], 4096, 0);
        sqe->flags |= IOSQE_FIXED_FILE;
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        /* linked: a write, then its fsync */
        sqe = sqe_for(&ring, "pwrite", fa, false, a, 12288, 4096);
        io_uring_prep_write(sqe, fa, buf[1], 4096, 12288);
        sqe->flags |= IOSQE_IO_LINK;
        tag(sqe);
        sqe = sqe_for(&ring, "fsync", fa, false, a, 0, 0);
        io_uring_prep_fsync(sqe, fa, 0);
        tag(sqe);
        submit(&ring, 2);
        reap(&ring, 2);
        /* poll on a pipe, completed by a write to it */
        int pipe_fds[2];
        char pipe_path[64];
        new_pipe(pipe_fds, pipe_path);
        sqe = sqe_for(&ring, "poll", pipe_fds[0], false, pipe_path, 0, 0);
        io_uring_prep_poll_add(sqe, pipe_fds[0], POLLIN);
        tag(sqe);
        submit(&ring, 1);
        usleep(20000);
        if (write(pipe_fds[1], "x", 1) != 1)
                die("write", errno);
        reap(&ring, 1);
        /* a request that fails: an fd that is not open */
        sqe = sqe_for(&ring, "pread", 999, false, NULL, 0, 4096);
        io_uring_prep_read(sqe, 999, buf[1], 4096, 0);
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        /* an op with no AIO counterpart, under its own name */
        sqe = sqe_for(&ring, "noop", 0, false, NULL, 0, 0);
        io_uring_prep_nop(sqe);
        tag(sqe);
        sqe = sqe_for(&ring, "openat", AT_FDCWD, false, NULL, 0, 0);
        io_uring_prep_openat(sqe, AT_FDCWD, a, O_RDONLY, 0);
        tag(sqe);
        submit(&ring, 2);
        reap(&ring, 2);
        /* multishot: a poll that completes at each write to a new pipe, until it is removed */
        int mpipe[2];
        char mpath[64];
        new_pipe(mpipe, mpath);
        sqe = sqe_for(&ring, "poll", mpipe[0], false, mpath, 0, 0);
        io_uring_prep_poll_multishot(sqe, mpipe[0], POLLIN);
        uint64_t multishot = 0x7700000000ull + n_wants;
        tag(sqe);
        submit(&ring, 1);
        for (int i = 0; i < 3; i++) {
                usleep(10000);
                if (write(mpipe[1], "m", 1) != 1)
                        die("write", errno);
                reap(&ring, 1);
        }
        sqe = sqe_for(&ring, "poll_remove", 0, false, NULL, 0, 0);
        io_uring_prep_poll_remove(sqe, multishot);
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 2);
        /* a request that fails before it is submitted: an opcode no kernel has.  Refused before it took its file
         * (the kernel takes it at the issue): no path, whatever the fd names */
        sqe = sqe_for(&ring, "op_250", fa, false, NULL, 0, 0);
        io_uring_prep_nop(sqe);
        sqe->opcode = 250;
        sqe->fd = fa;
        wants[n_wants].failed = true;
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        /* and one whose prep refuses it: an fsync with flags no kernel has (no file taken either) */
        sqe = sqe_for(&ring, "fsync", fb, false, NULL, 0, 0);
        io_uring_prep_fsync(sqe, fb, 0x80);
        wants[n_wants].failed = true;
        tag(sqe);
        submit(&ring, 1);
        reap(&ring, 1);
        overflow();
        /* in flight at the end: a poll on a new pipe nobody writes.  With --hold the process is killed: it ends
         * with it; else the ring is torn down, and the kernel cancels it */
        new_pipe(pipe_fds, pipe_path);
        sqe = sqe_for(&ring, "poll", pipe_fds[0], false, pipe_path, 0, 0);
        io_uring_prep_poll_add(sqe, pipe_fds[0], POLLIN);
        tag(sqe);
        submit(&ring, 1);
        while (io_uring_sq_ready(&ring) > 0) /* an SQPOLL thread takes it when it comes round */
                usleep(1000);
        if (!hold) {
                wants[n_wants - 1].res = -ECANCELED;
                wants[n_wants - 1].done = true;
        }
        write_truth();
        fclose(truth);
        if (hold) {
                printf("holding\n");
                fflush(stdout);
                pause();
        }
        io_uring_queue_exit(&ring);
        usleep(100000); /* the teardown's cancellation is posted by a kernel worker: while the process lives */
        return 0;
}
