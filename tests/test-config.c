/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The config file: what each key takes and refuses (with its FILE:LINE), the defaults, the ownership rule, the
 * table against the man page, and the reload's view of what changed. */
#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch.h"
#include "test.h"

static const char *write_conf(const char *name, const char *text) {
        static char path[256];
        snprintf(path, sizeof(path), "%s/%s", test_dir, name);
        FILE *f = fopen(path, "we");
        fputs(text, f);
        fclose(f);
        return path;
}

static struct config *load_text(const char *text) {
        struct config *c = NULL;
        char error[512] = "";
        int r = config_load(write_conf("t.conf", text), &c, error, sizeof(error));
        if (r < 0) {
                fprintf(stderr, "%s: config refused: %s\n", test_case, error);
                test_failures++;
        }
        return c;
}

/* The error for text must be "PATH:LINE: <contains want>". */
static void expect_error(const char *text, unsigned line, const char *want) {
        const char *path = write_conf("bad.conf", text);
        struct config *c = NULL;
        char error[512] = "";
        if (config_load(path, &c, error, sizeof(error)) >= 0 || c) {
                fprintf(stderr, "%s: accepted: %.200s\n", test_case, text);
                test_failures++;
                config_free(c);
                return;
        }
        char prefix[300];
        snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
        if (strncmp(error, prefix, strlen(prefix)) != 0 || !strstr(error, want)) {
                fprintf(stderr, "%s: for %.200s%s  the error is: %s\n  want: %s<...>%s\n", test_case, text,
                        strlen(text) > 200 ? "...\n" : "", error, prefix, want);
                test_failures++;
        }
}

TEST(defaults) {
        struct config *c = load_text("\n");
        if (!c)
                return;
        CHECK_EQ(c->n_watch, 0);
        CHECK(c->capture == CAPTURE_AUTO);
        CHECK_EQ(c->records, RECORD_REQUESTS | RECORD_SUMMARY);
        CHECK_EQ(c->summary_interval, 60);
        CHECK_EQ(c->summary_by, SUMMARY_BY_PROCESS);
        CHECK_EQ(c->summary_files, 20);
        CHECK(c->io_uring);
        CHECK_EQ(c->ring_memory, 256u << 20);
        CHECK_EQ(c->ring_pages, 0);
        CHECK_EQ(c->max_iocbs_per_call, 256);
        CHECK_EQ(c->drain_interval_ms, 100);
        CHECK_EQ(c->max_inflight, 65536);
        CHECK_EQ(c->max_inflight_per_process, 65536);
        CHECK_EQ(c->priority_boost, 4);
        CHECK(c->output.sink == SINK_AUTO && c->output.format == OUTPUT_TEXT && !c->output.json_message);
        CHECK_EQ(c->output.queue_kib, 16384);
        CHECK_EQ(c->output.max_size, 64ull << 20);
        CHECK_EQ(c->output.keep, 5);
        CHECK_EQ(c->output.mode, 0640);
        CHECK_EQ(c->metrics.mode, 0640);
        /* node_exporter's group where Debian's package made it, else root's */
        struct group *g = getgrnam(METRICS_GROUP_DEFAULT);
        CHECK(c->metrics.group[0] == 0 && c->metrics.gid == (g ? g->gr_gid : (gid_t) -1));
        config_free(c);
}

