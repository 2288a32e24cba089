/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_journal.h"

#include <stdio.h>
#include <string.h>

#include "format_fields.h"
#include "format_text.h"
#include "util.h"

/* A field is a length, then NAME=value; the length is patched once the value is written.  Names come with their
 * lengths, known at compile time. */
#define NAME(n) n "=", sizeof(n "=") - 1

/* Inlined: a literal name is copied by size */
static _always_inline_ size_t field_begin(struct outbuf *b, const char *name, size_t name_len) {
        size_t at = b->len;
        if (!outbuf_reserve(b, sizeof(uint32_t) + name_len))
                return at;
        memset(b->data + at, 0, sizeof(uint32_t));
        memcpy(b->data + at + sizeof(uint32_t), name, name_len);
        b->len += sizeof(uint32_t) + name_len;
        return at;
}

/* A shared field's name: padded, copied by its fixed size */
static size_t field_begin_named(struct outbuf *b, const struct field_name *name) {
        size_t at = b->len;
        uint32_t zero = 0;
        outbuf_put(b, &zero, sizeof(zero));
        field_name_put(b, name->journal, name->journal_len);
        return at;
}

static void field_end(struct outbuf *b, size_t at, unsigned *n) {
        if (b->failed)
                return;
        uint32_t len = (uint32_t) (b->len - at - sizeof(uint32_t));
        memcpy(b->data + at, &len, sizeof(len));
        (*n)++;
}

static _always_inline_ void field_str(struct outbuf *b, unsigned *n, const char *name,
                                      size_t name_len, const char *v, size_t len) {
        size_t at = field_begin(b, name, name_len);
        outbuf_put(b, v, len);
        field_end(b, at, n);
}

static _always_inline_ void field_u64(struct outbuf *b, unsigned *n, const char *name,
                                      size_t name_len, uint64_t v) {
        size_t at = field_begin(b, name, name_len);
        outbuf_u64(b, v);
        field_end(b, at, n);
}

static _always_inline_ void field_s64(struct outbuf *b, unsigned *n, const char *name,
                                      size_t name_len, int64_t v) {
        size_t at = field_begin(b, name, name_len);
        outbuf_s64(b, v);
        field_end(b, at, n);
}

static _always_inline_ void field_ptr(struct outbuf *b, unsigned *n, const char *name,
                                      size_t name_len, uint64_t v) {
        size_t at = field_begin(b, name, name_len);
        outbuf_ptr(b, v);
        field_end(b, at, n);
}

/* message_id: one of the MESSAGE_ID_* (128 bits in hex) */
static void common(struct outbuf *b, unsigned *n, const char *message_id, int priority) {
        field_str(b, n, NAME("MESSAGE_ID"), message_id, 32);
        char level = (char) ('0' + (priority & 7)); /* syslog's 0..7 */
        field_str(b, n, NAME("PRIORITY"), &level, 1);
        field_str(b, n, NAME("SYSLOG_IDENTIFIER"), "aiotraced", 9);
}

/* The text layout, written in place: without its last newline, which journalctl adds. */
static void message(struct outbuf *b, unsigned *n, const struct entry *e, unsigned max_iocbs) {
        size_t at = field_begin(b, NAME("MESSAGE"));
        size_t start = b->len;
        format_text(b, e, max_iocbs);
        if (!b->failed && b->len > start && b->data[b->len - 1] == '\n')
                b->len--;
        field_end(b, at, n);
}

/* Anything the call printed as not vouched for makes it a warning. */
static bool call_has_doubt(const struct aio_call *c) {
        if (c->aux_state == MEM_STALE)
                return true;
        for (unsigned i = 0; i < c->n_items; i++) {
                if (c->syscall == AIO_IO_SUBMIT &&
                    (c->iocbs[i].state == MEM_STALE || c->iocbs[i].addr_state == MEM_STALE))
                        return true;
                if ((c->syscall == AIO_IO_GETEVENTS || c->syscall == AIO_IO_PGETEVENTS) &&
                    (c->events[i].state == MEM_STALE || c->events[i].data_mismatch))
                        return true;
        }
        return false;
}

/* The shared request and summary fields as AIO_<NAME>= fields. */
struct journal_fields {
        struct field_writer w;
        struct outbuf *b;
        unsigned *n;
};

static void jf_str(struct field_writer *w, const struct field_name *name, const char *v, size_t len) {
        struct journal_fields *j = (struct journal_fields *) w;
        size_t at = field_begin_named(j->b, name);
        outbuf_put(j->b, v, len);
        field_end(j->b, at, j->n);
}

