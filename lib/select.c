/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "select.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "glob_step.h"

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
         * fills with a new file: that one is the same program) */
        struct stat st;
        snprintf(path, sizeof(path), "%s/%u/exe", proc_root, tgid);
        char target[4096];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n > 0 && stat(path, &st) == 0) {
                target[n] = 0;
                f.exe_dev = st.st_dev;
                f.exe_ino = st.st_ino;
                static const char deleted[] = " (deleted)";
                size_t len = (size_t) n, dl = sizeof(deleted) - 1;
                if (len > dl && strcmp(target + len - dl, deleted) == 0)
                        target[len - dl] = 0;
                char *slash = strrchr(target, '/');
                if (slash) {
                        snprintf(f.exe_name, sizeof(f.exe_name), "%s", slash + 1);
                        *(slash == target ? slash + 1 : slash) = 0;
                        if (stat(target, &st) == 0) {
                                f.dir_dev = st.st_dev;
                                f.dir_ino = st.st_ino;
                        }
                }
                f.have_exe = true;
        }
        f.have_cgroup = proc_cgroup(proc_root, tgid, f.cgroup) == 0;
        *ret = f;
        return 0;
}

bool cgroup_path_matches(const char *path, const char *pattern) {
        if (strcmp(pattern, "/") == 0)
                return true;
        char prefix[CGROUP_PATH_MAX];
        size_t len = strlen(path);
        if (len >= sizeof(prefix))
                return false;
        memcpy(prefix, path, len + 1);
        /* each ancestor, from the path itself up */
        for (;;) {
                if (prefix[0] && fnmatch(pattern, prefix, FNM_PATHNAME) == 0)
                        return true;
                char *slash = strrchr(prefix, '/');
                if (!slash || slash == prefix)
                        return false;
                *slash = 0;
        }
}

bool cgroup_path_in_unit(const char *path, const char *unit) {
        size_t n = strlen(unit);
        for (const char *p = path; *p;) {
                p += strspn(p, "/");
                size_t len = strcspn(p, "/");
                if (len == n && memcmp(p, unit, n) == 0)
                        return true;
                p += len;
        }
        return false;
}

static bool exe_is(const struct watch *w, const struct proc_facts *f) {
        if (!f->have_exe)
                return false;
        struct stat st;
        if (stat(w->exe, &st) == 0 && st.st_dev == f->exe_dev && st.st_ino == f->exe_ino)
                return true;
        /* run from the same directory entry: the file there now may be a newer one */
        const char *slash = strrchr(w->exe, '/');
        char dir[WATCH_EXE_MAX + 1];
        snprintf(dir, sizeof(dir), "%.*s", slash == w->exe ? 1 : (int) (slash - w->exe), w->exe);
        return strcmp(slash + 1, f->exe_name) == 0 && stat(dir, &st) == 0 && st.st_dev == f->dir_dev &&
               st.st_ino == f->dir_ino;
}

bool watch_entry_selects(const struct watch *w, const struct proc_facts *f) {
        /* the glob as the kernel's filter and the capture match it, not as fnmatch(3) does */
        if ((w->keys & WATCH_KEY_COMM) &&
            (w->comm_glob ? glob_match(w->comm, f->comm) != 1 : strncmp(w->comm, f->comm, COMM_MAX) != 0))
                return false;
        if ((w->keys & WATCH_KEY_PID) && (uint32_t) w->pid != f->tgid &&
            !(w->children && f->followed_root == (uint32_t) w->pid))
                return false;
        if ((w->keys & WATCH_KEY_UID) && (!f->have_uid || f->uid != w->uid))
                return false;
        if ((w->keys & WATCH_KEY_EXE) && !exe_is(w, f))
                return false;
        if ((w->keys & WATCH_KEY_UNIT) && (!f->have_cgroup || !cgroup_path_in_unit(f->cgroup, w->unit)))
                return false;
        if ((w->keys & WATCH_KEY_CGROUP) && (!f->have_cgroup || !cgroup_path_matches(f->cgroup, w->cgroup)))
                return false;
        return true;
}

bool watch_selects(const struct config *c, const struct proc_facts *f) {
        if (c->n_watch == 0)
                return true;
        for (size_t i = 0; i < c->n_watch; i++)
                if (watch_entry_selects(&c->watch[i], f))
                        return true;
        return false;
}

bool watch_needs_user_space(const struct config *c) {
        for (size_t i = 0; i < c->n_watch; i++)
                if (!watch_is_comm_only(&c->watch[i]) && c->watch[i].keys != WATCH_KEY_PID)
                        return true;
        return false;
}

static int found_one(void *userdata, const char *path, uint64_t id) {
        (void) userdata, (void) path, (void) id;
        return 0;
}

void watch_note_absent(const struct config *c, const char *mountinfo_path, const struct watch_report *r) {
        char root[4096];
        bool have_root = cgroup2_mount_point(mountinfo_path, root, sizeof(root)) == 0;
        for (size_t i = 0; i < c->n_watch; i++) {
                const struct watch *w = &c->watch[i];
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
