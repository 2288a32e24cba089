/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracepoints' table against real format files (copied from tracefs on Linux 6.18): every row's fields found,
 * the layouts the capture writes the same as the kernel's, and a format that moved a field refused by name. */
#include "events.h"
#include "tracepoints.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static const struct event_desc *find(const struct event_table *t, enum event_kind kind) {
        for (size_t i = 0; i < t->n_events; i++)
                if (t->events[i].kind == kind)
                        return &t->events[i];
        return NULL;
}

TEST(every_row_loads_and_has_the_capture_layout) {
        struct event_table *t = NULL;
        char error[512] = "";
        int r = event_table_load(fixture_dir(), EVENTS_FORK | EVENTS_EXEC | EVENTS_URING, &t, error, sizeof(error));
        CHECK_EQ(r, 0);
        if (r < 0) {
                fprintf(stderr, "%s\n", error);
                return;
        }
        /* the fixtures' syscalls (AIO's 6, enter and exit), fork, exit, exec and io_uring's 6 */
        CHECK_EQ(t->n_events, 21);
        for (size_t i = 0; i < t->n_events; i++) {
                const struct event_desc *d = &t->events[i];
                const struct tracepoint *tp = tracepoint_of(d->kind);
                CHECK(tp && d->family == tp->family && d->family != TP_FAMILY_NONE);
                CHECK_EQ(tracepoint_check_layout(d, &t->common_type, error, sizeof(error)), 0);
        }
        const struct event_desc *complete = find(t, EVENT_URING_COMPLETE);
        CHECK(complete && complete->args[URING_COMPLETE_RES].offset == 32 &&
              complete->args[URING_COMPLETE_RES].size == 4);
        const struct event_desc *overflow = find(t, EVENT_URING_OVERFLOW);
        CHECK(overflow && overflow->n_args == 5 && overflow->args[URING_OVERFLOW_OCQE].offset == 32);
        const struct event_desc *failed = find(t, EVENT_URING_FAILED);
        CHECK(failed && failed->args[URING_FAILED_LEN].offset == 56);
        event_table_free(t);
}

TEST(a_moved_field_is_refused_by_name) {
        struct event_table *t = NULL;
        char error[512] = "";
        CHECK_EQ(event_table_load(fixture_dir(), EVENTS_URING, &t, error, sizeof(error)), 0);
        const struct event_desc *submit = t ? find(t, EVENT_URING_SUBMIT) : NULL;
        CHECK(submit != NULL);
        if (!submit) {
                event_table_free(t);
                return;
        }
        struct event_desc bent = *submit;
        bent.args[URING_SUBMIT_OPCODE].offset = 33; /* a kernel that moved opcode */
        CHECK_EQ(tracepoint_check_layout(&bent, &t->common_type, error, sizeof(error)), -EPROTO);
        CHECK_CONTAINS(error, "io_uring:io_uring_submit_req has opcode at 33 (1 bytes)");
        bent = *submit;
        bent.record_size = 64;
        CHECK_EQ(tracepoint_check_layout(&bent, &t->common_type, error, sizeof(error)), -EPROTO);
        CHECK_CONTAINS(error, "is 64 bytes, not the 56");
        struct field_ref moved_type = { .offset = 2, .size = 2 };
        CHECK_EQ(tracepoint_check_layout(submit, &moved_type, error, sizeof(error)), -EPROTO);
        event_table_free(t);
}

static bool has_only_submit_twin(const char *name, void *userdata) {
        (void) userdata;
        return strcmp(name, "exit_io_submit_probed") == 0 || strcmp(name, "uring_complete_probed") == 0;
}

TEST(programs_and_their_twins) {
        char name[64];
        tracepoint_program(EVENT_SYS_ENTER, "io_getevents", true, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "enter_io_getevents");
        tracepoint_program(EVENT_SYS_EXIT, "io_submit", false, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "exit_io_submit");
        tracepoint_program(EVENT_SYS_EXIT, "io_submit", true, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "exit_io_submit_probed");
        /* a twin the object lacks: the program itself */
        tracepoint_program(EVENT_SYS_EXIT, "io_cancel", true, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "exit_io_cancel");
        tracepoint_program(EVENT_URING_COMPLETE, NULL, true, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "uring_complete_probed");
        tracepoint_program(EVENT_FORK, NULL, true, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "proc_fork");
        tracepoint_program(_EVENT_KIND_MAX, NULL, false, has_only_submit_twin, NULL, name, sizeof(name));
        CHECK_STR(name, "");
        tracepoint_expand("sys_exit_%s", "io_pgetevents", name, sizeof(name));
        CHECK_STR(name, "sys_exit_io_pgetevents");
        tracepoint_expand("io_uring_create", "ignored", name, sizeof(name));
        CHECK_STR(name, "io_uring_create");
}

TEST(every_row_is_whole) {
        for (enum event_kind k = 0; k < _EVENT_KIND_MAX; k++) {
                const struct tracepoint *tp = tracepoint_of(k);
                CHECK(tp && tp->system && tp->name);
                /* records reach the engine only of rows asked for, and those have a handler's family */
                CHECK((tp->asked != 0) == (tp->family != TP_FAMILY_NONE));
                /* a row the engine never sees has its program loaded by itself */
                CHECK(tp->asked || (tp->program && tp->program_when != PROGRAM_ASKED));
        }
        CHECK(tracepoint_of(_EVENT_KIND_MAX) == NULL);
}

TEST_MAIN("test-tracepoints")
