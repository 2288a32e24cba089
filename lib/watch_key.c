/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "watch_key.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "glob_step.h"
#include "util.h"

#define PID_MAX_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit */

const char *comm_pattern_problem(const char *s, bool *ret_is_glob) {
        size_t len = strlen(s);
        bool glob = false, in_class = false;
        if (len == 0)
                return "is empty";
        if (len > GLOB_MAX)
                return "is longer than 63 characters";
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c < 0x20 || c >= 0x7f)
                        return "holds a control or non-ASCII character";
                if (c == '"' || c == '\\')
                        return "holds a quote or backslash, which the kernel's filter cannot take";
                if (c == '*' || c == '?')
                        glob = true;
                else if (c == '[') {
                        if (in_class)
                                return "is not a valid glob: '[' inside a [...] class";
                        in_class = glob = true;
                } else if (c == ']') {
                        if (!in_class)
                                return "is not a valid glob: ']' without '['";
                        in_class = false;
                }
        }
        if (in_class)
                return "is not a valid glob: '[' is never closed";
        if (!glob && len > COMM_MAX)
                return "is longer than 15 characters and can never match: the kernel keeps only 15";
        *ret_is_glob = glob;
        return NULL;
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

/* ---- each key: its check, its match in user space, its words ---- */

static int check_comm(struct watch *w, char *why, size_t size) {
        const char *problem = comm_pattern_problem(w->comm, &w->comm_glob);
        if (problem) {
                snprintf(why, size, "comm \"%s\" %s", w->comm, problem);
                return -EINVAL;
        }
        return 0;
}

static bool match_comm(const struct watch *w, const struct proc_facts *f) {
        /* the glob as the kernel's filter and the capture match it, not as fnmatch(3) does */
        return w->comm_glob ? glob_match(w->comm, f->comm) == 1 : strncmp(w->comm, f->comm, COMM_MAX) == 0;
}

static size_t say_comm(const struct watch *w, char *buf, size_t size) {
        return (size_t) snprintf(buf, size, "comm %s \"%s\"", w->comm_glob ? "~" : "==", w->comm);
}

static bool match_pid(const struct watch *w, const struct proc_facts *f) {
        return (uint32_t) w->pid == f->tgid || (w->children && f->followed_root == (uint32_t) w->pid);
}

static size_t say_pid(const struct watch *w, char *buf, size_t size) {
        return (size_t) snprintf(buf, size, "pid %d%s", w->pid, w->children ? " and its children" : "");
}

static int check_user(struct watch *w, char *why, size_t size) {
        struct passwd pw, *found = NULL;
        char buf[4096];
        int r = getpwnam_r(w->user, &pw, buf, sizeof(buf), &found);
        if (r != 0 || !found) {
                snprintf(why, size, "user \"%s\": %s", w->user, r ? strerror(r) : "no such user on this host");
                return -EINVAL;
        }
        w->uid = found->pw_uid;
        return 0;
}

static bool match_uid(const struct watch *w, const struct proc_facts *f) {
        return f->have_uid && f->uid == w->uid;
}

/* Put a map's key of type T, begun by its set, in *k; the key, to fill the rest. */
#define CAPTURE_KEY(k, map_name, T, set_)                                                                   \
        ({                                                                                                   \
                _Static_assert(sizeof(T) <= WATCH_CAPTURE_KEY_MAX, "a capture key too large");                \
                struct watch_capture_key *_k = (k);                                                          \
                *_k = (struct watch_capture_key) { .map = (map_name), .size = sizeof(T) };                   \
                T *_key = (T *) _k->key;                                                                     \
                _key->set = (set_);                                                                          \
                _key;                                                                                        \
        })

static size_t capture_uid(const struct watch *w, uint32_t set, struct watch_capture_key ret_keys[]) {
        CAPTURE_KEY(&ret_keys[0], "watch_uids", struct capture_uid_key, set)->uid = (uint32_t) w->uid;
        return 1;
}

