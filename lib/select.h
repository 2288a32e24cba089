/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "config.h"
#include "watch.h"

/* Without the capture, what the kernel's filter cannot say (a unit, a cgroup, an executable, a user, or a comm or
 * pid together with them) is decided in user space, once per thread, from what /proc says of its process. */
struct proc_facts {
        uint32_t tgid;
        char comm[16];
        bool have_uid, have_exe, have_cgroup;
        uid_t uid; /* real */
        dev_t exe_dev, dir_dev;
        ino_t exe_ino, dir_ino;
        char exe_name[WATCH_EXE_NAME_MAX + 1];
        char cgroup[CGROUP_PATH_MAX]; /* from the cgroup v2 root ("0::" line), or systemd's on a hybrid layout */
        uint32_t followed_root; /* the watched pid it descends from, when followed as a child; 0: none */
};

/* What PROC_ROOT/TGID says; a fact that cannot be read is left out (have_* false).  -ENOENT: the process is
 * gone. */
int proc_facts_read(const char *proc_root, uint32_t tgid, struct proc_facts *ret);

/* Whether one entry, or any entry of the list, selects the process. */
bool watch_entry_selects(const struct watch *w, const struct proc_facts *f);
bool watch_selects(const struct config *c, const struct proc_facts *f);

/* Whether some entry needs the decision in user space: the kernel's filter is only a first cut. */
bool watch_needs_user_space(const struct config *c);

/* Whether a cgroup path is at, or below, a cgroup matching pattern (fnmatch with FNM_PATHNAME), or in the unit
 * (a cgroup of that name at some level). */
bool cgroup_path_matches(const char *path, const char *pattern);
bool cgroup_path_in_unit(const char *path, const char *unit);

/* Say of each entry what it cannot watch now: a unit without a cgroup (watched from its start), a cgroup
 * pattern that matches none, an executable that is not there, no cgroup v2 hierarchy at all. */
void watch_note_absent(const struct config *c, const char *mountinfo_path, const struct watch_report *r);
