/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Entries to the journal, one structured entry each, through sd_journal_sendv().
 *
 * journald takes some tens of thousands of entries a second and its socket then blocks the sender; the kernel
 * can produce far more.  So the engine's thread only formats each entry into a bounded queue, and a writer
 * thread sends from it.  When the queue is full the entry is dropped and counted, and the count goes out as
 * an entry of its own (AIO_DROPPED=) in the place of what was lost, as soon as there is room again.  When the
 * journal refuses or is gone, the writer counts what it could not send and says so once it can send again. */
#include "sink.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "format_journal.h"
#include "outbuf.h"
#include "util.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define MAX_FIELDS 64

/* One queued entry: its size (of the whole slot, header included) and field count, then the fields. */
struct slot {
        uint32_t size;
        uint32_t n_fields;
};

#define SLOT_WRAP UINT32_MAX /* this slot size says: the next entry is at the start of the queue */

struct sink_journal {
        struct sink base;
        unsigned max_iocbs;
        struct outbuf entry; /* the engine thread's scratch */

        pthread_mutex_t lock;
        pthread_cond_t changed;
        uint8_t *queue;
        size_t cap, head, tail, used; /* bytes; head: next to send, tail: next free */
        uint64_t queued;              /* entries in the queue */
        uint64_t full_dropped;        /* dropped because the queue was full, not yet reported */
        bool stopping;
        pthread_t writer;
        bool writer_started;

        /* the writer's own */
        uint64_t send_failed; /* entries the journal refused since the last success */
        int send_error;
        bool error_told;
};

static void queue_advance(struct sink_journal *j, size_t *pos, uint32_t size) {
        *pos += size;
        if (*pos == j->cap)
                *pos = 0;
}

/* Room for size contiguous bytes at the tail; at the end with too little room, a wrap marker sends the next
 * entry to the start.  False: full. */
static bool queue_reserve(struct sink_journal *j, uint32_t size) {
        if (j->used == 0)
                j->head = j->tail = 0;
        if (j->used == j->cap)
                return false;
        if (j->tail < j->head)
                return j->head - j->tail >= size;
        if (j->cap - j->tail >= size)
                return true;
        if (j->head < size)
                return false;
        struct slot wrap = { .size = SLOT_WRAP };
        memcpy(j->queue + j->tail, &wrap, sizeof(wrap));
        j->used += j->cap - j->tail;
        j->tail = 0;
        return true;
}

static bool queue_put(struct sink_journal *j, const void *fields, size_t len, unsigned n_fields) {
        uint32_t size = (uint32_t) ((sizeof(struct slot) + len + 7) & ~(size_t) 7);
        if (size > j->cap / 2 || !queue_reserve(j, size))
                return false;
        struct slot s = { .size = size, .n_fields = n_fields };
        memcpy(j->queue + j->tail, &s, sizeof(s));
        memcpy(j->queue + j->tail + sizeof(s), fields, len);
        queue_advance(j, &j->tail, size);
        j->used += size;
        j->queued++;
        return true;
}

static int send_fields(const uint8_t *p, unsigned n_fields) {
        struct iovec iov[MAX_FIELDS];
        unsigned n = 0;
        for (; n < n_fields && n < MAX_FIELDS; n++) {
                uint32_t len;
                memcpy(&len, p, sizeof(len));
                iov[n] = (struct iovec) { .iov_base = (void *) (p + sizeof(len)), .iov_len = len };
                p += sizeof(len) + len;
        }
        /* sd_journal_sendv() reports success when there is no journal socket at all: look first. */
        if (access(JOURNAL_SOCKET, F_OK) < 0)
                return -errno;
        return sd_journal_sendv(iov, (int) n);
}

static void writer_send(struct sink_journal *j, const uint8_t *fields, unsigned n_fields) {
        int r = send_fields(fields, n_fields);
        if (r < 0) {
                if (!j->error_told) {
                        char name[16];
                        sink_say(&j->base, LOG_WARNING, "the journal: %s (%s); entries are counted as dropped until it "
                                 "takes them again", strerror(-r), errno_name(-r, name));
                        j->error_told = true;
                }
                j->send_failed++;
                j->send_error = r;
                pthread_mutex_lock(&j->lock);
                j->base.stats.dropped++;
                j->base.stats.last_error = r;
                pthread_mutex_unlock(&j->lock);
                return;
        }
        if (j->send_failed) {
                /* The journal takes entries again: first say what it did not take. */
                char why[64], name[16];
                snprintf(why, sizeof(why), "the journal refused them: %s", errno_name(-j->send_error, name));
                struct outbuf b = {};
                unsigned n = format_journal_dropped(&b, j->send_failed, why);
                if (!b.failed && send_fields((const uint8_t *) b.data, n) >= 0) {
                        sink_say(&j->base, LOG_NOTICE, "the journal takes entries again: %" PRIu64 " were dropped "
                                 "meanwhile (said in an AIO_DROPPED entry)", j->send_failed);
                        j->send_failed = 0;
                        j->error_told = false;
                }
                outbuf_free(&b);
        }
        pthread_mutex_lock(&j->lock);
        j->base.stats.written++;
        pthread_mutex_unlock(&j->lock);
}

