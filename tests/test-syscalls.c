/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The syscall table and the op table are the one place a call's arguments and an iocb's opcodes are described:
 * every format writes each argument the table lists, in its order and type, under the table's names, and
 * nothing else; each op's name, direction and counts come from the op table. */
#include <linux/aio_abi.h>

#include "entry.h"
#include "format_journal.h"
#include "format_json.h"
#include "format_text.h"
#include "tracker.h"
#include "test.h"

/* Distinct values per argument: a value out of its place would show. */
static uint64_t arg_value(unsigned i) {
        return 0x1111111111111111ull * (i + 1) + 0x100000000ull;
}

static void expect_in(const char *what, const char *hay, size_t len, const char *needle, bool want) {
        bool found = memmem(hay, len, needle, strlen(needle)) != NULL;
        if (found != want) {
                fprintf(stderr, "%s: %s %s '%s'\n", test_case, what, want ? "lacks" : "has", needle);
                test_failures++;
        }
}

/* One entry in text, JSON and the journal's fields. */
struct formatted {
        struct outbuf text, json, scratch, journal;
};

static void format_all(struct formatted *f, const struct entry *e) {
        struct line_format lf = { .format = OUTPUT_JSON, .max_iocbs_per_call = 16 };
        *f = (struct formatted) {};
        format_text(&f->text, e, 16);
        format_json(&f->json, &f->scratch, e, &lf);
        format_journal(&f->journal, e, 16);
}

static void formatted_free(struct formatted *f) {
        outbuf_free(&f->text);
        outbuf_free(&f->json);
        outbuf_free(&f->scratch);
        outbuf_free(&f->journal);
}

TEST(every_argument_in_every_format) {
        for (enum aio_syscall s = 0; s < _AIO_SYSCALL_MAX; s++) {
                const struct syscall_desc *sd = syscall_desc(s);
                struct aio_call call = { .syscall = s, .pid = 7, .tid = 8, .comm = "t",
                                         .enter_seen = true, .args_known = true,
                                         .exit_time = 10, .enter_time = 1, .array_state = MEM_OK,
                                         .aux_state = MEM_NOT_READ };
                for (unsigned i = 0; i < AIO_ARGS_MAX; i++)
                        call.args[i] = arg_value(i);
                struct entry e = { .kind = ENTRY_CALL, .call = &call };
                struct outbuf text = {}, json = {}, scratch = {}, journal = {};
                format_text(&text, &e, 16);
                struct line_format lf = { .format = OUTPUT_JSON, .max_iocbs_per_call = 16 };
                format_json(&json, &scratch, &e, &lf);
                format_journal(&journal, &e, 16);

                /* text: the arguments, in order, in the call's parentheses */
                char want[512], one[64];
                size_t n = (size_t) snprintf(want, sizeof(want), "] %s(", aio_syscall_name(s));
                for (unsigned i = 0; i < sd->n_args; i++) {
                        uint64_t v = arg_value(i);
                        if (sd->args[i].type == ARG_PTR)
                                snprintf(one, sizeof(one), "0x%016" PRIx64, v);
                        else if (sd->args[i].type == ARG_U32)
                                snprintf(one, sizeof(one), "%" PRIu32, (uint32_t) v);
                        else
                                snprintf(one, sizeof(one), "%" PRId64, (int64_t) v);
                        n += (size_t) snprintf(want + n, sizeof(want) - n, "%s%s", i ? ", " : "", one);
                        /* JSON: every argument under its name; the journal: those it carries, and only those */
                        char member[128], field[128];
                        snprintf(member, sizeof(member), "%.*s%s%s%s", sd->args[i].name.json_len, sd->args[i].name.json,
                                 sd->args[i].type == ARG_PTR ? "\"" : "", one, sd->args[i].type == ARG_PTR ? "\"" : "");
                        expect_in("the JSON line", json.data, json.len, member, true);
                        snprintf(field, sizeof(field), "%.*s%s", sd->args[i].name.journal_len, sd->args[i].name.journal,
                                 one);
                        expect_in("the journal entry", journal.data, journal.len, field, sd->args[i].in_journal);
                }
                snprintf(want + n, sizeof(want) - n, ") [retval = 0]");
                expect_in("the text", text.data, text.len, want, true);
                /* and no argument of another syscall's that this one's table lacks */
                for (enum aio_syscall o = 0; o < _AIO_SYSCALL_MAX; o++)
                        for (unsigned j = 0; j < syscall_desc(o)->n_args; j++) {
                                const struct field_name *name = &syscall_desc(o)->args[j].name;
                                bool listed = false;
                                for (unsigned i = 0; i < sd->n_args; i++)
                                        listed = listed || strcmp(sd->args[i].name.json, name->json) == 0;
                                char member[64];
                                snprintf(member, sizeof(member), "%.*s", name->json_len, name->json);
                                expect_in("the JSON line", json.data, json.len, member, listed);
                        }
                outbuf_free(&text);
                outbuf_free(&json);
                outbuf_free(&scratch);
                outbuf_free(&journal);
        }
}

