/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The formatters' pieces against plain references: the text layout's escaping and JSON strings of any bytes
 * against escapers written byte by byte.  Built twice: as is (SSE2 on x86_64), and as
 * test-json-portable without SSE2, so that the fallbacks other machines run are tested here too. */
#include "aio_decode.h"
#include "events.h"
#include "format_fields.h"
#include "format_json.h"
#include "format_text.h"

#include "test.h"

/* ASCII only: UTF-8 has its own cases below. */
static void reference(struct outbuf *b, const unsigned char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        outbuf_putc(b, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = s[i];
                if (c == '"' || c == '\\') {
                        outbuf_putc(b, '\\');
                        outbuf_putc(b, (char) c);
                } else if (c == '\n')
                        outbuf_puts(b, "\\n");
                else if (c < 0x20 || c == 0x7f) {
                        char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        outbuf_put(b, u, 6);
                } else
                        outbuf_putc(b, (char) c);
        }
        outbuf_putc(b, '"');
}

/* The text layout's escaping of a comm or a path, against a byte-at-a-time reading of its rule: strings of every
 * length up to 70 (the vector steps, their tails), mostly plain, with a byte to escape anywhere. */
TEST(escaping) {
        struct outbuf got = {}, got_str = {};
        char s[72], want[72 * 4 + 1];
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (unsigned len = 0; len <= 70; len++)
                for (unsigned round = 0; round < 200; round++) {
                        size_t w = 0;
                        for (unsigned i = 0; i < len; i++) {
                                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                                unsigned char c = (unsigned char) ('a' + x % 26);
                                if (x % 97 < 1 + round % 8) /* from about 1 byte in 97 to 8 in 97 */
                                        c = (unsigned char) (x >> 40);
                                if (c == 0)
                                        c = 0x5c;
                                s[i] = (char) c;
                                if (c >= 0x20 && c < 0x7f && c != '\\')
                                        want[w++] = (char) c;
                                else
                                        w += (size_t) sprintf(want + w, "\\x%02x", c);
                        }
                        s[len] = 0;
                        want[w] = 0;
                        outbuf_reset(&got);
                        outbuf_escaped(&got, s, len);
                        outbuf_putc(&got, 0);
                        outbuf_reset(&got_str);
                        outbuf_escaped_str(&got_str, s);
                        outbuf_putc(&got_str, 0);
                        if (strcmp(got.data, want) || strcmp(got_str.data, want)) {
                                CHECK_STR(got.data, want);
                                CHECK_STR(got_str.data, want);
                        }
                }
        outbuf_free(&got);
        outbuf_free(&got_str);
}

/* Every request and summary field name is spelled twice (journal, JSON): the two must say the same name. */
struct name_check {
        struct field_writer w;
        char names[2048]; /* every JSON name written, in order, separated by spaces */
        char not_laid_out[512]; /* those the text layout does not place: ", name = " each, NUL apart */
        size_t n_not_laid_out;
};

static void check_name(struct field_writer *w, const struct field_name *n) {
        char want_journal[64], want_json[64], upper[48];
        size_t k = 0;
        /* the JSON spelling is ,"name": */
        CHECK(n->json_len > 4 && n->json_len < sizeof(upper) && strlen(n->json) == n->json_len);
        CHECK(strlen(n->journal) == n->journal_len);
        for (size_t i = 2; i + 2 < n->json_len && k + 1 < sizeof(upper); i++, k++) {
                char c = n->json[i];
                CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
                upper[k] = c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
        }
        upper[k] = 0;
        snprintf(want_journal, sizeof(want_journal), "AIO_%s=", upper);
        snprintf(want_json, sizeof(want_json), ",\"%.*s\":", (int) (n->json_len - 4), n->json + 2);
        CHECK_STR(n->journal, want_journal);
        CHECK_STR(n->json, want_json);
        struct name_check *nc = (struct name_check *) w;
        size_t at = strlen(nc->names);
        snprintf(nc->names + at, sizeof(nc->names) - at, "%s%.*s", at ? " " : "", (int) (n->json_len - 4), n->json + 2);
        if (!n->text_laid_out) {
                size_t room = sizeof(nc->not_laid_out) - nc->n_not_laid_out;
                int len = snprintf(nc->not_laid_out + nc->n_not_laid_out, room, ", %.*s = ", (int) (n->json_len - 4),
                                   n->json + 2);
                CHECK(len > 0 && (size_t) len < room); /* else raise not_laid_out's size */
                if (len > 0 && (size_t) len < room)
                        nc->n_not_laid_out += (size_t) len + 1;
        }
}

