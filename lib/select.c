/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "select.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"

int proc_facts_read(const char *proc_root, uint32_t tgid, struct proc_facts *ret) {
        struct proc_facts f = { .tgid = tgid };
        char path[128], buf[4096];
        snprintf(path, sizeof(path), "%s/%u/status", proc_root, tgid);
        if (read_small_file(path, buf, sizeof(buf)) <= 0)
                return -ENOENT;
        const char *uid = strstr(buf, "\nUid:");
        if (uid) {
                f.uid = (uid_t) strtoul(uid + 5, NULL, 10);
                f.have_uid = true;
        }
        const char *name = strncmp(buf, "Name:\t", 6) == 0 ? buf + 6 : NULL;
        if (name)
                snprintf(f.comm, sizeof(f.comm), "%.*s", (int) strcspn(name, "\n"), name);

        /* the executable: the file itself, and the directory entry it was run from (which a package upgrade
         * fills with a new file: that one is the same program).  Its attributes as the kernel holds them: a
         * program run from a FUSE mount whose server does not answer must not hold the drain up. */
        struct statx st;
        snprintf(path, sizeof(path), "%s/%u/exe", proc_root, tgid);
        char target[4096];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n > 0 && statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &st) == 0) {
                target[n] = 0;
                f.exe_dev = makedev(st.stx_dev_major, st.stx_dev_minor);
                f.exe_ino = st.stx_ino;
                static const char deleted[] = " (deleted)";
                size_t len = (size_t) n, dl = sizeof(deleted) - 1;
                if (len > dl && strcmp(target + len - dl, deleted) == 0)
                        target[len - dl] = 0;
                char *slash = strrchr(target, '/');
                if (slash) {
                        snprintf(f.exe_name, sizeof(f.exe_name), "%s", slash + 1);
                        *(slash == target ? slash + 1 : slash) = 0;
                        uint64_t dir_ino;
                        dev_t dir_dev;
                        if (file_identity_cached(AT_FDCWD, target, &dir_ino, &dir_dev) == 0) {
                                f.dir_dev = dir_dev;
                                f.dir_ino = dir_ino;
                        }
                }
                f.have_exe = true;
        }
        f.have_cgroup = proc_cgroup(proc_root, tgid, f.cgroup) == 0;
        *ret = f;
        return 0;
}

bool watch_needs_user_space(const struct watch *entries, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!watch_is_comm_only(&entries[i]) && entries[i].keys != WATCH_KEY_PID)
                        return true;
        return false;
}

static int found_one(void *userdata, const char *path, uint64_t id) {
        (void) userdata, (void) path, (void) id;
        return 0;
}

void watch_note_absent(const struct watch *entries, size_t n, const char *mountinfo_path,
                       const struct watch_report *r) {
        char root[4096];
        bool have_root = cgroup2_mount_point(mountinfo_path, root, sizeof(root)) == 0;
        for (size_t i = 0; i < n; i++) {
                const struct watch *w = &entries[i];
                if ((w->keys & (WATCH_KEY_UNIT | WATCH_KEY_CGROUP)) && !have_root)
                        r->note(r->userdata, w, "no cgroup v2 hierarchy is mounted, where units and cgroups are found: "
                                "this entry watches nothing");
                else if ((w->keys & WATCH_KEY_UNIT) && cgroup_find_named(root, w->unit, found_one, NULL) <= 0)
                        r->note(r->userdata, w, "the unit has no cgroup now: it is watched from its start");
                else if ((w->keys & WATCH_KEY_CGROUP) && cgroup_find(root, w->cgroup, found_one, NULL) <= 0)
                        r->note(r->userdata, w, "no cgroup matches now: one made later is watched once found");
                if (w->exe_link[0]) {
                        char what[2 * WATCH_EXE_MAX + 128];
                        snprintf(what, sizeof(what), "%s is a symbolic link: watched as the file it names now, %s, "
                                 "and what replaces that file", w->exe_link, w->exe);
                        r->note(r->userdata, w, what);
                }
                if (w->keys & WATCH_KEY_EXE) {
                        char dir[WATCH_EXE_MAX + 1];
                        const char *slash = strrchr(w->exe, '/');
                        snprintf(dir, sizeof(dir), "%.*s", slash == w->exe ? 1 : (int) (slash - w->exe), w->exe);
                        struct stat st;
                        if (stat(dir, &st) < 0)
                                r->note(r->userdata, w, "its directory does not exist: this entry watches nothing "
                                        "until a reload after it does");
                        else if (stat(w->exe, &st) < 0)
                                r->note(r->userdata, w, "the file does not exist now: one put there later is watched");
                }
        }
}
