/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Without the capture, who is watched is decided in user space from /proc: each key against facts made here,
 * an executable replaced under its name, and this very process as /proc shows it. */
#include "select.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

TEST(cgroup_paths) {
        CHECK(cgroup_path_matches("/system.slice/docker-1.scope", "/system.slice/docker-*.scope"));
        CHECK(cgroup_path_matches("/system.slice/docker-1.scope/init", "/system.slice/docker-*.scope"));
        CHECK(!cgroup_path_matches("/system.slice/docker-1.scope", "/system.slice/podman-*.scope"));
        CHECK(!cgroup_path_matches("/system.slice", "/system.slice/docker-*.scope"));
        CHECK(!cgroup_path_matches("/user.slice/x/system.slice/docker-1.scope", "/system.slice/docker-*.scope"));
        CHECK(cgroup_path_matches("/anything", "/"));
        CHECK(cgroup_path_matches("/a/b", "/a"));
        CHECK(!cgroup_path_matches("/ab", "/a"));
        CHECK(cgroup_path_in_unit("/system.slice/mariadb.service", "mariadb.service"));
        CHECK(cgroup_path_in_unit("/system.slice/mariadb.service/payload", "mariadb.service"));
        CHECK(cgroup_path_in_unit("/system.slice", "system.slice"));
        CHECK(!cgroup_path_in_unit("/system.slice/mariadb.service2", "mariadb.service"));
        CHECK(!cgroup_path_in_unit("/system.slice/xmariadb.service", "mariadb.service"));
}

static struct watch entry(unsigned keys) {
        return (struct watch) { .keys = keys };
}

TEST(keys) {
        struct proc_facts f = { .tgid = 42, .comm = "ib_io_wr-1", .have_uid = true, .uid = 999, .have_cgroup = true,
                                .cgroup = "/system.slice/mariadb.service" };
        struct watch w = entry(WATCH_KEY_UNIT | WATCH_KEY_COMM);
        snprintf(w.unit, sizeof(w.unit), "mariadb.service");
        snprintf(w.comm, sizeof(w.comm), "ib_io_*");
        w.comm_glob = true;
        CHECK(watch_entry_selects(&w, &f));
        snprintf(w.comm, sizeof(w.comm), "ib_io_rd*");
        CHECK(!watch_entry_selects(&w, &f)); /* AND: the name does not match */
        w = entry(WATCH_KEY_UID);
        w.uid = 999;
        CHECK(watch_entry_selects(&w, &f));
        w.uid = 998;
        CHECK(!watch_entry_selects(&w, &f));
        f.have_uid = false;
        CHECK(!watch_entry_selects(&w, &f)); /* not known: not watched */
        w = entry(WATCH_KEY_PID);
        w.pid = 7;
        CHECK(!watch_entry_selects(&w, &f));
        f.followed_root = 7;
        CHECK(!watch_entry_selects(&w, &f)); /* followed, but this entry does not follow children */
        w.children = true;
        CHECK(watch_entry_selects(&w, &f));
        w = entry(WATCH_KEY_CGROUP);
        snprintf(w.cgroup, sizeof(w.cgroup), "/system.slice/*.service");
        CHECK(watch_entry_selects(&w, &f));
        f.have_cgroup = false;
        CHECK(!watch_entry_selects(&w, &f));

        /* a list: any entry */
        struct watch list[2] = { entry(WATCH_KEY_COMM), entry(WATCH_KEY_UID) };
        snprintf(list[0].comm, sizeof(list[0].comm), "fio");
        list[1].uid = 5;
        CHECK(!watch_selects(list, 2, &f));
        f.have_uid = true;
        f.uid = 5;
        CHECK(watch_selects(list, 2, &f));
        CHECK(watch_needs_user_space(list, 2));
        CHECK(!watch_needs_user_space(list, 1));
}

