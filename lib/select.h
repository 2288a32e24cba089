/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "watch.h"
#include "watch_key.h"

/* What PROC_ROOT/TGID says; a fact that cannot be read is left out (have_* false).  -ENOENT: the process is
 * gone. */
int proc_facts_read(const char *proc_root, uint32_t tgid, struct proc_facts *ret);

/* Whether some entry needs the decision in user space: the kernel's filter is only a first cut. */
bool watch_needs_user_space(const struct watch *entries, size_t n);

/* Say of each entry what it cannot watch now: a unit without a cgroup (watched from its start), a cgroup
 * pattern that matches none, an executable that is not there, no cgroup v2 hierarchy at all; and an executable
 * given through a symbolic link, which is followed as the file it names. */
void watch_note_absent(const struct watch *entries, size_t n, const char *mountinfo_path,
                       const struct watch_report *r);