static size_t say_uid(const struct watch *w, char *buf, size_t size) {
        if (w->user[0])
                return (size_t) snprintf(buf, size, "user %s", w->user);
        return (size_t) snprintf(buf, size, "uid %u", (unsigned) w->uid);
}

/* Units that have a cgroup of their own. */
static bool unit_has_cgroup(const char *unit) {
        static const char *const suffixes[] = { ".service", ".scope", ".slice", ".socket", ".mount", ".swap" };
        const char *dot = strrchr(unit, '.');
        for (size_t i = 0; dot && dot > unit && i < ELEMENTSOF(suffixes); i++)
                if (strcmp(dot, suffixes[i]) == 0)
                        return true;
        return false;
}

static int check_unit(struct watch *w, char *why, size_t size) {
        if (strchr(w->unit, '/') || !unit_has_cgroup(w->unit)) {
                snprintf(why, size, "unit \"%s\" is not the full name of a unit with processes, such as "
                         "\"mariadb.service\" (service, scope, slice, socket, mount or swap)", w->unit);
                return -EINVAL;
        }
        return 0;
}

static bool match_unit(const struct watch *w, const struct proc_facts *f) {
        return f->have_cgroup && cgroup_path_in_unit(f->cgroup, w->unit);
}

/* By name: the capture compares it with the names of a thread's cgroup and those above it. */
static size_t capture_unit(const struct watch *w, uint32_t set, struct watch_capture_key ret_keys[]) {
        struct capture_unit_key *key = CAPTURE_KEY(&ret_keys[0], "watch_units", struct capture_unit_key, set);
        snprintf(key->name, sizeof(key->name), "%s", w->unit);
        return 1;
}

static size_t say_unit(const struct watch *w, char *buf, size_t size) {
        return (size_t) snprintf(buf, size, "unit %s", w->unit);
}

static int check_cgroup(struct watch *w, char *why, size_t size) {
        const char *v = w->cgroup;
        if (v[0] != '/' || strstr(v, "//") || (v[1] && v[strlen(v) - 1] == '/')) {
                snprintf(why, size, "cgroup \"%s\" is not a cgroup v2 path such as \"/system.slice/docker-*.scope\"", v);
                return -EINVAL;
        }
        unsigned levels = 0;
        for (const char *c = v; *c; c++)
                levels += *c == '/' && c[1];
        if (levels > CGROUP_FIND_DEPTH) {
                snprintf(why, size, "cgroup \"%.40s...\" is more than %d levels deep", v, CGROUP_FIND_DEPTH);
                return -EINVAL;
        }
        return 0;
}

static bool match_cgroup(const struct watch *w, const struct proc_facts *f) {
        return f->have_cgroup && cgroup_path_matches(f->cgroup, w->cgroup);
}

static size_t say_cgroup(const struct watch *w, char *buf, size_t size) {
        return (size_t) snprintf(buf, size, "cgroup %s", w->cgroup);
}

/* An exe given through a symbolic link (/usr/bin/python3) is the file the link names now, followed by its own
 * directory and name: an upgrade replaces that file, not the link.  A file not there yet is taken as written. */
static int check_exe(struct watch *w, char *why, size_t size) {
        const char *base = strrchr(w->exe, '/');
        if (w->exe[0] != '/' || !base[1]) {
                snprintf(why, size, "exe \"%s\" is not the absolute path of a file", w->exe);
                return -EINVAL;
        }
        if (strlen(base + 1) > WATCH_EXE_NAME_MAX) {
                snprintf(why, size, "exe \"%s\": a file name of more than %d bytes", w->exe, WATCH_EXE_NAME_MAX);
                return -EINVAL;
        }
        char real[PATH_MAX];
        if (!realpath(w->exe, real) || strcmp(real, w->exe) == 0)
                return 0;
        base = strrchr(real, '/');
        if (strlen(real) > WATCH_EXE_MAX || strlen(base + 1) > WATCH_EXE_NAME_MAX) {
                snprintf(why, size, "exe \"%s\" names %s, a path or file name too long to watch", w->exe, real);
                return -EINVAL;
        }
        memcpy(w->exe_link, w->exe, sizeof(w->exe_link));
        snprintf(w->exe, sizeof(w->exe), "%s", real);
        return 0;
}