/* This process, as /proc shows it; its executable by identity, and followed across a replacement. */
TEST(self_and_exe) {
        struct proc_facts f;
        CHECK_EQ(proc_facts_read("/proc", (uint32_t) getpid(), &f), 0);
        CHECK(f.have_uid && f.uid == getuid());
        CHECK(f.have_exe);
        CHECK_STR(f.exe_name, "test-select");
        CHECK_EQ(proc_facts_read("/proc", 0x7ffffff0u, &f), -ENOENT);

        /* a copy of "the program" run from a directory: its facts as the /proc link would give them */
        char path[300], other[300], fresh[300];
        snprintf(path, sizeof(path), "%s/prog", test_dir);
        snprintf(other, sizeof(other), "%s/sub", test_dir);
        mkdir(other, 0755);
        snprintf(other, sizeof(other), "%s/sub/prog", test_dir);
        snprintf(fresh, sizeof(fresh), "%s/prog.new", test_dir);
        FILE *fp = fopen(path, "we");
        fputs("1", fp);
        fclose(fp);
        fp = fopen(other, "we");
        fputs("2", fp);
        fclose(fp);
        struct stat st, dst;
        CHECK_EQ(stat(path, &st), 0);
        CHECK_EQ(stat(test_dir, &dst), 0);
        struct proc_facts run = { .have_exe = true, .exe_dev = st.st_dev, .exe_ino = st.st_ino, .exe_name = "prog",
                                  .dir_dev = dst.st_dev, .dir_ino = dst.st_ino };
        struct watch w = entry(WATCH_KEY_EXE);
        snprintf(w.exe, sizeof(w.exe), "%s", path);
        CHECK(watch_entry_selects(&w, &run));
        snprintf(w.exe, sizeof(w.exe), "%s", other); /* the same name elsewhere: another file */
        CHECK(!watch_entry_selects(&w, &run));
        /* replaced as a package upgrade does (a new file renamed over it): the old process is still the program,
         * and so is one started from the new file */
        snprintf(w.exe, sizeof(w.exe), "%s", path);
        fp = fopen(fresh, "we");
        fputs("3", fp);
        fclose(fp);
        CHECK_EQ(rename(fresh, path), 0);
        CHECK(watch_entry_selects(&w, &run));
        CHECK_EQ(stat(path, &st), 0);
        struct proc_facts run2 = run;
        run2.exe_ino = st.st_ino;
        CHECK(watch_entry_selects(&w, &run2));
        /* a hard link elsewhere is the same file */
        char link_path[300];
        snprintf(link_path, sizeof(link_path), "%s/sub/alias", test_dir);
        CHECK_EQ(link(path, link_path), 0);
        snprintf(run2.exe_name, sizeof(run2.exe_name), "alias");
        run2.dir_ino = 0;
        CHECK(watch_entry_selects(&w, &run2));
}

struct notes {
        char text[2048];
        size_t len;
};

static void note(void *userdata, const struct watch *w, const char *what) {
        struct notes *n = userdata;
        n->len += (size_t) snprintf(n->text + n->len, sizeof(n->text) - n->len, "%u: %s\n", w->line, what);
}

/* What an entry cannot watch now is said, once per entry, with its line. */
TEST(absent) {
        char path[300], cmd[700];
        snprintf(cmd, sizeof(cmd), "mkdir -p %s/cg/system.slice/a.service %s/bin", test_dir, test_dir);
        CHECK_EQ(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/mountinfo", test_dir);
        FILE *f = fopen(path, "we");
        fprintf(f, "31 24 0:27 / %s/cg rw - cgroup2 cgroup2 rw\n", test_dir);
        fclose(f);
        struct watch list[6] = { entry(WATCH_KEY_UNIT), entry(WATCH_KEY_UNIT), entry(WATCH_KEY_CGROUP),
                                 entry(WATCH_KEY_CGROUP), entry(WATCH_KEY_EXE), entry(WATCH_KEY_EXE) };
        for (unsigned i = 0; i < 6; i++)
                list[i].line = i + 1;
        snprintf(list[0].unit, sizeof(list[0].unit), "a.service");
        snprintf(list[1].unit, sizeof(list[1].unit), "later.service");
        snprintf(list[2].cgroup, sizeof(list[2].cgroup), "/system.slice/*.service");
        snprintf(list[3].cgroup, sizeof(list[3].cgroup), "/machine.slice/*");
        snprintf(list[4].exe, sizeof(list[4].exe), "%s/bin/prog", test_dir);
        snprintf(list[5].exe, sizeof(list[5].exe), "%s/nodir/prog", test_dir);
        struct notes n = {};
        watch_note_absent(list, 6, path, &(struct watch_report) { note, &n });
        CHECK_STR(n.text, "2: the unit has no cgroup now: it is watched from its start\n"
                          "4: no cgroup matches now: one made later is watched once found\n"
                          "5: the file does not exist now: one put there later is watched\n"
                          "6: its directory does not exist: this entry watches nothing until a reload after it does\n");
        /* no cgroup v2 anywhere */
        f = fopen(path, "we");
        fclose(f);
        n = (struct notes) {};
        watch_note_absent(list, 1, path, &(struct watch_report) { note, &n });
        CHECK_STR(n.text, "1: no cgroup v2 hierarchy is mounted, where units and cgroups are found: this entry watches "
                          "nothing\n");
}

TEST_MAIN_IN_DIR("test-select")
