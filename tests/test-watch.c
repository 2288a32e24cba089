/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who is watched without the capture: the threads of watched pids from a /proc tree made here, the fork
 * decision, and the tracepoint filters built from them, as the kernel takes them. */
#include "config.h"
#include "watch.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"

static struct config *load(const char *text) {
        char path[256], error[512];
        snprintf(path, sizeof(path), "%s/w.conf", test_dir);
        FILE *f = fopen(path, "we");
        fputs(text, f);
        fclose(f);
        struct config *c = NULL;
        if (config_load(path, &c, error, sizeof(error)) < 0) {
                fprintf(stderr, "%s: %s\n", test_case, error);
                test_failures++;
        }
        return c;
}

/* PROC/PID/task/TID for each thread, and PROC/TID/status with its Tgid. */
static void fake_task(const char *proc, unsigned pid, unsigned tid, unsigned ppid) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%u", proc, pid);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%u/task", proc, pid);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%u/task/%u", proc, pid, tid);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%u", proc, tid);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%u/status", proc, tid);
        FILE *f = fopen(path, "we");
        fprintf(f, "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%u\nNgid:\t0\nPid:\t%u\nPPid:\t%u\n", pid,
                tid, ppid);
        fclose(f);
}

static void fake_thread(const char *proc, unsigned pid, unsigned tid) {
        fake_task(proc, pid, tid, 1);
}

TEST(filter_text) {
        struct config *c = load("watch = ( { comm = \"tst\"; }, { comm = \"postgres*\"; }, { pid = 42; } );\n");
        if (!c)
                return;
        char *filter = NULL;
        uint32_t tids[] = { 45, 42, 43, 44, 50, 60, 61 };
        CHECK_EQ(watch_filter(c->watch, c->n_watch, tids, 7, "common_pid", true, &filter), 0);
        CHECK_STR(filter, "comm == \"tst\" || comm ~ \"postgres*\" || (common_pid >= 42 && common_pid <= 45) || "
                          "common_pid == 50 || (common_pid >= 60 && common_pid <= 61)");
        free(filter);
        CHECK_EQ(watch_filter(c->watch, c->n_watch, NULL, 0, "parent_pid", false, &filter), 0);
        CHECK_STR(filter, "common_pid < 0"); /* the pid is gone: match nothing, not everything */
        free(filter);
        uint32_t many[1000];
        for (unsigned i = 0; i < 1000; i++)
                many[i] = 100000 + 2 * i; /* no runs to compress */
        CHECK_EQ(watch_filter(c->watch, c->n_watch, many, 1000, "common_pid", true, &filter), -E2BIG);
        config_free(c);

        /* An empty watch list watches everything: no filter at all. */
        c = load("");
        if (!c)
                return;
        filter = (char *) 1;
        CHECK_EQ(watch_filter(c->watch, c->n_watch, NULL, 0, "common_pid", true, &filter), 0);
        CHECK(filter == NULL);
        config_free(c);
}

TEST(filters_of_each_event) {
        struct config *c = load("watch = ( { comm = \"a\"; }, { pid = 7; } );\n");
        if (!c)
                return;
        uint32_t tids[] = { 7, 8 };
        struct watch_threads w = { .tids = tids, .n = 2 };
        struct watch_filters f;
        CHECK_EQ(watch_filters_build(c->watch, c->n_watch, &w, &f), 0);
        CHECK_STR(f.syscalls, "comm == \"a\" || (common_pid >= 7 && common_pid <= 8)");
        CHECK_STR(f.fork, "(parent_pid >= 7 && parent_pid <= 8)");
        CHECK_STR(f.process_exit, "group_dead == 1 && (comm == \"a\" || (common_pid >= 7 && common_pid <= 8))");
        watch_filters_done(&f);
        config_free(c);
        /* without a pid to watch, the fork event matches nothing; without a list, every exit */
        c = load("");
        CHECK_EQ(watch_filters_build(c->watch, c->n_watch, &(struct watch_threads) {}, &f), 0);
        CHECK(f.syscalls == NULL);
        CHECK_STR(f.fork, "common_pid < 0");
        CHECK_STR(f.process_exit, "group_dead == 1");
        watch_filters_done(&f);
        config_free(c);
}

static void report_missing(void *userdata, const struct watch *w, int error) {
        int *missing = userdata;
        *missing = w->pid;
        CHECK_EQ(error, -ENOENT);
}