/* The directory of the exe ("/" for a file at the root) in dir; its file name. */
static const char *exe_dir(const struct watch *w, char dir[static WATCH_EXE_MAX + 1]) {
        const char *slash = strrchr(w->exe, '/');
        snprintf(dir, WATCH_EXE_MAX + 1, "%.*s", slash == w->exe ? 1 : (int) (slash - w->exe), w->exe);
        return slash + 1;
}

/* Asked at a thread's first record, on the drain's path: the files are looked up without waiting on a file
 * system (a program being run keeps its file and directory in the kernel's cache). */
static bool match_exe(const struct watch *w, const struct proc_facts *f) {
        if (!f->have_exe)
                return false;
        uint64_t ino;
        dev_t dev;
        if (file_identity_cached(AT_FDCWD, w->exe, &ino, &dev) == 0 && dev == f->exe_dev && ino == f->exe_ino)
                return true;
        /* run from the same directory entry: the file there now may be a newer one */
        char dir[WATCH_EXE_MAX + 1];
        const char *name = exe_dir(w, dir);
        return strcmp(name, f->exe_name) == 0 && file_identity_cached(AT_FDCWD, dir, &ino, &dev) == 0 &&
               dev == f->dir_dev && ino == f->dir_ino;
}

/* The file by its identity, and its directory entry, for a file that replaces it under its name; each only when
 * it is there now. */
static size_t capture_exe(const struct watch *w, uint32_t set, struct watch_capture_key ret_keys[]) {
        size_t n = 0;
        struct stat st;
        if (stat(w->exe, &st) == 0) {
                struct capture_exe_key *key = CAPTURE_KEY(&ret_keys[n++], "watch_exes", struct capture_exe_key, set);
                key->dev = kernel_dev(st.st_dev);
                key->ino = st.st_ino;
        }
        char dir[WATCH_EXE_MAX + 1];
        const char *name = exe_dir(w, dir);
        if (stat(dir, &st) == 0) {
                struct capture_exe_name_key *key =
                        CAPTURE_KEY(&ret_keys[n++], "watch_exe_names", struct capture_exe_name_key, set);
                key->dev = kernel_dev(st.st_dev);
                key->dir_ino = st.st_ino;
                snprintf(key->name, sizeof(key->name), "%s", name);
        }
        return n;
}

static size_t say_exe(const struct watch *w, char *buf, size_t size) {
        return (size_t) snprintf(buf, size, "exe %s", w->exe);
}

#define VALUE(f) .offset = offsetof(struct watch, f), .size = sizeof(((struct watch *) 0)->f)

/* In the order the daemon says an entry's keys. */
const struct watch_key watch_keys[] = {
        { "comm", WATCH_KEY_COMM, WATCH_VALUE_STRING, VALUE(comm), .check = check_comm, .class = CAPTURE_CLASS_COMM,
          .matches = match_comm, .describe = say_comm },
        { "pid", WATCH_KEY_PID, WATCH_VALUE_UINT, VALUE(pid), 1, PID_MAX_LIMIT, .class = CAPTURE_CLASS_ID,
          .matches = match_pid, .describe = say_pid },
        { "children", 0, WATCH_VALUE_BOOL, VALUE(children) },
        { "unit", WATCH_KEY_UNIT, WATCH_VALUE_STRING, VALUE(unit), .check = check_unit, .class = CAPTURE_CLASS_UNIT,
          .capture_keys = capture_unit, .matches = match_unit, .describe = say_unit },
        { "cgroup", WATCH_KEY_CGROUP, WATCH_VALUE_STRING, VALUE(cgroup), .check = check_cgroup,
          .class = CAPTURE_CLASS_CGROUP, .matches = match_cgroup, .describe = say_cgroup },
        { "exe", WATCH_KEY_EXE, WATCH_VALUE_STRING, VALUE(exe), .check = check_exe, .class = CAPTURE_CLASS_EXE,
          .capture_keys = capture_exe, .matches = match_exe, .describe = say_exe },
        { "user", WATCH_KEY_UID, WATCH_VALUE_STRING, VALUE(user), .check = check_user, .class = CAPTURE_CLASS_UID,
          .capture_keys = capture_uid, .matches = match_uid, .describe = say_uid },
        { "uid", WATCH_KEY_UID, WATCH_VALUE_UINT, VALUE(uid), 0, UINT32_MAX - 1, .class = CAPTURE_CLASS_UID },
};
const size_t watch_n_keys = ELEMENTSOF(watch_keys);