/* Each field the lists wrote and the text does not place is in the entry's text line, at its end. */
static void check_text_has_the_rest(struct name_check *nc, const struct entry *e) {
        struct outbuf b = {};
        format_text(&b, e, 1);
        outbuf_putc(&b, 0);
        for (size_t at = 0; at < nc->n_not_laid_out; at += strlen(nc->not_laid_out + at) + 1)
                CHECK(strstr(b.data, nc->not_laid_out + at) != NULL);
        nc->n_not_laid_out = 0;
        nc->names[0] = 0;
        outbuf_free(&b);
}
static void nc_str(struct field_writer *w, const struct field_name *n, const char *v, size_t len) {
        check_name(w, n);
}
static void nc_word(struct field_writer *w, const struct field_name *n, const char *v) {
        check_name(w, n);
}
static void nc_u64(struct field_writer *w, const struct field_name *n, uint64_t v) {
        check_name(w, n);
}
static void nc_s64(struct field_writer *w, const struct field_name *n, int64_t v) {
        check_name(w, n);
}

TEST(field_names) {
        struct name_check nc = { .w = { .str = nc_str, .word = nc_word, .u64 = nc_u64, .s64 = nc_s64, .ptr = nc_u64 } };
        struct path_str *path = calloc(1, sizeof(*path) + 8);
        path->len = 4;
        memcpy(path->s, "/a/b", 5);
        /* every optional field present */
        struct request r = {
                .pid = 1, .submit_tid = 2, .reap_tid = 3, .submit_time = 10, .end_time = 20, .nbytes_known = true,
                .submit_known = true, .has_result = true, .rw_flags = 1, .flags = 1, .reqprio = 1, .path = path,
                .path_state = PATH_UNVERIFIED, .res = -5, .kind = REQ_UNKNOWN, .end = END_EVICTED, .comm = "x",
        };
        request_fields(&nc.w, &r);
        struct entry e = { .kind = ENTRY_REQUEST, .request = &r };
        CHECK_STR(nc.names, "request end pid comm interface ctx iocb data op fd path path_state offset nbytes rw_flags flags "
                            "reqprio submit_tid submit_nsec res errno res2 reap_tid inflight_nsec");
        check_text_has_the_rest(&nc, &e);
        r.kind = REQ_STALE;
        request_fields(&nc.w, &r);
        CHECK_STR(nc.names, "request pid comm interface ctx iocb data event_data op fd path path_state offset nbytes rw_flags "
                            "flags reqprio submit_tid submit_nsec res errno res2 reap_tid");
        check_text_has_the_rest(&nc, &e);
        r.kind = REQ_COMPLETED;
        request_fields(&nc.w, &r);
        CHECK_STR(nc.names, "request pid comm interface ctx iocb data op fd path path_state offset nbytes rw_flags flags "
                            "reqprio submit_tid submit_nsec res errno res2 reap_tid latency_nsec");

        /* io_uring's: a registered file, an op with no offset read */
        check_text_has_the_rest(&nc, &e);
        r.interface = REQ_IO_URING;
        r.fixed_file = true;
        r.no_offset = true;
        r.submit_failed = true;
        r.cq_overflow = CQ_OVERFLOW_KEPT;
        r.path = NULL;
        r.path_state = PATH_NONE;
        request_fields(&nc.w, &r);
        CHECK_STR(nc.names, "request pid comm interface ctx iocb data op fd fixed_file submit_failed nbytes rw_flags "
                            "flags reqprio submit_tid submit_nsec res errno res2 cq_overflow reap_tid latency_nsec");

        struct proc_interval iv = { .stale = 1, .unmatched = 1, .unknown = 1, .submitted_io_uring = 1,
                                    .cq_overflows = 1 };
        for (unsigned i = 0; i < REQ_OPS; i++)
                iv.submitted[i] = iv.completed[i] = 1;
        struct histogram h;
        histogram_reset(&h);
        histogram_add(&h, 1000);
        struct proc_summary s = { .pid = 1, .comm = "x", .start = 1, .end = 2, .iv = &iv, .latency = &h, .last = true };
        check_text_has_the_rest(&nc, &e);
        summary_fields(&nc.w, &s);
        CHECK_STR(nc.names, "pid comm summary_interval_nsec submitted submitted_pread submitted_pwrite "
                            "submitted_fsync submitted_fdsync submitted_poll submitted_noop submitted_preadv "
                            "submitted_pwritev submitted_other submitted_io_uring cq_overflows completed completed_pread "
                            "completed_pwrite completed_fsync completed_fdsync completed_poll completed_noop "
                            "completed_preadv completed_pwritev completed_other bytes_read bytes_written errors "
                            "cancelled abandoned stale unmatched unknown inflight inflight_max lat_samples lat_p50_nsec lat_p90_nsec "
                            "lat_p99_nsec lat_p999_nsec lat_max_nsec summary_last");
        /* a file's, and the other line's */
        struct file_summary fs = { .path = "/a/b", .path_len = 4, .requests = 9, .unverified = 1, .start = 1, .end = 2, .iv = &iv,
                                   .latency = &h, .records_lost = 3 };
        e = (struct entry) { .kind = ENTRY_SUMMARY, .summary = &s };
        check_text_has_the_rest(&nc, &e);
        file_summary_fields(&nc.w, &fs);
        CHECK_STR(nc.names, "file summary_interval_nsec requests path_unverified completed completed_pread completed_pwrite "
                            "completed_fsync completed_fdsync completed_poll completed_noop completed_preadv "
                            "completed_pwritev completed_other bytes_read bytes_written errors cancelled abandoned "
                            "stale unmatched unknown lat_samples lat_p50_nsec lat_p90_nsec lat_p99_nsec "
                            "lat_p999_nsec lat_max_nsec records_lost");
        e = (struct entry) { .kind = ENTRY_FILE_SUMMARY, .file_summary = &fs };
        check_text_has_the_rest(&nc, &e);
        fs.path = NULL;
        file_summary_fields(&nc.w, &fs);
        CHECK(strncmp(nc.names, "other_files without_path summary_interval_nsec requests ", 56) == 0);
        check_text_has_the_rest(&nc, &e);

        /* a call's, one that failed (its arguments are the syscall table's, which the text draws from too) */
        struct aio_call call = { .syscall = AIO_IO_SUBMIT, .pid = 1, .tid = 2, .comm = "x", .ret = -EINTR,
                                 .enter_seen = true };
        call_fields(&nc.w, &call, false);
        CHECK_STR(nc.names, "syscall pid tid comm ret errno duration_nsec");
        e = (struct entry) { .kind = ENTRY_CALL, .call = &call };
        check_text_has_the_rest(&nc, &e);
        free(path);
}