TEST(every_key) {
        struct config *c = load_text("# comment\n"
                                     "watch = ( { comm = \"tst\"; }, { comm = \"postgres*\"; }, { pid = 42; } );\n"
                                     "capture = \"remote-read\";\n"
                                     "records = [ \"requests\", \"syscalls\" ];\n"
                                     "summary_interval = 10;\n"
                                     "summary_by = [ \"file\", \"process\" ];\n"
                                     "summary_files = 5;\n"
                                     "ring_memory = \"1G\";\n"
                                     "ring_pages = 128;\n"
                                     "max_iocbs_per_call = 16;\n"
                                     "drain_interval_ms = 7;\n"
                                     "max_inflight = 1000;\n"
                                     "max_inflight_per_process = 100;\n"
                                     "priority_boost = 0;\n"
                                     "output = { sink = \"file\"; path = \"/var/log/a/t.log\"; max_size = \"64K\"; keep = 3;\n"
                                     "           mode = \"0600\"; format = \"json\"; json_message = true; queue_kib = 64; };\n"
                                     "metrics = { path = \"/var/lib/m.prom\"; mode = \"0604\"; group = \"root\"; };\n");
        if (!c)
                return;
        CHECK_EQ(c->n_watch, 3);
        CHECK(c->watch[0].keys == WATCH_KEY_COMM && !c->watch[0].comm_glob && strcmp(c->watch[0].comm, "tst") == 0 &&
              c->watch[0].line == 2);
        CHECK(c->watch[1].keys == WATCH_KEY_COMM && c->watch[1].comm_glob && strcmp(c->watch[1].comm, "postgres*") == 0);
        CHECK(c->watch[2].keys == WATCH_KEY_PID && c->watch[2].pid == 42 && !c->watch[2].children);
        CHECK(c->capture == CAPTURE_REMOTE_READ);
        CHECK_EQ(c->records, RECORD_REQUESTS | RECORD_SYSCALLS);
        CHECK_EQ(c->summary_interval, 10);
        CHECK_EQ(c->summary_by, SUMMARY_BY_PROCESS | SUMMARY_BY_FILE);
        CHECK_EQ(c->summary_files, 5);
        CHECK_EQ(c->ring_memory, 1u << 30);
        CHECK_EQ(c->ring_pages, 128);
        CHECK_EQ(c->max_iocbs_per_call, 16);
        CHECK_EQ(c->drain_interval_ms, 7);
        CHECK_EQ(c->max_inflight, 1000);
        CHECK_EQ(c->max_inflight_per_process, 100);
        CHECK_EQ(c->priority_boost, 0);
        CHECK(c->output.sink == SINK_FILE && c->output.format == OUTPUT_JSON && c->output.json_message);
        CHECK_STR(c->output.path, "/var/log/a/t.log");
        CHECK_EQ(c->output.max_size, 64ull << 10);
        CHECK_EQ(c->output.keep, 3);
        CHECK_EQ(c->output.mode, 0600);
        CHECK_EQ(c->output.queue_kib, 64);
        CHECK_STR(c->metrics.path, "/var/lib/m.prom");
        CHECK_EQ(c->metrics.mode, 0604);
        CHECK(strcmp(c->metrics.group, "root") == 0 && c->metrics.gid == 0);
        config_free(c);
}