TEST(threads_and_forks) {
        char proc[300];
        snprintf(proc, sizeof(proc), "%s/proc", test_dir);
        mkdir(proc, 0755);
        fake_thread(proc, 100, 100);
        fake_thread(proc, 100, 101);
        fake_thread(proc, 300, 300);
        struct config *c = load("watch = ( { pid = 100; }, { pid = 200; } );\n");
        if (!c)
                return;
        struct watch_threads w = { .proc_root = proc };
        int missing = 0;
        watch_threads_collect(&w, c->watch, c->n_watch, report_missing, &missing);
        CHECK_EQ(w.n, 2);
        CHECK_EQ(missing, 200);
        /* a thread of pid 100 created later joins; pid 300's does not; one already gone does not */
        fake_thread(proc, 100, 102);
        fake_thread(proc, 300, 301);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 100, 102), 1);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 100, 102), 0); /* already there */
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 300, 301), 0);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 100, 999), 0);
        /* a child process of a pid whose children are not followed is not watched */
        fake_task(proc, 103, 103, 100);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 100, 103), 0);
        CHECK_EQ(w.n, 3);
        /* collected again (a reload): what is there now, no more */
        watch_threads_collect(&w, c->watch, c->n_watch, NULL, NULL);
        CHECK_EQ(w.n, 3);
        watch_threads_done(&w);
        config_free(c);
}

/* children = true: the descendants there are now, found in /proc, and those created later, recursively;
 * gone ones are dropped when collected again. */
TEST(children) {
        char proc[300];
        snprintf(proc, sizeof(proc), "%s/proc2", test_dir);
        mkdir(proc, 0755);
        fake_task(proc, 500, 500, 1);
        fake_task(proc, 501, 501, 500);   /* a child */
        fake_task(proc, 502, 502, 501);   /* a grandchild */
        fake_task(proc, 502, 503, 501);   /* its thread */
        fake_task(proc, 600, 600, 1);     /* another tree */
        fake_task(proc, 601, 601, 600);
        struct config *c = load("watch = ( { pid = 500; children = true; }, { pid = 600; } );\n");
        if (!c)
                return;
        struct watch_threads w = { .proc_root = proc };
        CHECK_EQ(watch_threads_find_children(&w, c->watch, c->n_watch), 0);
        CHECK_EQ(w.n_followed, 2);
        CHECK_EQ(watch_threads_root_of(&w, 501), 500);
        CHECK_EQ(watch_threads_root_of(&w, 502), 500);
        CHECK_EQ(watch_threads_root_of(&w, 601), 0);
        watch_threads_collect(&w, c->watch, c->n_watch, NULL, NULL);
        CHECK_EQ(w.n, 5); /* 500, 501, 502, 503, 600 */
        /* created later: a child of the grandchild, then a thread of it; a child of 600 is not followed */
        fake_task(proc, 510, 510, 502);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 503, 510), 2);
        CHECK_EQ(watch_threads_root_of(&w, 510), 500);
        fake_task(proc, 510, 511, 502);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 510, 511), 1);
        fake_task(proc, 602, 602, 600);
        CHECK_EQ(watch_threads_fork(&w, c->watch, c->n_watch, 600, 602), 0);
        CHECK_EQ(w.n, 7);
        /* the grandchild ends: not collected again */
        char path[512];
        snprintf(path, sizeof(path), "rm -rf %s/502", proc);
        CHECK_EQ(system(path), 0);
        watch_threads_collect(&w, c->watch, c->n_watch, NULL, NULL);
        CHECK_EQ(watch_threads_root_of(&w, 502), 0);
        CHECK_EQ(watch_threads_root_of(&w, 510), 500);
        watch_threads_done(&w);
        config_free(c);
}

TEST(describe) {
        struct config *c = load("watch = ( { comm = \"fio\"; }, { comm = \"pg*\"; }, { pid = 9; } );\n");
        char buf[256];
        if (c)
                watch_describe(c->watch, c->n_watch, buf, sizeof(buf));
        CHECK_STR(c ? buf : NULL, "comm == \"fio\", comm ~ \"pg*\", pid 9");
        config_free(c);
        c = load("");
        if (c)
                watch_describe(c->watch, c->n_watch, buf, sizeof(buf));
        CHECK_STR(c ? buf : NULL, "every process");
        config_free(c);
}

