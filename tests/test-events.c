/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decoding from real format files (copied from tracefs on Linux 6.18) and raw payloads built by hand. */
#include "events.h"

#include "test.h"
#include "util.h"

static const struct event_desc *find(const struct event_table *t, const char *name) {
        for (size_t i = 0; i < t->n_events; i++)
                if (strcmp(t->events[i].name, name) == 0)
                        return &t->events[i];
        return NULL;
}

int main(void) {
        CASE("the fixtures' formats: every field at its offset");
        struct event_table *t = NULL;
        char error[512] = "";
        int r = event_table_load(fixture_dir(), EVENTS_FORK | EVENTS_EXEC, &t, error, sizeof(error));
        CHECK_EQ(r, 0);
        if (r < 0) {
                fprintf(stderr, "%s\n", error);
                return 1;
        }
        CHECK_EQ(t->n_events, 15);

        const struct event_desc *submit = find(t, "sys_enter_io_submit");
        CHECK(submit && submit->kind == EVENT_SYS_ENTER && submit->syscall == AIO_IO_SUBMIT);
        CHECK_EQ(submit->tp_id, 1099);
        CHECK_EQ(submit->n_args, 3);
        CHECK_EQ(submit->args[0].offset, 16); /* ctx_id */
        CHECK_EQ(submit->args[1].offset, 24); /* nr */
        CHECK_EQ(submit->args[2].offset, 32); /* iocbpp */
        const struct event_desc *pget = find(t, "sys_enter_io_pgetevents");
        CHECK(pget && pget->n_args == 6 && pget->args[5].offset == 56);
        const struct event_desc *exit_submit = find(t, "sys_exit_io_submit");
        CHECK(exit_submit && exit_submit->kind == EVENT_SYS_EXIT && exit_submit->args[0].offset == 16);
        const struct event_desc *fork = find(t, "sched_process_fork");
        CHECK(fork && fork->kind == EVENT_FORK && fork->args[0].offset == 12 && fork->args[0].size == 4 &&
              fork->args[1].offset == 20);
        /* a process's end: its pid and whether it was the last thread (group_dead); an exec */
        const struct event_desc *pexit = find(t, "sched_process_exit");
        CHECK(pexit && pexit->kind == EVENT_PROC_EXIT && pexit->args[0].offset == 24 && pexit->args[1].offset == 32 &&
              pexit->args[1].size == 1);
        const struct event_desc *pexec = find(t, "sched_process_exec");
        CHECK(pexec && pexec->kind == EVENT_PROC_EXEC && pexec->args[0].offset == 12);

        /* A raw sys_enter_io_submit payload as the kernel writes it. */
        uint8_t raw[40] = {};
        uint16_t type = 1099;
        memcpy(raw, &type, 2);
        uint64_t ctx = 0x7f0000001000, nr = 3, iocbpp = 0x55550000abc0;
        memcpy(raw + 16, &ctx, 8);
        memcpy(raw + 24, &nr, 8);
        memcpy(raw + 32, &iocbpp, 8);
        const struct event_desc *d = event_table_lookup(t, raw, sizeof(raw));
        CHECK(d == submit);
        CHECK_EQ(load_field(raw, sizeof(raw), d->args[0].offset, d->args[0].size), ctx);
        CHECK_EQ(load_field(raw, sizeof(raw), d->args[1].offset, d->args[1].size), nr);
        CHECK_EQ(load_field(raw, sizeof(raw), d->args[2].offset, d->args[2].size), iocbpp);
        /* truncated payload: the field reads as 0, never past the end */
        CHECK_EQ(load_field(raw, 30, d->args[2].offset, d->args[2].size), 0);

        type = 366;
        memcpy(raw, &type, 2);
        CHECK(event_table_lookup(t, raw, sizeof(raw)) == fork);
        type = 369;
        memcpy(raw, &type, 2);
        CHECK(event_table_lookup(t, raw, sizeof(raw)) == pexit);
        type = 4242;
        memcpy(raw, &type, 2);
        CHECK(event_table_lookup(t, raw, sizeof(raw)) == NULL);
        CHECK(event_table_lookup(t, raw, 1) == NULL);
        event_table_free(t);

        CASE("without the fork event; a tree without the formats");
        /* Without the fork event, and from a tree that lacks a format: a clear error naming the file. */
        r = event_table_load(fixture_dir(), 0, &t, error, sizeof(error));
        CHECK_EQ(r, 0);
        CHECK_EQ(t->n_events, 13);
        event_table_free(t);
        r = event_table_load("/nonexistent", 0, &t, error, sizeof(error));
        CHECK(r == -ENOENT);
        CHECK_CONTAINS(error, "/nonexistent/events/syscalls/sys_enter_io_setup/format");
        return test_result("test-events");
}