TEST(errors) {
        static const struct {
                const char *text;
                unsigned line;
                const char *want;
        } cases[] = {
                { "capture = \"kernel\";\n", 1, "capture = \"kernel\" is not one of \"auto\", \"bpf\", \"remote-read\"" },
                { "capture = 1;\n", 1, "capture must be a string, one of \"auto\", \"bpf\", \"remote-read\"" },
                { "ring_pages = 64;\nbogus = 1;\n", 2,
                  "unknown key 'bogus' (known: watch, capture, records, summary_interval, summary_by, summary_files, stuck_after, io_uring, ring_memory, ring_pages, max_iocbs_per_call, "
                  "drain_interval_ms, max_inflight, max_inflight_per_process, priority_boost, output, metrics)" },
                { "ring_pages = \"64\";\n", 1, "ring_pages must be an integer" },
                { "metrics = { group = \"no-such-group-here\"; };\n", 1,
                  "metrics.group \"no-such-group-here\": no such group on this host" },
                { "metrics = { mode = \"0666\"; };\n", 1,
                  "metrics.mode 0666: what the daemon writes must not be writable by others" },
                { "\nring_pages = 100;\n", 2, "ring_pages = 100 must be a power of two" },
                { "ring_pages = 0;\n", 1, "ring_pages = 0 is out of range (1 to 65536)" },
                { "max_iocbs_per_call = 1000000;\n", 1, "max_iocbs_per_call = 1000000 is out of range (1 to 65536)" },
                { "summary_interval = 0;\n", 1, "summary_interval = 0 is out of range (1 to 86400)" },
                { "max_inflight_per_process = 0;\n", 1, "out of range" },
                { "priority_boost = 21;\n", 1, "out of range" },
                { "\nrecords = [ \"requests\", \"calls\" ];\n", 2, "records: \"calls\" is not one of" },
                { "records = \"requests\";\n", 1, "records must be a list" },
                { "records = ( 1 );\n", 1, "an entry that is not a string" },
                { "records = [ \"summary\", \"summary\" ];\n", 1, "records: \"summary\" is listed twice" },
                { "summary_by = [ ];\n", 1, "summary_by must name at least one of \"process\", \"file\"" },
                { "summary_by = [ \"process\", \"files\" ];\n", 1,
                  "summary_by: \"files\" is not one of \"process\", \"file\"" },
                { "summary_by = \"file\";\n", 1, "summary_by must be a list of \"process\", \"file\"" },
                { "summary_files = 0;\n", 1, "summary_files = 0 is out of range (1 to 1000)" },
                { "watch = ( { comm = \"a[bc\"; } );\n", 1, "'[' is never closed" },
                { "watch = ( { comm = \"x\\\"y\"; } );\n", 1, "quote or backslash" },
                { "watch = ( { comm = \"averyveryverylongname\"; } );\n", 1, "can never match" },
                { "watch = (\n  { comm = \"ok\"; },\n  { cmd = \"x\"; }\n);\n", 3, "unknown key 'cmd' in a watch entry" },
                { "watch = ( { pid = -3; } );\n", 1, "pid = -3 is out of range" },
                { "watch = ( { uid = 1; user = \"root\"; } );\n", 1, "one of user or uid, not both" },
                { "watch = ( { user = \"no-such-user-here\"; } );\n", 1, "user \"no-such-user-here\": no such user" },
                { "watch = ( { uid = 4294967295L; } );\n", 1, "uid = 4294967295 is out of range" },
                { "watch = (\n { comm = \"x\"; children = true; } );\n", 2, "children = true follows the descendants "
                                                                          "of a pid: give pid too" },
                { "watch = ( { pid = 3; children = 1; } );\n", 1, "children must be true or false" },
                { "watch = ( { unit = \"mariadb\"; } );\n", 1, "unit \"mariadb\" is not the full name of a unit" },
                { "watch = ( { unit = \"a/b.service\"; } );\n", 1, "is not the full name of a unit" },
                { "watch = ( { unit = \"x.timer\"; } );\n", 1, "is not the full name of a unit with processes" },
                { "watch = ( { cgroup = \"system.slice\"; } );\n", 1, "cgroup \"system.slice\" is not a cgroup v2 path" },
                { "watch = ( { cgroup = \"/system.slice/\"; } );\n", 1, "is not a cgroup v2 path" },
                { "watch = ( { exe = \"mariadbd\"; } );\n", 1, "exe \"mariadbd\" is not the absolute path of a file" },
                { "watch = ( { exe = \"/usr/sbin/\"; } );\n", 1, "is not the absolute path of a file" },
                { "watch = ( { comm = 3; } );\n", 1, "comm must be a string" },
                { "watch = ( { } );\n", 1, "empty watch entry: give comm, pid, unit, cgroup, exe, user or uid" },
                { "watch = \"tst\";\n", 1, "watch must be a list" },
                { "output = 1;\n", 1, "output must be a group" },
                { "output = { sink = \"syslog\"; };\n", 1,
                  "output.sink = \"syslog\" is not one of \"auto\", \"stdout\", \"journal\", \"file\"" },
                { "output = { bogus = 1; };\n", 1,
                  "unknown key 'output.bogus' (known: sink, format, json_message, path, max_size, keep, mode, queue_kib)" },
                { "output = { sink = \"file\"; };\n", 1, "output.sink = \"file\" needs output.path" },
                { "output = { path = \"rel/trace.log\"; };\n", 1, "output.path must be an absolute path" },
                { "output = { max_size = \"10X\"; };\n", 1, "is not a size (a number, then K, M or G)" },
                { "output = { max_size = 100; };\n", 1, "output.max_size must be at least 4096 bytes" },
                { "output = { mode = \"0666\"; };\n", 1, "must not be writable by others" },
                { "output = { format = \"xml\"; };\n", 1, "output.format = \"xml\" is not one of \"text\", \"json\"" },
                { "output = { queue_kib = 8; };\n", 1, "output.queue_kib = 8 is out of range (64 to 1048576)" },
                { "output = {\n  json_message = \"yes\";\n};\n", 2, "output.json_message must be true or false" },
                { "ring_pages = 64;\nmax_iocbs_per_call = = 2;\n", 2, "syntax error" },
                /* what libconfig would take wrongly without a word */
                { "ring_pages = 64;\n@include \"/etc/other.conf\"\n", 2, "@include is refused" },
                { "watch = ( { pid = 4294967297; } );\n", 1,
                  "4294967297 is too large for an integer without L, which libconfig would cut to its low bits" },
                { "\nring_pages = 4294967297;\n", 2, "4294967297 is too large for an integer without L" },
                { "ring_pages = 1099511627776;\n", 1, "1099511627776 is too large for an integer without L" },
                { "max_iocbs_per_call = 0x100000001;\n", 1, "0x100000001 is too large for an integer without L" },
                { "max_inflight = 99999999999999999999L;\n", 1, "is too large for any integer" },
                { "watch = ( { pid = 4294967297L; } );\n", 1, "pid = 4294967297 is out of range (1 to 4194304)" },
                { "output = { mode = 0640; };\n", 1, "output.mode must be a string, as \"0640\": a number is read as "
                                                     "decimal (0640 is 640)" },
        };
        for (size_t i = 0; i < ELEMENTS(cases); i++)
                expect_error(cases[i].text, cases[i].line, cases[i].want);
}

