/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The three sinks on their own, in a directory of the test's, without root: the descriptor sink's lines (text and
 * JSON) and a reader that goes away; the file sink's rotations (every file whole entries, in order, none past
 * max_size, keep files kept) and its reopen after a move; the journal sink, which accounts for every entry
 * whether or not a journald listens. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sink.h"
#include "test.h"

static struct entry info(unsigned i) {
        static char msg[64];
        snprintf(msg, sizeof(msg), "message %04u of the sink test", i);
        return (struct entry) { .kind = ENTRY_INFO, .time = 1000 + i, .message = msg };
}

static size_t read_all(int fd, char *buf, size_t size) {
        size_t n = 0;
        ssize_t r;
        while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
                n += (size_t) r;
        buf[n] = 0;
        return n;
}

static unsigned count_lines(const char *s) {
        unsigned n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

TEST(fd_sink_text_and_json) {
        for (int json = 0; json <= 1; json++) {
                int p[2];
                CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
                struct output_config o = { .format = json ? OUTPUT_JSON : OUTPUT_TEXT };
                struct sink *s = NULL;
                CHECK_EQ(sink_fd_new(p[1], &o, 16, &s), 0);
                if (!s)
                        return;
                for (unsigned i = 0; i < 50; i++) {
                        struct entry e = info(i);
                        CHECK_EQ(sink_write(s, &e), 0);
                }
                CHECK_EQ(sink_finish(s, 1000), 0);
                CHECK_EQ(s->stats.written, 50);
                CHECK_EQ(s->stats.dropped, 0);
                sink_free(s);
                close(p[1]);
                static char got[65536];
                read_all(p[0], got, sizeof(got));
                close(p[0]);
                CHECK_EQ(count_lines(got), 50);
                CHECK_CONTAINS(got, json ? "\"message\":\"[info] message 0049 of the sink test\"}\n"
                                         : "[info] message 0049 of the sink test\n");
                CHECK(json ? got[0] == '{' : strncmp(got, "[info] message 0000", 19) == 0);
        }
}

/* A reader gone for good: the sink says it is closed, and what it could not write is counted. */
TEST(fd_sink_reader_gone) {
        signal(SIGPIPE, SIG_IGN);
        int p[2];
        CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
        close(p[0]);
        struct output_config o = { .format = OUTPUT_TEXT };
        struct sink *s = NULL;
        CHECK_EQ(sink_fd_new(p[1], &o, 16, &s), 0);
        if (!s)
                return;
        for (unsigned i = 0; i < 10; i++) {
                struct entry e = info(i);
                (void) sink_write(s, &e);
        }
        (void) sink_finish(s, 1000);
        CHECK(s->closed);
        CHECK_EQ(s->stats.written + s->stats.dropped, 10);
        CHECK(s->stats.dropped > 0);
        sink_free(s);
        close(p[1]);
}

static size_t file_text(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        size_t n = read_all(fd, buf, size);
        close(fd);
        return n;
}

TEST(file_sink_rotates) {
        struct output_config o = { .sink = SINK_FILE, .format = OUTPUT_TEXT, .max_size = 4096, .keep = 2,
                                   .mode = 0640 };
        snprintf(o.path, sizeof(o.path), "%s/trace.log", test_dir);
        char error[512] = "";
        struct sink *s = NULL;
        CHECK_EQ(sink_file_new(&o, 16, &s, error, sizeof(error)), 0);
        if (!s) {
                fprintf(stderr, "%s\n", error);
                return;
        }
        const unsigned n = 500; /* 37 bytes each: more than the three files kept hold */
        for (unsigned i = 0; i < n; i++) {
                struct entry e = info(i);
                CHECK_EQ(sink_write(s, &e), 0);
        }
        CHECK_EQ(sink_finish(s, 1000), 0);
        CHECK_EQ(s->stats.written, n);
        char report[512];
        sink_report(s, report, sizeof(report));
        CHECK_CONTAINS(report, "entries written to");
        /* the live file and keep rotated ones, none more; each whole lines, none past max_size, in order */
        static char text[3][8192];
        unsigned lines = 0;
        int last = -1;
        for (int k = 2; k >= 0; k--) {
                char path[4200];
                snprintf(path, sizeof(path), k ? "%s.%d" : "%s", o.path, k);
                size_t len = file_text(path, text[k], sizeof(text[k]));
                CHECK(len > 0 && len <= o.max_size && text[k][len - 1] == '\n');
                struct stat st;
                CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
                lines += count_lines(text[k]);
                for (const char *at = text[k]; (at = strstr(at, "message ")) != NULL; at += 8) {
                        int i = atoi(at + 8);
                        CHECK_EQ(i, last + 1 == 0 ? i : last + 1); /* consecutive from the oldest kept */
                        last = i;
                }
        }
        CHECK_EQ(last, (int) n - 1);
        char path3[4200];
        snprintf(path3, sizeof(path3), "%s.3", o.path);
        CHECK(access(path3, F_OK) != 0);
        CHECK(lines < n); /* the oldest went with the rotations */
        sink_free(s);
}

/* logrotate moved the file away: after a reopen, the entries go to a new file at the path. */
TEST(file_sink_reopens) {
        struct output_config o = { .sink = SINK_FILE, .format = OUTPUT_JSON, .max_size = 1 << 20, .keep = 1,
                                   .mode = 0600 };
        snprintf(o.path, sizeof(o.path), "%s/reopen.json", test_dir);
        char error[512] = "", moved[4200];
        snprintf(moved, sizeof(moved), "%s.moved", o.path);
        struct sink *s = NULL;
        CHECK_EQ(sink_file_new(&o, 16, &s, error, sizeof(error)), 0);
        if (!s)
                return;
        struct entry a = info(1);
        CHECK_EQ(sink_write(s, &a), 0);
        CHECK_EQ(sink_flush(s), 0);
        CHECK_EQ(rename(o.path, moved), 0);
        CHECK_EQ(sink_reopen(s), 0);
        struct entry b = info(2);
        CHECK_EQ(sink_write(s, &b), 0);
        CHECK_EQ(sink_finish(s, 1000), 0);
        static char got[2][4096];
        file_text(moved, got[0], sizeof(got[0]));
        file_text(o.path, got[1], sizeof(got[1]));
        CHECK(strstr(got[0], "message 0001") && !strstr(got[0], "message 0002"));
        CHECK(strstr(got[1], "message 0002") && !strstr(got[1], "message 0001"));
        sink_free(s);
}

/* With or without a journald to take them, every entry is either written or counted dropped, by the end. */
TEST(journal_sink_accounts) {
        struct sink *s = NULL;
        CHECK_EQ(sink_journal_new(16, 64 << 10, &s), 0);
        if (!s)
                return;
        for (unsigned i = 0; i < 100; i++) {
                struct entry e = info(i);
                (void) sink_write(s, &e);
        }
        (void) sink_finish(s, 5000);
        CHECK_EQ(s->stats.written + s->stats.dropped, 100);
        sink_free(s);
}

TEST_MAIN_IN_DIR("test-sinks")