/* The aux values: io_setup's context once read, a timeout when given, in every format under one name. */
TEST(aux_values) {
        struct aio_call call = { .syscall = AIO_IO_GETEVENTS, .pid = 7, .tid = 8, .comm = "t", .enter_seen = true,
                                 .args_known = true, .exit_time = 10, .enter_time = 1, .aux_state = MEM_OK,
                                 .aux = { 5, 250000000 } };
        call.args[4] = 0x1000;
        struct entry e = { .kind = ENTRY_CALL, .call = &call };
        struct outbuf text = {}, json = {}, scratch = {}, journal = {};
        struct line_format lf = { .format = OUTPUT_JSON, .max_iocbs_per_call = 16 };
        format_text(&text, &e, 16);
        format_json(&json, &scratch, &e, &lf);
        format_journal(&journal, &e, 16);
        expect_in("the text", text.data, text.len, "\n    timeout = 5.250000000\n", true);
        expect_in("the JSON line", json.data, json.len, ",\"timeout_nsec\":5250000000", true);
        expect_in("the journal entry", journal.data, journal.len, "AIO_TIMEOUT_NSEC=5250000000", true);
        /* no timeout given: none shown */
        call.args[4] = 0;
        outbuf_reset(&text);
        outbuf_reset(&json);
        format_text(&text, &e, 16);
        format_json(&json, &scratch, &e, &lf);
        expect_in("the text", text.data, text.len, "timeout", false);
        expect_in("the JSON line", json.data, json.len, "timeout_nsec", false);
        /* io_setup: the context it made, or why it could not be read */
        call = (struct aio_call) { .syscall = AIO_IO_SETUP, .pid = 7, .tid = 8, .comm = "t", .enter_seen = true,
                                   .args_known = true, .aux_state = MEM_FAULT, .args = { 8, 0x2000 } };
        outbuf_reset(&text);
        outbuf_reset(&json);
        format_text(&text, &e, 16);
        format_json(&json, &scratch, &e, &lf);
        expect_in("the text", text.data, text.len, "\n    ctx = <unreadable: unmapped>\n", true);
        expect_in("the JSON line", json.data, json.len, ",\"ctx_state\":\"unmapped\"", true);
        /* a failed io_setup made no context: nothing to show */
        call.aux_state = MEM_NOT_READ;
        call.ret = -22;
        outbuf_reset(&text);
        outbuf_reset(&json);
        format_text(&text, &e, 16);
        format_json(&json, &scratch, &e, &lf);
        expect_in("the text", text.data, text.len, "ctx =", false);
        expect_in("the JSON line", json.data, json.len, ",\"ctx\":", false);
        expect_in("the JSON line", json.data, json.len, ",\"ctx_state\":", false);
        outbuf_free(&text);
        outbuf_free(&json);
        outbuf_free(&scratch);
        outbuf_free(&journal);
}

/* A call begun before tracing: no duration in any format; its arguments when the capture read them at the exit,
 * else none. */