/* The text tail: a field the text layout does not place, as ", name = value", its value as the text writes it
 * (a string escaped); one it places, nothing. */
TEST(text_tail) {
        struct outbuf b = {};
        struct text_tail t;
        text_tail_init(&t, &b);
        t.w.u64(&t.w, FIELD_NAME("NEW_COUNT", "new_count"), 7);
        t.w.s64(&t.w, FIELD_NAME("NEW_DELTA", "new_delta"), -3);
        t.w.ptr(&t.w, FIELD_NAME("NEW_FLAGS", "new_flags"), 0x10);
        t.w.word(&t.w, FIELD_NAME("NEW_STATE", "new_state"), "kept");
        t.w.str(&t.w, FIELD_NAME("NEW_PATH", "new_path"), "/a\nb", 4);
        t.w.u64(&t.w, FIELD_NAME_LAID_OUT("NBYTES", "nbytes"), 4096);
        outbuf_putc(&b, 0);
        CHECK_STR(b.data, ", new_count = 7, new_delta = -3, new_flags = 0x0000000000000010, new_state = kept, "
                          "new_path = /a\\x0ab");
        outbuf_free(&b);
}

/* The text layout writes a line's fields into room reserved once, by bounds on what each field can take: the
 * names it writes fit theirs, and lines of the longest values of every field stay in their room (a line that
 * did not would stop the test in outbuf_span_end). */