static void jf_word(struct field_writer *w, const struct field_name *name, const char *v) {
        jf_str(w, name, v, strlen(v));
}

static void jf_u64(struct field_writer *w, const struct field_name *name, uint64_t v) {
        struct journal_fields *j = (struct journal_fields *) w;
        size_t at = field_begin_named(j->b, name);
        outbuf_u64(j->b, v);
        field_end(j->b, at, j->n);
}

static void jf_s64(struct field_writer *w, const struct field_name *name, int64_t v) {
        struct journal_fields *j = (struct journal_fields *) w;
        size_t at = field_begin_named(j->b, name);
        outbuf_s64(j->b, v);
        field_end(j->b, at, j->n);
}

static void jf_ptr(struct field_writer *w, const struct field_name *name, uint64_t v) {
        struct journal_fields *j = (struct journal_fields *) w;
        size_t at = field_begin_named(j->b, name);
        outbuf_ptr(j->b, v);
        field_end(j->b, at, j->n);
}

static struct journal_fields journal_fields(struct outbuf *b, unsigned *n) {
        return (struct journal_fields) {
                .w = { .str = jf_str, .word = jf_word, .u64 = jf_u64, .s64 = jf_s64, .ptr = jf_ptr }, .b = b, .n = n,
        };
}


unsigned format_journal(struct outbuf *b, const struct entry *e, unsigned max_iocbs) {
        unsigned n = 0;
        struct journal_fields jf = journal_fields(b, &n);
        switch (e->kind) {
        case ENTRY_CALL:
                common(b, &n, MESSAGE_ID_CALL, call_has_doubt(e->call) ? 4 : 6);
                message(b, &n, e, max_iocbs);
                call_fields(&jf.w, e->call, true);
                break;
        case ENTRY_LOST:
                common(b, &n, MESSAGE_ID_LOST, 4);
                message(b, &n, e, max_iocbs);
                field_u64(b, &n, NAME("AIO_LOST"), e->lost);
                field_u64(b, &n, NAME("AIO_CPU"), e->cpu);
                break;
        case ENTRY_INFO: {
                static const char *const ids[] = {
                        [INFO_NOTE] = MESSAGE_ID_INFO, [INFO_STARTED] = MESSAGE_ID_STARTED,
                        [INFO_STOPPED] = MESSAGE_ID_STOPPED, [INFO_RELOADED] = MESSAGE_ID_RELOADED,
                };
                common(b, &n, ids[e->info < ELEMENTSOF(ids) ? e->info : INFO_NOTE], e->priority ? e->priority : 6);
                message(b, &n, e, max_iocbs);
                break;
        }
        case ENTRY_STATS:
                common(b, &n, MESSAGE_ID_INFO, 6);
                message(b, &n, e, max_iocbs);
                break;
        case ENTRY_DROPPED: {
                char name[16];
                const char *err = errno_name(-e->error, name);
                common(b, &n, MESSAGE_ID_DROPPED, 4);
                message(b, &n, e, max_iocbs);
                field_u64(b, &n, NAME("AIO_DROPPED"), e->dropped);
                field_str(b, &n, NAME("AIO_ERRNO"), err, strlen(err));
                break;
        }
        case ENTRY_FILE_SUMMARY: {
                common(b, &n, MESSAGE_ID_FILE_SUMMARY, e->file_summary->records_lost ? 4 : 6);
                message(b, &n, e, max_iocbs);
                file_summary_fields(&jf.w, e->file_summary);
                break;
        }
        case ENTRY_REQUEST:
        case ENTRY_SUMMARY: {
                bool req = e->kind == ENTRY_REQUEST;
                common(b, &n, req ? MESSAGE_ID_REQUEST : MESSAGE_ID_SUMMARY,
                       req ? request_priority(e->request) : e->summary->records_lost ? 4 : 6);
                message(b, &n, e, max_iocbs);
                field_u64(b, &n, NAME("OBJECT_PID"), req ? e->request->pid : e->summary->pid);
                if (req)
                        request_fields(&jf.w, e->request);
                else
                        summary_fields(&jf.w, e->summary);
                break;
        }
        }
        return n;
}

unsigned format_journal_dropped(struct outbuf *b, uint64_t dropped, const char *why) {
        unsigned n = 0;
        char msg[256];
        snprintf(msg, sizeof(msg), "[dropped] %llu entries could not be written to the journal (%s)",
                 (unsigned long long) dropped, why);
        common(b, &n, MESSAGE_ID_DROPPED, 4);
        field_str(b, &n, NAME("MESSAGE"), msg, strlen(msg));
        field_u64(b, &n, NAME("AIO_DROPPED"), dropped);
        return n;
}
