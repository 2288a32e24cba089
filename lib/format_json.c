/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format_json.h"

#include <string.h>
#include <time.h>

#include <linux/aio_abi.h>

#include "aio_decode.h"
#include "format_fields.h"
#include "format_text.h"
#include "util.h"

/* The length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not one. */
static size_t utf8_valid(const unsigned char *s, size_t n) {
        unsigned char c = s[0];
        size_t len;
        uint32_t min, cp;
        if (c >= 0xc2 && c <= 0xdf)
                len = 2, min = 0x80, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
                len = 3, min = 0x800, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
                len = 4, min = 0x10000, cp = c & 0x07;
        else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

/* Bytes that go into a JSON string as they are: printable ASCII but the quote and the backslash. */
static bool json_plain(unsigned char c) {
        return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void json_string(struct outbuf *b, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        const unsigned char *p = (const unsigned char *) s;
        outbuf_putc(b, '"');
        for (size_t i = 0; i < n;) {
                unsigned char c = p[i];
                if (json_plain(c)) {
                        /* a run of plain ASCII in one copy */
                        size_t run = 1;
                        while (i + run < n && json_plain(p[i + run]))
                                run++;
                        outbuf_put(b, p + i, run);
                        i += run;
                } else if (c == '"' || c == '\\') {
                        outbuf_putc(b, '\\');
                        outbuf_putc(b, (char) c);
                        i++;
                } else if (c == '\n') {
                        outbuf_puts(b, "\\n");
                        i++;
                } else if (c < 0x20 || c == 0x7f) {
                        char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        outbuf_put(b, u, sizeof(u));
                        i++;
                } else {
                        size_t len = utf8_valid(p + i, n - i);
                        if (len) {
                                outbuf_put(b, p + i, len);
                                i += len;
                        } else {
                                outbuf_puts(b, "\\ufffd");
                                i++;
                        }
                }
        }
        outbuf_putc(b, '"');
}

/* Members after the first start with a comma: the object is opened by obj_open, which writes none.  Keys are
 * literals: inlined, their lengths are known at compile time. */
static _always_inline_ void key(struct outbuf *b, const char *k) {
        size_t n = strlen(k);
        if (!outbuf_reserve(b, n + 4))
                return;
        char *d = b->data + b->len;
        d[0] = ',';
        d[1] = '"';
        memcpy(d + 2, k, n);
        d[n + 2] = '"';
        d[n + 3] = ':';
        b->len += n + 4;
}

/* A word of aiotraced's own (a syscall, an op, a state, an errno name): nothing in it to escape. */
static void json_word(struct outbuf *b, const char *v) {
        size_t n = strlen(v);
        if (!outbuf_reserve(b, n + 2))
                return;
        char *d = b->data + b->len;
        d[0] = '"';
        memcpy(d + 1, v, n);
        d[n + 1] = '"';
        b->len += n + 2;
}

static _always_inline_ void kv_word(struct outbuf *b, const char *k, const char *v) {
        key(b, k);
        json_word(b, v);
}

static _always_inline_ void kv_u64(struct outbuf *b, const char *k, uint64_t v) {
        key(b, k);
        outbuf_u64(b, v);
}

static _always_inline_ void kv_s64(struct outbuf *b, const char *k, int64_t v) {
        key(b, k);
        outbuf_s64(b, v);
}

static void quoted_ptr(struct outbuf *b, uint64_t v) {
        outbuf_putc(b, '"');
        outbuf_ptr(b, v);
        outbuf_putc(b, '"');
}

static _always_inline_ void kv_ptr(struct outbuf *b, const char *k, uint64_t v) {
        key(b, k);
        quoted_ptr(b, v);
}

static void kv_state(struct outbuf *b, enum mem_state s) {
        kv_word(b, "state", s == MEM_OK ? "ok" : mem_state_name(s));
}

/* RFC 3339, UTC, with nanoseconds.  Entries come many to a second: the date is formatted once a second. */
static void put_ts(struct outbuf *b, uint64_t mono, int64_t offset) {
        static __thread time_t cached_sec = -1;
        static __thread char cached[32];
        static __thread size_t cached_len;
        int64_t ns = (int64_t) mono + offset;
        time_t sec = (time_t) (ns / 1000000000);
        if (sec != cached_sec) {
                struct tm tm;
                gmtime_r(&sec, &tm);
                cached_len = strftime(cached, sizeof(cached), "%Y-%m-%dT%H:%M:%S", &tm);
                cached_sec = sec;
        }
        outbuf_puts(b, ",\"ts\":\"");
        outbuf_put(b, cached, cached_len);
        outbuf_putc(b, '.');
        outbuf_frac9(b, (uint64_t) (ns % 1000000000));
        outbuf_puts(b, "Z\"");
}

static void put_iocb(struct outbuf *b, unsigned i, const struct iocb_info *cb) {
        outbuf_puts(b, "{\"i\":");
        outbuf_u64(b, i);
        if (cb->addr_state != MEM_OK && cb->addr_state != MEM_STALE) {
                kv_state(b, cb->addr_state);
                outbuf_putc(b, '}');
                return;
        }
        kv_ptr(b, "iocb", cb->addr);
        kv_state(b, cb->state == MEM_OK ? cb->addr_state : cb->state);
        if (cb->state == MEM_OK || cb->state == MEM_STALE) {
                const char *op = iocb_opcode_name(cb->opcode);
                if (op)
                        kv_word(b, "op", op);
                else
                        kv_u64(b, "op", cb->opcode);
                kv_s64(b, "fd", (int32_t) cb->fd);
                kv_ptr(b, "data", cb->data);
                kv_ptr(b, "buf", cb->buf);
                kv_u64(b, "nbytes", cb->nbytes);
                kv_s64(b, "offset", cb->offset);
                if (iocb_is_vectored(cb)) {
                        if (cb->iov_state == MEM_OK || cb->iov_state == MEM_STALE)
                                kv_u64(b, "iov_total", cb->iov_total);
                        else
                                kv_word(b, "iov_state", mem_state_name(cb->iov_state));
                }
                if (cb->rw_flags)
                        kv_ptr(b, "rw_flags", (uint32_t) cb->rw_flags);
                if (cb->reqprio)
                        kv_s64(b, "reqprio", cb->reqprio);
                if (cb->flags)
                        kv_ptr(b, "flags", cb->flags);
                if (cb->flags & IOCB_FLAG_RESFD)
                        kv_u64(b, "resfd", cb->resfd);
                if (cb->key)
                        kv_u64(b, "key", cb->key);
        }
        outbuf_putc(b, '}');
}

static void put_event(struct outbuf *b, unsigned i, const struct event_info *ev) {
        outbuf_puts(b, "{\"i\":");
        outbuf_u64(b, i);
        kv_ptr(b, "addr", ev->addr);
        kv_state(b, ev->data_mismatch && ev->state == MEM_OK ? MEM_STALE : ev->state);
        if (ev->state == MEM_OK || ev->state == MEM_STALE) {
                kv_ptr(b, "obj", ev->obj);
                kv_ptr(b, "data", ev->data);
                kv_s64(b, "res", ev->res);
                if (result_is_errno(ev->res)) {
                        char name[16];
                        kv_word(b, "errno", errno_name((int) -ev->res, name));
                }
                kv_s64(b, "res2", ev->res2);
                if (ev->fd >= 0)
                        kv_s64(b, "fd", ev->fd);
                if (ev->data_mismatch)
                        kv_ptr(b, "submitted_data", ev->expected_data);
        }
        outbuf_putc(b, '}');
}

static void put_events(struct outbuf *b, const struct aio_call *c) {
        key(b, "events");
        outbuf_putc(b, '[');
        for (unsigned i = 0; i < c->n_items; i++) {
                if (i)
                        outbuf_putc(b, ',');
                put_event(b, i, &c->events[i]);
        }
        outbuf_putc(b, ']');
}

/* The shared request and summary fields, as JSON members: the journal's names in lower case. */
struct json_fields {
        struct field_writer w;
        struct outbuf *b;
};

static void jf_str(struct field_writer *w, const struct field_name *name, const char *v, size_t len) {
        struct outbuf *b = ((struct json_fields *) w)->b;
        field_name_put(b, name->json, name->json_len);
        json_string(b, v, len);
}

static void jf_word(struct field_writer *w, const struct field_name *name, const char *v) {
        struct outbuf *b = ((struct json_fields *) w)->b;
        field_name_put(b, name->json, name->json_len);
        json_word(b, v);
}

static void jf_u64(struct field_writer *w, const struct field_name *name, uint64_t v) {
        struct outbuf *b = ((struct json_fields *) w)->b;
        field_name_put(b, name->json, name->json_len);
        outbuf_u64(b, v);
}

static void jf_s64(struct field_writer *w, const struct field_name *name, int64_t v) {
        struct outbuf *b = ((struct json_fields *) w)->b;
        field_name_put(b, name->json, name->json_len);
        outbuf_s64(b, v);
}

static void jf_ptr(struct field_writer *w, const struct field_name *name, uint64_t v) {
        struct outbuf *b = ((struct json_fields *) w)->b;
        field_name_put(b, name->json, name->json_len);
        quoted_ptr(b, v);
}

static struct json_fields json_fields(struct outbuf *b) {
        return (struct json_fields) { .w = { .str = jf_str, .word = jf_word, .u64 = jf_u64, .s64 = jf_s64, .ptr = jf_ptr }, .b = b };
}

static void call_members(struct outbuf *b, const struct aio_call *c) {
        struct json_fields jf = json_fields(b);
        call_fields(&jf.w, c, false);
        if (!c->args_known)
                return;
        switch (c->syscall) {
        case AIO_IO_SUBMIT:
                key(b, "iocbs");
                outbuf_putc(b, '[');
                for (unsigned i = 0; i < c->n_items; i++) {
                        if (i)
                                outbuf_putc(b, ',');
                        put_iocb(b, i, &c->iocbs[i]);
                }
                outbuf_putc(b, ']');
                if (c->n_wanted > c->n_items)
                        kv_u64(b, "not_read", c->n_wanted - c->n_items);
                break;
        case AIO_IO_CANCEL:
                key(b, "cancelled");
                put_iocb(b, 0, &c->cancel_iocb);
                if (c->n_items) /* the result of a cancel done at once */
                        put_events(b, c);
                break;
        case AIO_IO_GETEVENTS:
        case AIO_IO_PGETEVENTS:
                put_events(b, c);
                if (c->n_wanted > c->n_items)
                        kv_u64(b, "not_read", c->n_wanted - c->n_items);
                break;
        default:
                break;
        }
}

static void message(struct outbuf *b, struct outbuf *text, const struct entry *e, unsigned max) {
        size_t len = format_text_message(text, e, max);
        key(b, "message");
        json_string(b, text->data, len);
}

int64_t json_realtime_offset(void) {
        struct timespec r, m;
        clock_gettime(CLOCK_REALTIME, &r);
        clock_gettime(CLOCK_MONOTONIC, &m);
        return ((int64_t) r.tv_sec - (int64_t) m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

void format_line(struct outbuf *b, struct outbuf *text, const struct line_format *f, const struct entry *e) {
        if (f->format == OUTPUT_JSON)
                format_json(b, text, e, f);
        else
                format_text(b, e, f->max_iocbs_per_call);
}

void format_json(struct outbuf *b, struct outbuf *text, const struct entry *e, const struct line_format *f) {
        static const char *const kinds[] = {
                [ENTRY_CALL] = "call", [ENTRY_LOST] = "lost", [ENTRY_INFO] = "info", [ENTRY_STATS] = "stats",
                [ENTRY_REQUEST] = "request", [ENTRY_SUMMARY] = "summary",
                [ENTRY_FILE_SUMMARY] = "file_summary", [ENTRY_DROPPED] = "dropped",
        };
        struct json_fields jf = json_fields(b);
        bool with_message = f->json_message;
        outbuf_puts(b, "{\"schema\":");
        outbuf_u64(b, JSON_SCHEMA_VERSION);
        kv_word(b, "kind", kinds[e->kind]);
        put_ts(b, e->time, f->realtime_offset_ns);
        kv_u64(b, "mono_ns", e->time);
        switch (e->kind) {
        case ENTRY_CALL:
                call_members(b, e->call);
                break;
        case ENTRY_LOST:
                kv_u64(b, "lost", e->lost);
                kv_u64(b, "cpu", e->cpu);
                with_message = true;
                break;
        case ENTRY_REQUEST:
                request_fields(&jf.w, e->request);
                break;
        case ENTRY_SUMMARY:
                summary_fields(&jf.w, e->summary);
                break;
        case ENTRY_FILE_SUMMARY:
                file_summary_fields(&jf.w, e->file_summary);
                break;
        case ENTRY_DROPPED: {
                char name[16];
                kv_u64(b, "dropped", e->dropped);
                kv_word(b, "errno", errno_name(-e->error, name));
                key(b, "where");
                json_string(b, e->where, strlen(e->where));
                with_message = true;
                break;
        }
        default:
                with_message = true; /* info, stats: the message is all they have */
                break;
        }
        if (with_message)
                message(b, text, e, f->max_iocbs_per_call);
        outbuf_puts(b, "}\n");
}