TEST(line_room) {
        char tmp[16], want[64];
        int longest_errno = 1;
        for (int e = 1; e <= 4095; e++) {
                size_t n = strlen(errno_name(e, tmp));
                CHECK(n <= ERRNO_NAME_MAX);
                if (n > strlen(errno_name(longest_errno, tmp)))
                        longest_errno = e;
        }
        for (unsigned op = 0; op <= UINT16_MAX; op++)
                CHECK(!iocb_opcode_name((uint16_t) op) || strlen(iocb_opcode_name((uint16_t) op)) <= SPAN_WORD);
        for (int c = 0; c <= _AIO_SYSCALL_MAX; c++)
                CHECK(strlen(aio_syscall_name((enum aio_syscall) c)) <= SPAN_WORD);
        for (int k = 0; k <= _REQ_KIND_MAX; k++)
                CHECK(strlen(request_kind_name((enum request_kind) k)) <= SPAN_WORD);

        struct { char *(*put)(char *, uint64_t); uint64_t v; size_t room; const char *want; } spans[] = {
                { span_u64_any, UINT64_MAX, SPAN_U64, "18446744073709551615" },
                { span_ptr, UINT64_MAX, SPAN_PTR, "0xffffffffffffffff" },
        };
        for (size_t i = 0; i < ELEMENTSOF(spans); i++) {
                memset(want, '#', sizeof(want));
                char *end = spans[i].put(want, spans[i].v);
                CHECK((size_t) (end - want) == spans[i].room && memcmp(want, spans[i].want, spans[i].room) == 0);
                CHECK(want[spans[i].room] == '#');
        }
        CHECK(span_s64(want, INT64_MIN) - want == SPAN_S64);
        CHECK(span_result(want, -longest_errno) - want <= SPAN_RESULT);

        const int64_t worst = -(int64_t) longest_errno;
        struct iocb_info cbs[2] = {
                { .addr = UINT64_MAX, .state = MEM_STALE, .data = UINT64_MAX, .opcode = UINT16_MAX, .fd = UINT32_MAX,
                  .buf = UINT64_MAX, .nbytes = UINT64_MAX, .offset = INT64_MIN, .rw_flags = -1, .reqprio = INT16_MIN,
                  .flags = UINT32_MAX, .resfd = UINT32_MAX, .key = UINT32_MAX },
                { .addr = UINT64_MAX, .opcode = 7 /* preadv */, .nbytes = UINT64_MAX, .iov_state = MEM_STALE,
                  .iov_total = UINT64_MAX, .offset = INT64_MIN },
        };
        struct event_info evs[1] = {
                { .addr = UINT64_MAX, .state = MEM_STALE, .data = UINT64_MAX, .obj = UINT64_MAX, .res = worst,
                  .res2 = INT64_MIN, .fd = INT32_MAX, .data_mismatch = true, .expected_data = UINT64_MAX },
        };
        struct aio_call call = {
                .pid = UINT32_MAX, .tid = UINT32_MAX, .comm = "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
                .exit_time = UINT64_MAX, .enter_seen = true, .args_known = true, .ret = worst, .n_wanted = 2,
                .n_items = 1,
                .iocbs = cbs, .events = evs, .cancel_iocb = cbs[0],
        };
        for (int a = 0; a < AIO_ARGS_MAX; a++)
                call.args[a] = a == 1 || a == 2 ? (uint64_t) INT64_MIN : UINT64_MAX;
        struct outbuf b = {};
        struct entry e = { .kind = ENTRY_CALL, .call = &call };
        unsigned lines = 0;
        for (int c = 0; c < _AIO_SYSCALL_MAX; c++) {
                call.syscall = (enum aio_syscall) c;
                call.n_items = c == AIO_IO_SUBMIT ? 2 : 1;
                format_text(&b, &e, 1);
        }
        for (size_t i = 0; i < b.len; i++)
                lines += b.data[i] == '\n';
        CHECK(!b.failed && lines > 2 * _AIO_SYSCALL_MAX);
        outbuf_putc(&b, 0);
        snprintf(want, sizeof(want), "[retval = %" PRId64 " (%s)] (18446744073709551615 ns)", worst,
                 errno_name(longest_errno, tmp));
        CHECK(strstr(b.data, want) != NULL);
        CHECK(strstr(b.data, "    iocb[   1] = 0xffffffffffffffff, op = preadv, fd = 0, data = ") != NULL);

        struct path_str *path = malloc(sizeof(*path) + 300);
        CHECK(path != NULL);
        *path = (struct path_str) { .refs = 1, .len = 299 };
        memset(path->s, '\n', 300);
        struct request r = {
                .pid = UINT32_MAX, .submit_tid = UINT32_MAX, .reap_tid = UINT32_MAX, .ctx = UINT64_MAX,
                .iocb = UINT64_MAX, .data = UINT64_MAX, .submit_time = 0, .end_time = UINT64_MAX, .offset = INT64_MIN,
                .nbytes = UINT64_MAX, .nbytes_known = true, .submit_known = true, .has_result = true,
                .opcode = UINT16_MAX, .reqprio = INT16_MIN, .rw_flags = -1, .flags = UINT32_MAX, .fd = UINT32_MAX,
                .path = path, .path_state = PATH_UNVERIFIED, .res = worst, .res2 = INT64_MIN,
                .event_data = UINT64_MAX, .comm = "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
        };
        e = (struct entry) { .kind = ENTRY_REQUEST, .request = &r };
        /* with the options, the line's last span starts after them; without, it takes the offset too */
        for (int k = 0; k < 2 * _REQ_KIND_MAX; k++) {
                r.kind = (enum request_kind) (k / 2);
                r.rw_flags = k % 2 ? -1 : 0;
                r.reqprio = k % 2 ? INT16_MIN : 0;
                r.flags = k % 2 ? UINT32_MAX : 0;
                outbuf_reset(&b);
                format_text(&b, &e, 1);
                CHECK(!b.failed && b.len > 4 * 299 && b.data[b.len - 1] == '\n' &&
                      memchr(b.data, '\n', b.len) == b.data + b.len - 1);
        }
        free(path);
        outbuf_free(&b);
}