static void *writer_main(void *arg) {
        struct sink_journal *j = arg;
        pthread_mutex_lock(&j->lock);
        for (;;) {
                while (j->queued == 0 && !j->stopping)
                        pthread_cond_wait(&j->changed, &j->lock);
                if (j->queued == 0)
                        break;
                struct slot s;
                memcpy(&s, j->queue + j->head, sizeof(s));
                if (s.size == SLOT_WRAP) {
                        j->used -= j->cap - j->head;
                        j->head = 0;
                        continue;
                }
                /* The engine never writes where head is: send from the queue itself, unlocked. */
                const uint8_t *fields = j->queue + j->head + sizeof(s);
                pthread_mutex_unlock(&j->lock);
                writer_send(j, fields, s.n_fields);
                pthread_mutex_lock(&j->lock);
                queue_advance(j, &j->head, s.size);
                j->used -= s.size;
                j->queued--;
                pthread_cond_broadcast(&j->changed);
        }
        pthread_mutex_unlock(&j->lock);
        return NULL;
}

/* With the lock held: queue the count of what a full queue dropped, in its place.  False while it cannot. */
static bool queue_drop_report(struct sink_journal *j) {
        if (j->full_dropped == 0)
                return true;
        struct outbuf b = {};
        unsigned n = format_journal_dropped(&b, j->full_dropped, "the journal did not keep up");
        if (!b.failed && queue_put(j, b.data, b.len, n))
                j->full_dropped = 0;
        outbuf_free(&b);
        return j->full_dropped == 0;
}

static int journal_write(struct sink *s, const struct entry *e) {
        struct sink_journal *j = (struct sink_journal *) s;
        outbuf_reset(&j->entry);
        unsigned n = format_journal(&j->entry, e, j->max_iocbs);
        if (j->entry.failed || n > MAX_FIELDS) {
                pthread_mutex_lock(&j->lock);
                j->full_dropped++; /* reported with the others */
                s->stats.dropped++;
                s->stats.last_error = -ENOMEM;
                pthread_mutex_unlock(&j->lock);
                return -ENOMEM;
        }
        pthread_mutex_lock(&j->lock);
        /* What the full queue cost goes first, before anything newer. */
        bool queued = queue_drop_report(j) && queue_put(j, j->entry.data, j->entry.len, n);
        if (!queued) {
                if (j->full_dropped++ == 0)
                        sink_say(s, LOG_WARNING, "the journal does not keep up: its queue (%zu KiB) is full; entries are "
                                 "dropped and counted (an AIO_DROPPED entry says how many once there is room)",
                                 j->cap / 1024);
                s->stats.dropped++;
                s->stats.last_error = -ENOBUFS;
        } else
                pthread_cond_broadcast(&j->changed);
        pthread_mutex_unlock(&j->lock);
        return queued ? 0 : -ENOBUFS;
}

/* Never waits: the writer sends on its own. */
static int journal_flush(struct sink *s) {
        return 0;
}

static int journal_finish(struct sink *s, unsigned timeout_ms) {
        struct sink_journal *j = (struct sink_journal *) s;
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&j->lock);
        /* The report of the last drops may itself need room: queue it once there is some. */
        int r = 0;
        while (r == 0 && (j->queued > 0 || j->full_dropped > 0)) {
                if (queue_drop_report(j) && j->queued == 0)
                        break;
                pthread_cond_broadcast(&j->changed);
                r = pthread_cond_timedwait(&j->changed, &j->lock, &deadline);
        }
        if (j->queued > 0) {
                /* The journal is stuck (stopped?): what it never took is dropped, and counted. */
                s->stats.dropped += j->queued;
                s->stats.last_error = -ETIMEDOUT;
        }
        pthread_mutex_unlock(&j->lock);
        return j->queued > 0 ? -ETIMEDOUT : 0;
}

static void journal_free(struct sink *s) {
        struct sink_journal *j = (struct sink_journal *) s;
        if (j->writer_started) {
                pthread_mutex_lock(&j->lock);
                bool stuck = j->queued > 0;
                j->stopping = true;
                pthread_cond_broadcast(&j->changed);
                pthread_mutex_unlock(&j->lock);
                if (stuck)
                        pthread_cancel(j->writer); /* blocked in sendmsg() on a journal that does not read */
                pthread_join(j->writer, NULL);
        }
        pthread_cond_destroy(&j->changed);
        pthread_mutex_destroy(&j->lock);
        outbuf_free(&j->entry);
        free(j->queue);
        free(j);
}

static const struct sink_ops journal_ops = {
        .write = journal_write, .flush = journal_flush, .finish = journal_finish, .free = journal_free,
};

int sink_journal_new(unsigned max_iocbs_per_call, size_t queue_bytes, struct sink **ret) {
        struct sink_journal *j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (struct sink_journal) { .base.ops = &journal_ops, .max_iocbs = max_iocbs_per_call, .cap = queue_bytes };
        pthread_mutex_init(&j->lock, NULL);
        pthread_cond_init(&j->changed, NULL);
        j->queue = malloc(queue_bytes);
        if (!j->queue || !outbuf_reserve(&j->entry, 65536)) {
                journal_free(&j->base);
                return -ENOMEM;
        }
        /* The writer takes no signals: they are the daemon's (signalfd), and a thread with them unblocked would
         * take them instead. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int r = pthread_create(&j->writer, NULL, writer_main, j);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                journal_free(&j->base);
                return -r;
        }
        j->writer_started = true;
        *ret = &j->base;
        return 0;
}