/* Numbers where libconfig reads them whole: with an L, and digits inside names, strings and comments. */
TEST(numbers_read_whole) {
        struct config *c = load_text("# 99999999999 in a comment, /* and 4294967297 */\n"
                                     "/* 4294967297\n  on two lines */ output = { max_size = 8589934592L;\n"
                                     "  path = \"/var/log/x4294967297\"; };\n"
                                     "watch = ( { comm = \"a99999999999\"; }, { pid = 4194304; } );\n");
        if (!c)
                return;
        CHECK_EQ(c->output.max_size, 8ull << 30);
        CHECK_STR(c->output.path, "/var/log/x4294967297");
        CHECK_EQ(c->watch[1].pid, 4194304);
        config_free(c);
}

/* A watch list of n entries, "comm = \"cNNN\"" (glob: "cNNN*"), with a capture mode. */
static const char *many_comms(unsigned n, bool glob, const char *capture) {
        static char text[65536];
        size_t len = (size_t) snprintf(text, sizeof(text), "capture = \"%s\";\nwatch = (", capture);
        for (unsigned i = 0; i < n; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "%s { comm = \"comm-%04u%s\"; }",
                                         i ? "," : "", i, glob ? "*" : "");
        snprintf(text + len, sizeof(text) - len, " );\n");
        return text;
}