/* json_string against a plain reference on 200,000 strings, mostly plain with bytes that must be escaped. */
TEST(json_string_against_reference) {
        struct outbuf got = {}, want = {};
        unsigned char s[64];
        uint64_t x = 12345;
        for (int round = 0; round < 200000; round++) {
                size_t n = (size_t) (round % 41);
                for (size_t i = 0; i < n; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        /* mostly plain, now and then one of the bytes that must be escaped */
                        static const char special[] = "\"\\\n\x01\x1f\x7f\x20~";
                        s[i] = x % 16 == 0 ? (unsigned char) special[(x >> 8) % 8] : (unsigned char) (0x20 + (x >> 16) % 95);
                }
                outbuf_reset(&got);
                outbuf_reset(&want);
                json_string(&got, (const char *) s, n);
                reference(&want, s, n);
                if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
                        fprintf(stderr, "%s: json_string differs on round %d (%zu bytes)\n", test_case, round, n);
                        test_failures++;
                        break;
                }
        }
        outbuf_free(&got);
        outbuf_free(&want);
}

/* UTF-8: valid sequences kept, anything else U+FFFD, byte by byte. */
TEST(json_string_utf8) {
        struct outbuf got = {};
        const char *utf8 = "a\xc3\xa9z\xe2\x82\xac\xf0\x9f\x98\x80\xff\xc3(\xed\xa0\x80";
        json_string(&got, utf8, strlen(utf8));
        outbuf_putc(&got, 0);
        CHECK_STR(got.data, "\"a\xc3\xa9z\xe2\x82\xac\xf0\x9f\x98\x80\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\"");
        outbuf_free(&got);
}

TEST_MAIN("test-json")