TEST(enter_not_seen) {
        for (int known = 0; known <= 1; known++) {
                struct aio_call call = { .syscall = AIO_IO_GETEVENTS, .pid = 7, .tid = 8, .comm = "t", .exit_time = 10,
                                         .args_known = known, .args = { 0x7f00, 3, 4, 0x5000, 0 },
                                         .aux_state = MEM_NOT_READ };
                struct entry e = { .kind = ENTRY_CALL, .call = &call };
                struct formatted f;
                format_all(&f, &e);
                expect_in("the text", f.text.data, f.text.len,
                          known ? "] io_getevents(0x0000000000007f00, 3, 4, 0x0000000000005000, 0x0000000000000000) "
                                  "[retval = 0] (enter not seen)\n"
                                : "] io_getevents(?) [retval = 0] (enter not seen)\n",
                          true);
                expect_in("the JSON line", f.json.data, f.json.len, "\"enter\":\"not seen\"", true);
                expect_in("the JSON line", f.json.data, f.json.len, "duration_nsec", false);
                expect_in("the JSON line", f.json.data, f.json.len, "\"min_nr\":3", known);
                expect_in("the journal entry", f.journal.data, f.journal.len, "AIO_DURATION_NSEC", false);
                expect_in("the journal entry", f.journal.data, f.journal.len, "AIO_MIN_NR=3", known);
                formatted_free(&f);
        }
}

/* What names a process after it is gone: its unit and cgroup when it has them, on calls, requests and summaries,
 * in JSON and the journal, and the unit in the text's header; the root cgroup, and no unit, say nothing. */
TEST(process_names) {
        struct aio_call call = { .syscall = AIO_IO_DESTROY, .pid = 7, .tid = 8, .comm = "t", .exit_time = 10,
                                 .enter_time = 1, .enter_seen = true, .args_known = true,
                                 .unit = "mariadb.service", .cgroup = "/system.slice/mariadb.service" };
        struct proc_interval iv = {};
        struct histogram h;
        histogram_reset(&h);
        struct proc_summary sum = { .pid = 7, .comm = "t", .unit = call.unit, .cgroup = call.cgroup, .iv = &iv,
                                    .latency = &h, .end = 5 };
        struct request r = { .pid = 7, .comm = "t", .unit = call.unit, .cgroup = call.cgroup, .kind = REQ_ABANDONED };
        struct entry entries[] = {
                { .kind = ENTRY_CALL, .call = &call },
                { .kind = ENTRY_REQUEST, .request = &r },
                { .kind = ENTRY_SUMMARY, .summary = &sum },
        };
        for (int root = 0; root <= 1; root++) {
                if (root) {
                        call.unit = r.unit = sum.unit = "";
                        call.cgroup = r.cgroup = sum.cgroup = "/";
                }
                static const char *const headers[][2] = {
                        { "[t - 7 - 8 - mariadb.service] io_destroy(", "[t - 7 - 8] io_destroy(" },
                        { "[t - 7 - mariadb.service] request abandoned", "[t - 7] request abandoned" },
                        { "[t - 7 - mariadb.service] summary over ", "[t - 7] summary over " },
                };
                for (size_t i = 0; i < ELEMENTSOF(entries); i++) {
                        struct formatted f;
                        format_all(&f, &entries[i]);
                        expect_in("the text", f.text.data, f.text.len, headers[i][root], true);
                        expect_in("the JSON line", f.json.data, f.json.len, "\"unit\":\"mariadb.service\"", !root);
                        expect_in("the JSON line", f.json.data, f.json.len,
                                  "\"cgroup\":\"/system.slice/mariadb.service\"", !root);
                        expect_in("the JSON line", f.json.data, f.json.len, "cgroup", !root);
                        expect_in("the journal entry", f.journal.data, f.journal.len, "AIO_UNIT=mariadb.service",
                                  !root);
                        expect_in("the journal entry", f.journal.data, f.journal.len,
                                  "AIO_CGROUP=/system.slice/mariadb.service", !root);
                        expect_in("the journal entry", f.journal.data, f.journal.len, "AIO_CGROUP", !root);
                        formatted_free(&f);
                }
        }
}

/* A request still in flight after stuck_after: "stuck" in every format, how long so far, no result, and a
 * warning in the journal. */
TEST(stuck_request) {
        struct request r = { .pid = 7, .comm = "t", .unit = "", .cgroup = "", .kind = REQ_STUCK, .submit_known = true,
                             .submit_time = 1000, .end_time = 10000001000, .opcode = 5, .fd = 3,
                             .path_state = PATH_NONE, .ctx = 0x10, .iocb = 0x20 };
        struct entry e = { .kind = ENTRY_REQUEST, .request = &r };
        struct formatted f;
        format_all(&f, &e);
        expect_in("the text", f.text.data, f.text.len, "[t - 7] request stuck (still in flight): op = poll", true);
        expect_in("the text", f.text.data, f.text.len, "in flight for 10000000000 ns", true);
        expect_in("the text", f.text.data, f.text.len, "res = ", false);
        expect_in("the JSON line", f.json.data, f.json.len, "\"request\":\"stuck\"", true);
        expect_in("the JSON line", f.json.data, f.json.len, "\"inflight_nsec\":10000000000", true);
        expect_in("the JSON line", f.json.data, f.json.len, "\"end\"", false);
        expect_in("the journal entry", f.journal.data, f.journal.len, "AIO_REQUEST=stuck", true);
        expect_in("the journal entry", f.journal.data, f.journal.len, "PRIORITY=4", true);
        formatted_free(&f);
}

