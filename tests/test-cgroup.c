/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process's systemd unit from its cgroup: the first service or scope past the slices, on the unified
 * hierarchy or on a hybrid layout's name=systemd one, and none for what is in no unit. */
#include "cgroup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "test.h"

static void unit_is(const char *path, int want_r, const char *want) {
        char unit[UNIT_NAME_MAX] = "untouched";
        int r = cgroup_path_unit(path, unit);
        CHECK_EQ(r, want_r);
        CHECK_STR(unit, want_r == 0 ? want : "untouched");
}

static void proc_text_is(const char *text, const char *want) {
        size_t len = 0;
        const char *at = cgroup_of_proc_text(text, &len);
        if (!want) {
                CHECK(at == NULL);
                return;
        }
        char got[256] = "";
        if (at)
                snprintf(got, sizeof(got), "%.*s", (int) len, at);
        CHECK_STR(got, want);
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        fputs(text, f);
        fclose(f);
}

struct found {
        char paths[1024]; /* sorted on output: readdir's order is not */
        uint64_t last_id;
};

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int collect(void *userdata, const char *path, uint64_t id) {
        struct found *f = userdata;
        char *items[32], copy[2048];
        size_t n = 0;
        snprintf(copy, sizeof(copy), "%s %s", f->paths, path);
        for (char *t = strtok(copy, " "); t && n < 32; t = strtok(NULL, " "))
                items[n++] = t;
        qsort(items, n, sizeof(*items), cmp_str);
        size_t len = 0;
        for (size_t i = 0; i < n; i++)
                len += (size_t) snprintf(f->paths + len, sizeof(f->paths) - len, " %s", items[i]);
        f->last_id = id;
        return 0;
}

static int collect_each(void *userdata, size_t which, const char *path, uint64_t id) {
        return collect((struct found *) userdata + which, path, id);
}

