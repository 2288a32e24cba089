/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpulist.h"
#include "filter.h"
#include "test.h"

static char dir[] = "/tmp/aiotraced-config.XXXXXX";

static const char *write_conf(const char *name, const char *text) {
        static char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        fputs(text, f);
        fclose(f);
        return path;
}

/* The error for text must be "PATH:LINE: <contains want>". */
static void expect_error(const char *text, unsigned line, const char *want) {
        const char *path = write_conf("bad.conf", text);
        struct config *c = NULL;
        char error[512] = "";
        CHECK(config_load(path, &c, error, sizeof(error)) < 0);
        CHECK(c == NULL);
        char prefix[300];
        snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
        if (strncmp(error, prefix, strlen(prefix)) != 0) {
                fprintf(stderr, "error '%s' does not start with '%s'\n", error, prefix);
                test_failures++;
        }
        CHECK_CONTAINS(error, want);
}

static void test_file_output(void) {
        const char *path = write_conf("file.conf", "output = { sink = \"file\"; path = \"/var/log/a/t.log\"; "
                                                   "max_size = \"64M\"; keep = 3; mode = \"0600\"; format = \"json\"; "
                                                   "json_message = true; };\n");
        struct config *c = NULL;
        char error[512] = "";
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
        if (!c)
                return;
        CHECK(c->sink == SINK_FILE && c->format == OUTPUT_JSON && c->json_message);
        CHECK_STR(c->path, "/var/log/a/t.log");
        CHECK_EQ(c->max_size, 64ull << 20);
        CHECK_EQ(c->keep, 3);
        CHECK_EQ(c->mode, 0600);
        config_free(c);
}

/* A config a root daemon follows must be root's alone. */
static void test_ownership(void) {
        const char *path = write_conf("perm.conf", "ring_pages = 64;\n");
        struct config *c = NULL;
        char error[512] = "";
        CHECK_EQ(chmod(path, 0666), 0);
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), -EPERM);
        CHECK_CONTAINS(error, "is writable by others (mode 0666): refused");
        CHECK_EQ(chmod(path, 0640), 0);
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
        config_free(c);
        c = NULL;
        if (geteuid() == 0) {
                CHECK_EQ(chown(path, 65534, 65534), 0);
                CHECK_EQ(config_load(path, &c, error, sizeof(error)), -EPERM);
                CHECK_CONTAINS(error, "is owned by uid 65534, not root: refused");
        }
}

