/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the unit lets the daemon write, as systemd reads the unit and its drop-ins: the shipped unit itself, a
 * drop-in that adds a path, one that empties a list, one in /etc that shadows one of the same name elsewhere. */
#include "unit_sandbox.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static void put(const char *rel, const char *text) {
        char path[512], cmd[600];
        snprintf(path, sizeof(path), "%s/%s", test_dir, rel);
        snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
        CHECK(system(cmd) == 0);
        FILE *f = fopen(path, "we");
        CHECK(f != NULL);
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

static const char *problem(const struct unit_sandbox *u, const char *dir) {
        static char buf[2048];
        return unit_sandbox_dir_problem(u, dir, buf, sizeof(buf));
}

/* The shipped unit, as the build makes it. */
TEST(shipped_unit) {
        char in[4096], cmd[8400];
        const char *src = getenv("top_srcdir");
        snprintf(in, sizeof(in), "%s/systemd/aiotraced.service.in", src ? src : ".");
        snprintf(cmd, sizeof(cmd), "mkdir -p %s/lib && sed -e 's|@sbindir@|/usr/sbin|g' -e 's|@sysconfdir@|/etc|g' "
                 "-e 's|@docdir@|/usr/share/doc/aiotraced|g' '%s' >%s/lib/aiotraced.service", test_dir, in, test_dir);
        CHECK(system(cmd) == 0);
        char lib[128];
        snprintf(lib, sizeof(lib), "%s/lib", test_dir);
        const char *dirs[] = { lib, NULL };
        struct unit_sandbox u;
        CHECK_EQ(unit_sandbox_load(dirs, "aiotraced.service", &u), 0);
        CHECK_STR(u.config_path, "/etc/aiotraced/aiotraced.conf");
        CHECK(problem(&u, "/var/log/aiotraced") == NULL);
        CHECK(problem(&u, "/var/log/aiotraced/sub") == NULL);
        CHECK(problem(&u, "/var/lib/prometheus/node-exporter") == NULL);
        CHECK(problem(&u, "/run/aiotraced") == NULL);
        CHECK_CONTAINS(problem(&u, "/srv/aio"), "/srv/aio is read-only for it (ProtectSystem=strict); it may write "
                       "under /var/lib/prometheus/node-exporter, /run/aiotraced, /var/log/aiotraced: choose one, or add "
                       "ReadWritePaths=/srv/aio in a drop-in (systemctl edit aiotraced)");
        CHECK_CONTAINS(problem(&u, "/var/log"), "read-only"); /* above its own directory */
        CHECK_CONTAINS(problem(&u, "/var/log/aiotraced-other"), "read-only");
        CHECK_CONTAINS(problem(&u, "/tmp"), "PrivateTmp=yes");
        CHECK_CONTAINS(problem(&u, "/home/me"), "ProtectHome=read-only");
}

TEST(dropins) {
        put("etc/x.service", "[Unit]\nDescription=ReadWritePaths=/nope\n[Service]\nExecStart=/usr/sbin/aiotraced --config=/etc/a.conf\n"
                             "ProtectSystem = strict\nReadWritePaths=-/srv/a /srv/b/\nLogsDirectory=x\n");
        put("usr/x.service", "[Service]\nProtectSystem=no\n"); /* shadowed by /etc's */
        put("usr/x.service.d/10-more.conf", "[Service]\nReadWritePaths=/srv/c\n");
        put("usr/x.service.d/20-reset.conf", "[Service]\nLogsDirectory=\nLogsDirectory=y\n");
        put("etc/x.service.d/30-home.conf", "[Service]\nProtectHome=yes\nExecStart=\nExecStart=/x -c /etc/b.conf\n");
        put("usr/x.service.d/30-home.conf", "[Service]\nProtectHome=no\n"); /* shadowed */
        char etc[128], usr[128];
        snprintf(etc, sizeof(etc), "%s/etc", test_dir);
        snprintf(usr, sizeof(usr), "%s/usr", test_dir);
        const char *dirs[] = { etc, usr, NULL };
        struct unit_sandbox u;
        CHECK_EQ(unit_sandbox_load(dirs, "x.service", &u), 0);
        CHECK_CONTAINS(u.unit_path, "/etc/x.service");
        CHECK_STR(u.config_path, "/etc/b.conf");
        CHECK(u.protect_system == PROTECT_SYSTEM_STRICT && u.protect_home == PROTECT_HOME_YES);
        CHECK(problem(&u, "/srv/a/deeper") == NULL);
        CHECK(problem(&u, "/srv/b") == NULL);
        CHECK(problem(&u, "/srv/c") == NULL);
        CHECK(problem(&u, "/var/log/y") == NULL);
        CHECK_CONTAINS(problem(&u, "/var/log/x"), "read-only"); /* emptied by a drop-in */
        CHECK_CONTAINS(problem(&u, "/nope"), "read-only");      /* not of [Service] */
        CHECK_CONTAINS(problem(&u, "/root"), "is hidden from it (ProtectHome=yes)");
        CHECK(problem(&u, "/proc/sys") == NULL);
        const char *none[] = { usr, NULL };
        CHECK_EQ(unit_sandbox_load(none, "y.service", &u), -ENOENT);
}

TEST_MAIN_IN_DIR("test-unit-sandbox")