/* An exe given as a symbolic link is the file it names (whose directory and name an upgrade replaces). */
TEST(exe_link) {
        char real[300], link[300], text[800];
        snprintf(real, sizeof(real), "%s/prog", test_dir);
        snprintf(link, sizeof(link), "%s/prog-link", test_dir);
        fclose(fopen(real, "we"));
        CHECK_EQ(symlink("prog", link), 0);
        snprintf(text, sizeof(text), "watch = ( { exe = \"%s\"; }, { exe = \"%s\"; } );\n", link, real);
        struct config *c = load_text(text);
        if (!c)
                return;
        CHECK_STR(c->watch[0].exe, real);
        CHECK_STR(c->watch[0].exe_link, link);
        CHECK_STR(c->watch[1].exe, real);
        CHECK_STR(c->watch[1].exe_link, "");
        config_free(c);
}

/* Keys combine within an entry; each is kept as written. */
TEST(watch_keys) {
        struct config *c = load_text("watch = (\n"
                                     "  { unit = \"mariadb.service\"; comm = \"ib_io_*\"; },\n"
                                     "  { cgroup = \"/system.slice/docker-*.scope\"; },\n"
                                     "  { exe = \"/usr/sbin/mariadbd\"; user = \"root\"; },\n"
                                     "  { uid = 999; },\n"
                                     "  { pid = 7; children = true; }\n"
                                     ");\n");
        CHECK(c && c->n_watch == 5);
        if (!c)
                return;
        CHECK(c->watch[0].keys == (WATCH_KEY_UNIT | WATCH_KEY_COMM) && c->watch[0].comm_glob &&
              strcmp(c->watch[0].unit, "mariadb.service") == 0 && c->watch[0].line == 2);
        CHECK(c->watch[1].keys == WATCH_KEY_CGROUP && strcmp(c->watch[1].cgroup, "/system.slice/docker-*.scope") == 0);
        CHECK(c->watch[2].keys == (WATCH_KEY_EXE | WATCH_KEY_UID) && c->watch[2].uid == 0 &&
              strcmp(c->watch[2].user, "root") == 0 && strcmp(c->watch[2].exe, "/usr/sbin/mariadbd") == 0);
        CHECK(c->watch[3].keys == WATCH_KEY_UID && c->watch[3].uid == 999 && c->watch[3].user[0] == 0);
        CHECK(c->watch[4].keys == WATCH_KEY_PID && c->watch[4].pid == 7 && c->watch[4].children);
        char text[1024];
        watch_describe(c->watch, c->n_watch, text, sizeof(text));
        CHECK_STR(text, "comm ~ \"ib_io_*\" and unit mariadb.service, cgroup /system.slice/docker-*.scope, "
                        "exe /usr/sbin/mariadbd and user root, uid 999, pid 7 and its children");
        config_free(c);

        /* 58 entries that combine keys fit the capture's mask; 59 do not */
        char big[16384];
        size_t len = (size_t) snprintf(big, sizeof(big), "watch = (");
        for (unsigned i = 0; i < CAPTURE_MAX_COMBINED + 1; i++)
                len += (size_t) snprintf(big + len, sizeof(big) - len, "%s { comm = \"c%u\"; uid = %u; }", i ? "," : "",
                                         i, i);
        snprintf(big + len, sizeof(big) - len, " );\n");
        expect_error(big, 1, "the watch list has 59 entries that combine keys or follow children: the in-kernel "
                             "capture takes at most 58");
}