/* The capture's bits: entries of one key share their class's bit, the others have one each. */
TEST(plan) {
        struct config *c = load("watch = ( { comm = \"a\"; }, { comm = \"b*\"; }, { pid = 3; }, { uid = 7; },\n"
                                "  { unit = \"u.service\"; comm = \"x\"; }, { pid = 4; children = true; },\n"
                                "  { exe = \"/bin/true\"; }, { cgroup = \"/a\"; } );\n");
        CHECK(c != NULL);
        if (!c)
                return;
        struct watch_plan p;
        CHECK_EQ(watch_plan_build(c->watch, c->n_watch, &p), 0);
        uint64_t comm = 1u << CAPTURE_CLASS_COMM, id = 1u << CAPTURE_CLASS_ID, own = 1u << _CAPTURE_CLASS_MAX;
        CHECK_EQ(p.bits[0], comm);
        CHECK_EQ(p.bits[1], comm);
        CHECK_EQ(p.bits[2], id);
        CHECK_EQ(p.bits[3], 1u << CAPTURE_CLASS_UID);
        CHECK_EQ(p.bits[4], own);
        CHECK_EQ(p.bits[5], own << 1);
        CHECK_EQ(p.bits[6], 1u << CAPTURE_CLASS_EXE);
        CHECK_EQ(p.bits[7], 1u << CAPTURE_CLASS_CGROUP);
        CHECK_EQ(p.need[CAPTURE_CLASS_COMM], comm | own);
        CHECK_EQ(p.need[CAPTURE_CLASS_UNIT], own);
        CHECK_EQ(p.need[CAPTURE_CLASS_ID], id | own << 1);
        CHECK_EQ(p.follow, own << 1);
        CHECK_EQ(p.n_combined, 2);
        CHECK_EQ(watch_plan_follow_of(&p, c->watch, c->n_watch, 4), own << 1);
        CHECK_EQ(watch_plan_follow_of(&p, c->watch, c->n_watch, 3), 0);
        watch_plan_done(&p);
        config_free(c);
}

/* The keys of the capture's maps each row gives for its value: every byte, as the kernel's hash compares them. */
TEST(capture_keys) {
        char exe[256], moved[256];
        snprintf(exe, sizeof(exe), "%s/prog", test_dir);
        snprintf(moved, sizeof(moved), "%s/gone", test_dir);
        FILE *f = fopen(exe, "we");
        fclose(f);
        char text[1024];
        snprintf(text, sizeof(text), "watch = ( { uid = 4242; }, { unit = \"db.service\"; }, { exe = \"%s\"; },\n"
                 "  { exe = \"%s\"; }, { exe = \"/nowhere/x\"; } );\n", exe, moved);
        struct config *c = load(text);
        CHECK(c != NULL);
        if (!c)
                return;
        struct watch_capture_key keys[WATCH_CAPTURE_KEYS_MAX];
        const struct watch_key *uid = watch_key_of(WATCH_KEY_UID), *unit = watch_key_of(WATCH_KEY_UNIT),
                               *exes = watch_key_of(WATCH_KEY_EXE);
        CHECK(uid->capture_keys && unit->capture_keys && exes->capture_keys);
        CHECK(!watch_key_of(WATCH_KEY_COMM)->capture_keys && !watch_key_of(WATCH_KEY_PID)->capture_keys);

        CHECK_EQ(uid->capture_keys(&c->watch[0], 1, keys), 1);
        struct capture_uid_key want_uid = { .set = 1, .uid = 4242 };
        CHECK_STR(keys[0].map, "watch_uids");
        CHECK(keys[0].size == sizeof(want_uid) && memcmp(keys[0].key, &want_uid, sizeof(want_uid)) == 0);

        CHECK_EQ(unit->capture_keys(&c->watch[1], 0, keys), 1);
        struct capture_unit_key want_unit = { .set = 0 };
        memcpy(want_unit.name, "db.service", 10);
        CHECK_STR(keys[0].map, "watch_units");
        CHECK(keys[0].size == sizeof(want_unit) && memcmp(keys[0].key, &want_unit, sizeof(want_unit)) == 0);

        /* a file there: by its identity, and by its directory and name */
        struct stat st, dir;
        CHECK(stat(exe, &st) == 0 && stat(test_dir, &dir) == 0);
        CHECK_EQ(exes->capture_keys(&c->watch[2], 1, keys), 2);
        struct capture_exe_key want_exe = { .set = 1, .dev = major(st.st_dev) << 20 | minor(st.st_dev),
                                            .ino = st.st_ino };
        struct capture_exe_name_key want_name = { .set = 1, .dev = major(dir.st_dev) << 20 | minor(dir.st_dev),
                                                  .dir_ino = dir.st_ino };
        memcpy(want_name.name, "prog", 4);
        CHECK_STR(keys[0].map, "watch_exes");
        CHECK(keys[0].size == sizeof(want_exe) && memcmp(keys[0].key, &want_exe, sizeof(want_exe)) == 0);
        CHECK_STR(keys[1].map, "watch_exe_names");
        CHECK(keys[1].size == sizeof(want_name) && memcmp(keys[1].key, &want_name, sizeof(want_name)) == 0);
        /* one not there yet: by its directory entry alone; in no directory: nothing */
        CHECK_EQ(exes->capture_keys(&c->watch[3], 1, keys), 1);
        memcpy(want_name.name, "gone", 4);
        CHECK_STR(keys[0].map, "watch_exe_names");
        CHECK(memcmp(keys[0].key, &want_name, sizeof(want_name)) == 0);
        CHECK_EQ(exes->capture_keys(&c->watch[4], 1, keys), 0);
        unlink(exe);
        config_free(c);
}

TEST_MAIN_IN_DIR("test-watch")
