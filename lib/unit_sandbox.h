/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Where the installed unit lets the daemon write, read from the unit file and its drop-ins as systemd would
 * (ProtectSystem=, ProtectHome=, PrivateTmp=, ReadWritePaths=, LogsDirectory= and the other *Directory=):
 * so that --check-config, run from a shell, refuses what start under the unit would. */

#include <stdbool.h>
#include <stddef.h>

enum protect_system { PROTECT_SYSTEM_NO, PROTECT_SYSTEM_YES, PROTECT_SYSTEM_FULL, PROTECT_SYSTEM_STRICT };
enum protect_home { PROTECT_HOME_NO, PROTECT_HOME_READ_ONLY, PROTECT_HOME_YES, PROTECT_HOME_TMPFS };

#define UNIT_WRITABLE_MAX 32

struct unit_sandbox {
        char unit_path[4096];   /* the unit file read; "" when there is none */
        char config_path[4096]; /* what its ExecStart gives -c; "" when it gives none */
        enum protect_system protect_system;
        enum protect_home protect_home;
        bool private_tmp;
        char writable[UNIT_WRITABLE_MAX][256]; /* absolute: ReadWritePaths= and the *Directory= ones */
        size_t n_writable;
};

/* The unit `name` (aiotraced.service) from the first of dirs (NULL-terminated, in systemd's order: /etc first)
 * that has it, then its drop-ins (NAME.d/ *.conf of every dir, by file name; of two with one name, the earlier
 * dir's).  -ENOENT when no dir has the unit. */
int unit_sandbox_load(const char *const *dirs, const char *name, struct unit_sandbox *ret);

/* NULL when the unit lets the daemon make and write files in dir (an absolute path, symbolic links resolved);
 * else why not, in words, into buf. */
const char *unit_sandbox_dir_problem(const struct unit_sandbox *s, const char *dir, char *buf, size_t size);
