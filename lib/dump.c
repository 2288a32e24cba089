/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "dump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "outbuf.h"
#include "ring.h"
#include "util.h"

#define DUMP_MAGIC "AIOTDUMP 1\n"
#define DUMP_FLUSH_AT (256u * 1024u)

struct dump {
        int fd;
        struct outbuf buf;
        uint64_t buffered; /* records in buf */
        uint64_t failed;
};

/* A batch that cannot be written whole counts all its records as lost: what reached the file of it is not
 * known to be whole. */
void dump_flush(struct dump *d) {
        size_t written;
        if (write_all(d->fd, d->buf.data, d->buf.len, &written) < 0)
                d->failed += d->buffered;
        d->buffered = 0;
        outbuf_reset(&d->buf);
}

int dump_open(const char *path, const struct event_table *t, struct dump **ret, pid_t *ret_holder) {
        /* truncated only once locked: another daemon's dump is left as it is */
        _cleanup_(closep) int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        int r = lock_for_writing(fd, ret_holder);
        if (r < 0)
                return r;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0)
                return -errno;
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
                return -errno;
        struct dump *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->fd = TAKE_FD(fd);
        outbuf_puts(&d->buf, DUMP_MAGIC);
        for (size_t i = 0; i < t->n_events; i++) {
                char line[160];
                snprintf(line, sizeof(line), "event %s %s %d\n", t->events[i].system, t->events[i].name,
                         t->events[i].tp_id);
                outbuf_puts(&d->buf, line);
        }
        outbuf_puts(&d->buf, "records\n");
        if (d->buf.failed) {
                close(d->fd);
                outbuf_free(&d->buf);
                free(d);
                return -ENOMEM;
        }
        *ret = d;
        return 0;
}

void dump_record(struct dump *d, const struct perf_event_header *h) {
        outbuf_put(&d->buf, h, h->size);
        if (d->buf.failed) {
                d->failed++;
                d->buf.failed = false;
                return;
        }
        d->buffered++;
        if (d->buf.len >= DUMP_FLUSH_AT)
                dump_flush(d);
}

uint64_t dump_close(struct dump *d) {
        if (!d)
                return 0;
        dump_flush(d);
        if (close(d->fd) < 0 && errno != EINTR && d->failed == 0)
                d->failed = 1; /* a write-back error: something of the file is not there */
        uint64_t failed = d->failed;
        outbuf_free(&d->buf);
        free(d);
        return failed;
}

int dump_load(const char *path, const struct event_table *t, uint8_t **ret, size_t *ret_len, size_t *ret_n) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        char line[256];
        int remap[65536];
        for (size_t i = 0; i < ELEMENTSOF(remap); i++)
                remap[i] = -1;
        if (!fgets(line, sizeof(line), f) || strcmp(line, DUMP_MAGIC) != 0)
                return -EPROTO;
        while (fgets(line, sizeof(line), f) && strcmp(line, "records\n") != 0) {
                char system[64], name[64];
                int id;
                if (sscanf(line, "event %63s %63s %d", system, name, &id) != 3 || id < 0 || id > 65535)
                        continue;
                for (size_t i = 0; i < t->n_events; i++)
                        if (strcmp(t->events[i].system, system) == 0 && strcmp(t->events[i].name, name) == 0)
                                remap[id] = t->events[i].tp_id;
        }
        size_t cap = 1 << 20, len = 0, n;
        _cleanup_(freep) uint8_t *buf = malloc(cap);
        while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
                len += n;
                if (len == cap) {
                        uint8_t *p = realloc(buf, cap * 2);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap *= 2;
                }
        }
        if (!buf)
                return -ENOMEM;
        size_t count = 0, whole = 0;
        for (size_t off = 0; off + sizeof(struct perf_event_header) <= len;) {
                struct perf_event_header *h = (struct perf_event_header *) (buf + off);
                if (h->size < sizeof(*h) || off + h->size > len)
                        break;
                struct sample s;
                if (h->type == PERF_RECORD_SAMPLE && sample_parse(h, &s) == 0 &&
                    s.raw_size >= t->common_type.offset + t->common_type.size && t->common_type.size == 2) {
                        uint8_t *type_at = (uint8_t *) s.raw + t->common_type.offset;
                        int id = load_u16(type_at);
                        if (remap[id] >= 0) {
                                uint16_t mapped = (uint16_t) remap[id];
                                memcpy(type_at, &mapped, sizeof(mapped));
                        }
                }
                off += h->size;
                count++;
                whole = off;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = whole;
        *ret_n = count;
        return 0;
}
