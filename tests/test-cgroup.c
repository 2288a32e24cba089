/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process's systemd unit from its cgroup: the first service or scope past the slices, on the unified
 * hierarchy or on a hybrid layout's name=systemd one, and none for what is in no unit. */
#include "cgroup.h"

#include <errno.h>
#include <string.h>
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
        return test_result("test-cgroup");
}