/* How io_uring ran a request it could not complete at once, in every format; nothing when it ran at once. */
TEST(async_request) {
        static const char *const said[] = { [REQ_ASYNC_IO_WQ] = "io-wq", [REQ_ASYNC_POLL] = "poll",
                                            [REQ_ASYNC_IO_WQ | REQ_ASYNC_POLL] = "poll,io-wq" };
        for (uint8_t how = 0; how < ELEMENTSOF(said); how++) {
                struct request r = { .pid = 7, .comm = "t", .unit = "", .cgroup = "", .kind = REQ_COMPLETED,
                                     .submit_known = true, .has_result = true, .res = 4096, .submit_time = 1,
                                     .end_time = 2, .interface = REQ_IO_URING, .opcode = IOCB_CMD_PREAD,
                                     .async = how, .path_state = PATH_NONE };
                struct entry e = { .kind = ENTRY_REQUEST, .request = &r };
                struct formatted f;
                format_all(&f, &e);
                char text[64], json[64], journal[64];
                snprintf(text, sizeof(text), "async = %s", how ? said[how] : "");
                snprintf(json, sizeof(json), "\"async\":\"%s\"", how ? said[how] : "");
                snprintf(journal, sizeof(journal), "AIO_ASYNC=%s", how ? said[how] : "");
                expect_in("the text", f.text.data, f.text.len, how ? text : "async", how);
                expect_in("the JSON line", f.json.data, f.json.len, how ? json : "async", how);
                expect_in("the journal entry", f.journal.data, f.journal.len, how ? journal : "AIO_ASYNC", how);
                formatted_free(&f);
        }
}

TEST(op_table) {
        static const struct {
                uint16_t opcode;
                const char *name;
                enum aio_op_dir dir;
                bool vectored;
        } known[] = {
                { IOCB_CMD_PREAD, "pread", AIO_OP_READ, false },     { IOCB_CMD_PWRITE, "pwrite", AIO_OP_WRITE, false },
                { IOCB_CMD_FSYNC, "fsync", AIO_OP_NO_DATA, false },  { IOCB_CMD_FDSYNC, "fdsync", AIO_OP_NO_DATA, false },
                { 5, "poll", AIO_OP_NO_DATA, false },                { IOCB_CMD_NOOP, "noop", AIO_OP_NO_DATA, false },
                { IOCB_CMD_PREADV, "preadv", AIO_OP_READ, true },    { IOCB_CMD_PWRITEV, "pwritev", AIO_OP_WRITE, true },
        };
        unsigned named = 0;
        for (unsigned op = 0; op <= UINT16_MAX; op++)
                named += aio_op_of((uint16_t) op) != NULL;
        CHECK_EQ(named, ELEMENTS(known));
        for (size_t i = 0; i < ELEMENTS(known); i++) {
                const struct aio_op *o = aio_op_of(known[i].opcode);
                CHECK(o && strcmp(o->name.s, known[i].name) == 0 && o->name.len == strlen(known[i].name));
                CHECK(o && o->dir == known[i].dir && o->vectored == known[i].vectored);
                /* the summaries count it at its own index, under its own name */
                unsigned idx = request_op_index(known[i].opcode, true);
                CHECK(idx < REQ_OPS - 1);
                CHECK_STR(request_op_index_name(idx), known[i].name);
        }
        CHECK_EQ(request_op_index(4, true), REQ_OPS - 1);
        CHECK_EQ(request_op_index(IOCB_CMD_PREAD, false), REQ_OPS - 1);
        CHECK_STR(request_op_index_name(REQ_OPS - 1), "other");
        CHECK(request_op_index_name(4) == NULL);
}

TEST_MAIN("test-syscalls")