/* The watch list is refused where it is applied and would not fit: the same at start, reload and check. */
TEST(watch_limits) {
        struct config *c = load_text(many_comms(300, false, "bpf")); /* a hash of exact names */
        CHECK(c && c->n_watch == 300);
        config_free(c);
        c = load_text(many_comms(64, true, "auto"));
        CHECK(c && c->n_watch == 64);
        config_free(c);
        /* cgroup patterns: bounded whatever the capture */
        static char cgroups[8192];
        size_t len = (size_t) snprintf(cgroups, sizeof(cgroups), "capture = \"remote-read\";\nwatch = (");
        for (unsigned i = 0; i < 65; i++)
                len += (size_t) snprintf(cgroups + len, sizeof(cgroups) - len, "%s { cgroup = \"/a-%u/*\"; }", i ? "," : "", i);
        snprintf(cgroups + len, sizeof(cgroups) - len, " );\n");
        expect_error(cgroups, 2, "the watch list has 65 cgroup entries: at most 64");
        expect_error(many_comms(65, true, "bpf"), 2, "the watch list has 0 pids, 0 exact names, 65 globs and 0 users, "
                                                   "units and executables: the in-kernel capture takes at most 4096, "
                                                   "1024, 64 and 1024");
        expect_error(many_comms(1025, false, "auto"), 2, "1025 exact names");
        expect_error(many_comms(200, false, "remote-read"), 2, "with capture = \"remote-read\" the watch list's comm "
                                                              "patterns make a kernel filter longer than the 4096 bytes");
        c = load_text(many_comms(150, false, "remote-read")); /* 150 times 23 bytes: it fits */
        CHECK(c != NULL);
        config_free(c);
}

/* What is not a config file is refused at once, with what it is: never a read that waits for a writer. */
TEST(not_a_file) {
        struct config *c = NULL;
        char error[512] = "", path[300];
        CHECK_EQ(config_load(test_dir, &c, error, sizeof(error)), -EINVAL);
        CHECK_CONTAINS(error, ": is a directory, not a file: refused");
        snprintf(path, sizeof(path), "%s/fifo.conf", test_dir);
        CHECK_EQ(mkfifo(path, 0600), 0);
        alarm(10); /* a read that waits would end the test here */
        CHECK_EQ(config_load(path, &c, error, sizeof(error)), -EINVAL);
        alarm(0);
        CHECK_CONTAINS(error, "fifo.conf: is a FIFO, not a file: refused");
        CHECK(c == NULL);
}

TEST(unreadable) {
        struct config *c = NULL;
        char error[512] = "", path[300];
        snprintf(path, sizeof(path), "%s/missing.conf", test_dir);
        CHECK(config_load(path, &c, error, sizeof(error)) == -ENOENT);
        CHECK_CONTAINS(error, "missing.conf: cannot open: No such file or directory");
}

/* A config a root daemon follows must be root's alone. */
TEST(ownership) {
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
        /* group-writable: only root's group may be */
        CHECK_EQ(chmod(path, 0660), 0);
        if (getegid() == 0) {
                CHECK_EQ(config_load(path, &c, error, sizeof(error)), 0);
                config_free(c);
                c = NULL;
        }
        if (geteuid() == 0) {
                CHECK_EQ(chown(path, 0, 100), 0); /* root:users */
                CHECK_EQ(config_load(path, &c, error, sizeof(error)), -EPERM);
                CHECK_CONTAINS(error, "is writable by group 100 (mode 0660): refused; chmod g-w it");
                CHECK_EQ(chown(path, 0, 0), 0);
                CHECK_EQ(chmod(path, 0640), 0);
                CHECK_EQ(chown(path, 65534, 65534), 0);
                CHECK_EQ(config_load(path, &c, error, sizeof(error)), -EPERM);
                CHECK_CONTAINS(error, "is owned by uid 65534, not root: refused");
        }
}

TEST(comm_patterns) {
        bool glob;
        CHECK(comm_pattern_problem("fio*", &glob) == NULL && glob);
        CHECK(comm_pattern_problem("fio", &glob) == NULL && !glob);
        CHECK(comm_pattern_problem("f[a-c]o", &glob) == NULL && glob);
        CHECK(comm_pattern_problem("", &glob) != NULL);
        CHECK(comm_pattern_problem("a]", &glob) != NULL);
        CHECK(comm_pattern_problem("[[a]", &glob) != NULL);
}

/* Every key of the table is in aiotraced.conf(5), as a .TP item of its own, and the page documents no key the
 * table lacks; "At restart." is said of exactly the keys a reload keeps. */