int main(void) {
        CASE("the unit of a cgroup path");
        unit_is("/system.slice/mariadb.service", 0, "mariadb.service");
        unit_is("/system.slice/mariadb.service/worker", 0, "mariadb.service");
        unit_is("/user.slice/user-1000.slice/session-3.scope", 0, "session-3.scope");
        unit_is("/system.slice/docker-0123abcd.scope", 0, "docker-0123abcd.scope");
        unit_is("/machine.slice/machine-x.scope/payload/system.slice/a.service", 0, "machine-x.scope");
        unit_is("/", -ENOENT, NULL);
        unit_is("/system.slice", -ENOENT, NULL);
        unit_is("/docker/0123abcd", -ENOENT, NULL); /* a cgroup not of systemd's tree */

        CASE("the path from /proc/PID/cgroup: unified, or name=systemd where the unified one is the root");
        proc_text_is("0::/system.slice/a.service\n", "/system.slice/a.service");
        proc_text_is("12:memory:/x\n1:name=systemd:/system.slice/b.service\n0::/\n", "/system.slice/b.service");
        proc_text_is("0::/\n1:name=systemd:/system.slice/b.service\n", "/system.slice/b.service");
        proc_text_is("4:memory:/process_api/c0\n", NULL);

        CASE("this process: its cgroup as /proc says it; a process gone: none");
        char cg[CGROUP_PATH_MAX], text[8192];
        CHECK_EQ(proc_cgroup("/proc", (uint32_t) getpid(), cg), 0);
        CHECK(read_small_file("/proc/self/cgroup", text, sizeof(text)) > 0);
        size_t len = 0;
        const char *at = cgroup_of_proc_text(text, &len);
        CHECK(at != NULL && strlen(cg) == len && strncmp(cg, at, len) == 0);
        CHECK_EQ(proc_cgroup("/proc", 0x3ffffff0, cg), -ENOENT);

        CASE("the cgroup v2 mount point from mountinfo; none on a v1-only layout");
        char dir[] = "/tmp/aiotraced-cgroup.XXXXXX", path[512], point[512] = "untouched";
        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/mountinfo", dir);
        write_text(path, "24 1 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n"
                         "30 24 0:26 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
                         "31 24 0:27 / /sys/fs/cgroup/unified rw shared:9 - cgroup2 cgroup2 rw\n");
        CHECK_EQ(cgroup2_mount_point(path, point, sizeof(point)), 0);
        CHECK_STR(point, "/sys/fs/cgroup/unified");
        write_text(path, "30 24 0:26 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n");
        snprintf(point, sizeof(point), "untouched");
        CHECK_EQ(cgroup2_mount_point(path, point, sizeof(point)), -ENOENT);
        CHECK_STR(point, "untouched");

        CASE("cgroups found by a path glob (its levels only) and by name (at any level), with their ids");
        snprintf(path, sizeof(path), "mkdir -p %s/cg/system.slice/docker-1.scope/inner %s/cg/system.slice/docker-2.scope "
                 "%s/cg/system.slice/podman-3.scope %s/cg/a/b/c/mariadb.service/x %s/cg/mariadb.service.d", dir, dir,
                 dir, dir, dir);
        CHECK_EQ(system(path), 0);
        snprintf(path, sizeof(path), "%s/cg", dir);
        struct found f = {};
        CHECK_EQ(cgroup_find(path, "/system.slice/docker-*.scope", collect, &f), 2);
        CHECK_STR(f.paths, " /system.slice/docker-1.scope /system.slice/docker-2.scope");
        f = (struct found) {};
        CHECK_EQ(cgroup_find(path, "/system.slice/*/inner", collect, &f), 1);
        f = (struct found) {};
        CHECK_EQ(cgroup_find(path, "/nothing*", collect, &f), 0);
        f = (struct found) {};
        CHECK_EQ(cgroup_find(path, "/", collect, &f), 1);
        CHECK_STR(f.paths, " /");
        f = (struct found) {};
        CHECK_EQ(cgroup_find_named(path, "mariadb.service", collect, &f), 1);
        CHECK_STR(f.paths, " /a/b/c/mariadb.service");
        char inner[600];
        snprintf(inner, sizeof(inner), "%s/cg/a/b/c/mariadb.service", dir);
        struct stat st;
        CHECK(stat(inner, &st) == 0 && f.last_id == (uint64_t) st.st_ino);
        CHECK_EQ(cgroup_find("/nonexistent-root", "/x", collect, &f), -ENOENT);

        CASE("many patterns in one walk, each told apart; a subtree no pattern's leading components match is not read");
        snprintf(path, sizeof(path), "cd %s/cg && for i in $(seq 50); do mkdir -p big/n$i/m1 big/n$i/m2; done", dir);
        CHECK_EQ(system(path), 0);
        snprintf(path, sizeof(path), "%s/cg", dir);
        const char *patterns[] = { "/system.slice/docker-*.scope", "/", "/a/b/*", "/system.slice/*/inner", "/none/*" };
        struct found each[ELEMENTS(patterns)] = {};
        unsigned dirs_read = 0;
        CHECK_EQ(cgroup_find_all(path, patterns, ELEMENTS(patterns), collect_each, each, &dirs_read), 5);
        CHECK_STR(each[0].paths, " /system.slice/docker-1.scope /system.slice/docker-2.scope");
        CHECK_STR(each[1].paths, " /");
        CHECK_STR(each[2].paths, " /a/b/c");
        CHECK_STR(each[3].paths, " /system.slice/docker-1.scope/inner");
        CHECK_STR(each[4].paths, "");
        /* the root, system.slice and its three scopes, a, a/b: never big/ and its 150 */
        CHECK_EQ(dirs_read, 7);
        const char *too_many[CGROUP_PATTERNS_MAX + 1];
        for (size_t i = 0; i < ELEMENTS(too_many); i++)
                too_many[i] = "/x";
        CHECK_EQ(cgroup_find_all(path, too_many, ELEMENTS(too_many), collect_each, each, NULL), -E2BIG);
        snprintf(path, sizeof(path), "rm -rf %s", dir);
        CHECK_EQ(system(path), 0);
        return test_result("test-cgroup");
}