static void test_cpu_list(void) {
        int *cpus = NULL;
        size_t n = 0;
        CHECK_EQ(cpu_list_parse("0-3,8,10-11\n", &cpus, &n), 0);
        CHECK_EQ(n, 7);
        if (cpus && n == 7)
                CHECK(cpus[0] == 0 && cpus[3] == 3 && cpus[4] == 8 && cpus[5] == 10 && cpus[6] == 11);
        free(cpus);
        CHECK_EQ(cpu_list_parse("1", &cpus, &n), 0);
        CHECK(n == 1 && cpus[0] == 1);
        free(cpus);
        static const char *const bad[] = { "", "x", "3-1", "-1", "1,,2", "0-999999", "1 2", "2-" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                CHECK_EQ(cpu_list_parse(bad[i], &cpus, &n), -EINVAL);
}

static void test_records(void) {
        const char *path = write_conf("rec.conf", "records = [ \"requests\", \"syscalls\" ];\nsummary_interval = 10;\n"
                                                  "max_inflight_per_process = 100;\n");
        struct config *c = NULL;
        char error[512] = "";
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
        if (c) {
                CHECK_EQ(c->records, RECORD_REQUESTS | RECORD_SYSCALLS);
                CHECK_EQ(c->summary_interval, 10);
                CHECK_EQ(c->max_inflight_per_process, 100);
                config_free(c);
        }
        /* the defaults: requests and summaries, every minute */
        path = write_conf("empty.conf", "\n");
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
        if (c) {
                CHECK_EQ(c->records, RECORD_REQUESTS | RECORD_SUMMARY);
                CHECK_EQ(c->summary_interval, 60);
                config_free(c);
        }
        expect_error("\nrecords = [ \"requests\", \"calls\" ];\n", 2, "records: \"calls\" is not one of");
        expect_error("records = \"requests\";\n", 1, "records must be a list");
        expect_error("records = ( 1 );\n", 1, "an entry that is not a string");
        expect_error("summary_interval = 0;\n", 1, "summary_interval = 0 is out of range (1 to 86400)");
        expect_error("max_inflight_per_process = 0;\n", 1, "out of range");
}

static void test_good(void) {
        const char *path = write_conf("good.conf",
                                      "# comment\n"
                                      "watch = ( { comm = \"tst\"; }, { comm = \"postgres*\"; }, { pid = 42; } );\n"
                                      "ring_pages = 128;\n"
                                      "max_iocbs_per_call = 16;\n"
                                      "capture = \"remote-read\";\n"
                                      "output = { sink = \"stdout\"; format = \"text\"; };\n");
        struct config *c = NULL;
        char error[512] = "";
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
        if (!c)
                return;
        CHECK_EQ(c->n_watch, 3);
        CHECK(c->watch[0].kind == WATCH_COMM && strcmp(c->watch[0].comm, "tst") == 0);
        CHECK(c->watch[1].kind == WATCH_COMM_GLOB);
        CHECK(c->watch[2].kind == WATCH_PID && c->watch[2].pid == 42 && c->watch[2].line == 2);
        CHECK_EQ(c->ring_pages, 128);
        CHECK_EQ(c->max_iocbs_per_call, 16);
        CHECK_EQ(c->drain_interval_ms, 100); /* default */
        CHECK(c->capture == CAPTURE_REMOTE_READ);
        CHECK(c->sink == SINK_STDOUT);
        CHECK_EQ(c->queue_kib, 16384); /* default */
        CHECK(!c->json_message);          /* default */

        char *filter = NULL;
        uint32_t tids[] = { 45, 42, 43, 44, 50, 60, 61 };
        CHECK_EQ(filter_build(c, tids, 7, "common_pid", 1, &filter), 0);
        CHECK_STR(filter, "comm == \"tst\" || comm ~ \"postgres*\" || (common_pid >= 42 && common_pid <= 45) || "
                          "common_pid == 50 || (common_pid >= 60 && common_pid <= 61)");
        free(filter);
        CHECK_EQ(filter_build(c, NULL, 0, "parent_pid", 0, &filter), 0);
        CHECK_STR(filter, "common_pid < 0"); /* the pid is gone: match nothing, not everything */
        free(filter);
        uint32_t many[1000];
        for (unsigned i = 0; i < 1000; i++)
                many[i] = 100000 + 2 * i; /* no runs to compress */
        CHECK_EQ(filter_build(c, many, 1000, "common_pid", 1, &filter), -E2BIG);
        config_free(c);

        /* An empty file watches everything: no filter at all. */
        path = write_conf("empty.conf", "");
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
        CHECK_EQ(c->n_watch, 0);
        filter = (char *) 1;
        CHECK_EQ(filter_build(c, NULL, 0, "common_pid", 1, &filter), 0);
        CHECK(filter == NULL);
        config_free(c);
}

int main(void) {
        if (!mkdtemp(dir))
                return 99;
        test_good();
        test_records();
        test_ownership();
        test_cpu_list();
        test_file_output();
        expect_error("capture = \"kernel\";\n", 1, "capture must be one of \"auto\", \"bpf\", \"remote-read\"");
        expect_error("capture = 1;\n", 1, "capture must be one of");
        expect_error("ring_pages = 64;\nbogus = 1;\n", 2, "unknown key 'bogus'");
        expect_error("ring_pages = \"64\";\n", 1, "ring_pages must be an integer");
        expect_error("\nring_pages = 100;\n", 2, "ring_pages = 100 must be a power of two");
        expect_error("ring_pages = 0;\n", 1, "out of range");
        expect_error("max_iocbs_per_call = 1000000;\n", 1, "max_iocbs_per_call = 1000000 is out of range");
        expect_error("watch = ( { comm = \"a[bc\"; } );\n", 1, "'[' is never closed");
        expect_error("watch = ( { comm = \"x\\\"y\"; } );\n", 1, "quote or backslash");
        expect_error("watch = ( { comm = \"averyveryverylongname\"; } );\n", 1, "can never match");
        expect_error("watch = (\n  { comm = \"ok\"; },\n  { cmd = \"x\"; }\n);\n", 3, "unknown key 'cmd' in a watch entry");
        expect_error("watch = ( { pid = -3; } );\n", 1, "pid = -3 is out of range");
        expect_error("watch = ( { pid = 1; comm = \"x\"; } );\n", 1, "not both");
        expect_error("watch = ( { } );\n", 1, "empty watch entry");
        expect_error("watch = \"tst\";\n", 1, "watch must be a list");
        expect_error("output = { sink = \"syslog\"; };\n", 1, "not available in this version (known: journal, file, stdout)");
        expect_error("output = { sink = \"file\"; };\n", 1, "output.sink = \"file\" needs output.path");
        expect_error("output = { path = \"rel/trace.log\"; };\n", 1, "output.path must be an absolute path");
        expect_error("output = { max_size = \"10X\"; };\n", 1, "is not a size (a number, then K, M or G)");
        expect_error("output = { max_size = 100; };\n", 1, "must be at least 4096 bytes");
        expect_error("output = { mode = \"0666\"; };\n", 1, "must not be writable by others");
        expect_error("output = { format = \"xml\"; };\n", 1, "(known: text, json)");
        expect_error("output = { queue_kib = 8; };\n", 1, "out of range");
        expect_error("output = {\n  json_message = \"yes\";\n};\n", 2, "output.json_message must be true or false");
        expect_error("ring_pages = 64;\nmax_iocbs_per_call = = 2;\n", 2, "syntax error");

        /* A file that cannot be read: FILE: reason, no line. */
        struct config *c = NULL;
        char error[512] = "", path[300];
        snprintf(path, sizeof(path), "%s/missing.conf", dir);
        CHECK(config_load(path, &c, error, sizeof(error)) == -ENOENT);
        CHECK_CONTAINS(error, "missing.conf: cannot open: No such file or directory");

        bool glob;
        CHECK(comm_pattern_problem("fio*", &glob) == NULL && glob);
        CHECK(comm_pattern_problem("fio", &glob) == NULL && !glob);
        CHECK(comm_pattern_problem("", &glob) != NULL);
        CHECK(comm_pattern_problem("a]", &glob) != NULL);

        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
                return 99;
        return test_result("test-config");
}