const struct watch_key *watch_key_named(const char *name) {
        for (size_t i = 0; i < watch_n_keys; i++)
                if (strcmp(watch_keys[i].name, name) == 0)
                        return &watch_keys[i];
        return NULL;
}

const struct watch_key *watch_key_of(unsigned flag) {
        for (size_t i = 0; i < watch_n_keys; i++)
                if (watch_keys[i].flag == flag && watch_keys[i].matches)
                        return &watch_keys[i];
        return NULL;
}

void watch_key_names(char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        for (size_t i = 0; i < watch_n_keys && n < size; i++)
                n += (size_t) snprintf(buf + n, size - n, "%s%s", i ? ", " : "", watch_keys[i].name);
}

int watch_entry_check(const struct watch *w, char *why, size_t size) {
        if (w->children && !(w->keys & WATCH_KEY_PID)) {
                snprintf(why, size, "children = true follows the descendants of a pid: give pid too");
                return -EINVAL;
        }
        if (!w->keys) {
                char names[128];
                size_t n = 0;
                names[0] = 0;
                for (size_t i = 0; i < watch_n_keys; i++)
                        if (watch_keys[i].flag)
                                n += (size_t) snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "",
                                                       watch_keys[i].name);
                char *last = strrchr(names, ',');
                if (last) /* "comm, pid or uid" */
                        snprintf(why, size, "empty watch entry: give %.*s or%s", (int) (last - names), names, last + 1);
                else
                        snprintf(why, size, "empty watch entry: give %s", names);
                return -EINVAL;
        }
        return 0;
}

bool watch_entry_selects(const struct watch *w, const struct proc_facts *f) {
        for (size_t i = 0; i < watch_n_keys; i++) {
                const struct watch_key *k = &watch_keys[i];
                if (k->matches && (w->keys & k->flag) && !k->matches(w, f))
                        return false;
        }
        return true;
}

bool watch_selects(const struct watch *entries, size_t n, const struct proc_facts *f) {
        if (n == 0)
                return true;
        for (size_t i = 0; i < n; i++)
                if (watch_entry_selects(&entries[i], f))
                        return true;
        return false;
}

size_t watch_entry_describe(const struct watch *w, char *buf, size_t size) {
        size_t n = 0;
        for (size_t i = 0; i < watch_n_keys; i++) {
                const struct watch_key *k = &watch_keys[i];
                if (!k->describe || !(w->keys & k->flag))
                        continue;
                if (n)
                        n += (size_t) snprintf(buf + n, n < size ? size - n : 0, " and ");
                n += k->describe(w, buf + MIN(n, size), n < size ? size - n : 0);
        }
        return n;
}

bool watch_entry_combined(const struct watch *w) {
        return w->children || (w->keys & (w->keys - 1)) != 0;
}

unsigned watch_combined_entries(const struct watch *entries, size_t n) {
        unsigned combined = 0;
        for (size_t i = 0; i < n; i++)
                combined += watch_entry_combined(&entries[i]);
        return combined;
}