TEST(man_page) {
        char path[4096], line[1024];
        const char *src = getenv("top_srcdir");
        snprintf(path, sizeof(path), "%s/man/aiotraced.conf.5.in", src ? src : ".");
        FILE *f = fopen(path, "re");
        CHECK(f != NULL);
        if (!f)
                return;
        unsigned documented[64] = {}; /* 1: an item of its own; 2: and said to take effect at restart */
        bool after_tp = false;
        const struct config_key *current = NULL;
        size_t items = 0;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = 0;
                if (after_tp && strncmp(line, ".B ", 3) == 0) {
                        current = NULL;
                        for (size_t i = 0; i < config_n_keys; i++)
                                if (strcmp(config_keys[i].name, line + 3) == 0) {
                                        current = &config_keys[i];
                                        documented[i] = documented[i] ? documented[i] : 1;
                                }
                        if (!current) {
                                fprintf(stderr, "%s: the man page documents '%s', which is no key\n", test_case, line + 3);
                                test_failures++;
                        }
                        items++;
                } else if (strncmp(line, ".SH", 3) == 0)
                        current = NULL;
                if (current && strstr(line, "At restart.") && current->reload != RELOAD_RESTART) {
                        fprintf(stderr, "%s: the man page says %s takes effect at restart\n", test_case, current->name);
                        test_failures++;
                }
                if (current && strstr(line, "At restart."))
                        documented[current - config_keys] = 2; /* said */
                after_tp = strcmp(line, ".TP") == 0;
        }
        fclose(f);
        CHECK(config_n_keys <= ELEMENTS(documented));
        CHECK_EQ(items, config_n_keys);
        for (size_t i = 0; i < config_n_keys; i++) {
                if (!documented[i]) {
                        fprintf(stderr, "%s: key %s is not in the man page\n", test_case, config_keys[i].name);
                        test_failures++;
                }
                if (config_keys[i].reload == RELOAD_RESTART && documented[i] != 2) {
                        fprintf(stderr, "%s: the man page does not say %s takes effect at restart\n", test_case,
                                config_keys[i].name);
                        test_failures++;
                }
        }
}

static const struct config_key *key_named(const char *name) {
        for (size_t i = 0; i < config_n_keys; i++)
                if (strcmp(config_keys[i].name, name) == 0)
                        return &config_keys[i];
        return NULL;
}

/* What a reload sees: each key that differs, and what it may do about it. */
TEST(reload_view) {
        struct config *a = load_text("watch = ( { comm = \"a\"; } );\nring_pages = 64;\n"
                                     "output = { sink = \"file\"; path = \"/var/log/a.log\"; };\n");
        struct config *b = load_text("watch = ( { comm = \"b\"; } );\nring_pages = 128;\n"
                                     "output = { sink = \"file\"; path = \"/var/log/b.log\"; format = \"json\"; };\n");
        if (!a || !b)
                goto out;
        const char *differ[] = { "watch", "ring_pages", "output.format", "output.path" };
        for (size_t i = 0; i < config_n_keys; i++) {
                const struct config_key *k = &config_keys[i];
                bool want = false;
                for (size_t j = 0; j < ELEMENTS(differ); j++)
                        want = want || strcmp(differ[j], k->name) == 0;
                if (config_key_equal(k, a, b) == want) {
                        fprintf(stderr, "%s: %s %s\n", test_case, k->name, want ? "differs, unseen" : "seen to differ");
                        test_failures++;
                }
        }
        CHECK(key_named("watch")->reload == RELOAD_LIVE);
        CHECK(key_named("ring_pages")->reload == RELOAD_RESTART);
        CHECK(key_named("output.path")->reload == RELOAD_OUTPUT);
        char value[64];
        config_key_format(key_named("ring_pages"), b, value, sizeof(value));
        CHECK_STR(value, "128");
        config_key_format(key_named("output.format"), b, value, sizeof(value));
        CHECK_STR(value, "\"json\"");
        config_key_format(key_named("output.mode"), b, value, sizeof(value));
        CHECK_STR(value, "\"0640\"");
        config_key_copy(key_named("ring_pages"), b, a);
        CHECK_EQ(b->ring_pages, 64);
        CHECK(config_key_equal(key_named("ring_pages"), a, b));
        b->ring_pages = 0;
        config_key_format(key_named("ring_pages"), b, value, sizeof(value));
        CHECK_STR(value, "unset (from ring_memory)");
out:
        config_free(a);
        config_free(b);
}

/* What a reload does, from the table: each live key's step, the output anew, restart-only keys kept. */
TEST(reload_changes) {
        struct config *a = load_text("records = [ \"requests\" ];\nring_pages = 64;\n");
        struct config *b = load_text("records = [ \"requests\" ];\nring_pages = 64;\n");
        struct config *c = load_text("records = [ \"syscalls\" ];\nring_pages = 128;\ndrain_interval_ms = 5;\n"
                                     "io_uring = false;\nmetrics = { path = \"/m.prom\"; };\nmax_inflight = 64;\n"
                                     "output = { format = \"json\"; };\n");
        struct config_changes ch;
        if (!a || !b || !c)
                goto out;
        config_changes(a, b, &ch);
        CHECK(ch.apply == APPLY_WATCH && !ch.new_output && ch.n_kept == 0); /* the selection, always */
        config_changes(a, c, &ch);
        CHECK_EQ(ch.apply, APPLY_WATCH | APPLY_RECORDS | APPLY_DRAIN | APPLY_URING | APPLY_METRICS);
        CHECK(ch.new_output);
        CHECK(ch.n_kept == 2 && strcmp(ch.kept[0]->name, "ring_pages") == 0 &&
              strcmp(ch.kept[1]->name, "max_inflight") == 0);
        /* every live key says how it is applied; no other does */
        for (size_t i = 0; i < config_n_keys; i++)
                CHECK((config_keys[i].reload == RELOAD_LIVE) == (config_keys[i].apply != 0));
out:
        config_free(a);
        config_free(b);
        config_free(c);
}

/* ring_memory shared out over the CPUs: powers of two of pages between the floor and the ceiling. */
TEST(ring_budget) {
        struct config *c = load_text("\n");
        struct config *half = load_text("ring_memory = \"100M\";\n");
        struct config *fixed = load_text("ring_memory = \"64K\";\nring_pages = 8;\n");
        if (!c || !half || !fixed)
                goto out;
        static const struct {
                size_t cpus;
                unsigned pages; /* 0: refused */
        } defaults[] = { { 1, 512 }, { 2, 512 }, { 128, 512 }, { 129, 256 }, { 256, 256 }, { 1024, 64 },
                         { 4096, 16 }, { 4097, 0 }, { 8192, 0 } };
        for (size_t i = 0; i < ELEMENTS(defaults); i++) {
                unsigned pages = 7;
                int r = config_ring_pages(c, defaults[i].cpus, 4096, &pages);
                if (defaults[i].pages == 0) {
                        CHECK_EQ(r, (uint64_t) -ENOSPC);
                        CHECK_EQ(pages, 7); /* untouched */
                } else {
                        CHECK_EQ(r, 0);
                        CHECK_EQ(pages, defaults[i].pages);
                }
                CHECK(r < 0 || (uint64_t) pages * 4096 * defaults[i].cpus <= c->ring_memory);
        }
        unsigned pages = 0;
        CHECK_EQ(config_ring_pages(half, 96, 4096, &pages), 0); /* 266 pages each: rounded down */
        CHECK_EQ(pages, 256);
        CHECK_EQ(config_ring_pages(half, 96, 65536, &pages), 0); /* large pages: 16 each */
        CHECK_EQ(pages, 16);
        CHECK_EQ(config_ring_pages(fixed, 4096, 4096, &pages), 0); /* ring_pages overrides the budget */
        CHECK_EQ(pages, 8);
out:
        config_free(c);
        config_free(half);
        config_free(fixed);
}

TEST_MAIN_IN_DIR("test-config")
