/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "unit_sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#define DROPINS_MAX 64

static bool parse_bool(const char *v, bool *ret) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(v, yes[i]) == 0) {
                        *ret = true;
                        return true;
                } else if (strcasecmp(v, no[i]) == 0) {
                        *ret = false;
                        return true;
                }
        return false;
}

static void add_writable(struct unit_sandbox *s, const char *prefix, const char *path, size_t len) {
        if (s->n_writable < UNIT_WRITABLE_MAX)
                snprintf(s->writable[s->n_writable++], sizeof(s->writable[0]), "%s%.*s", prefix, (int) len, path);
}

/* "a -b +c": each word, without the prefixes systemd allows ('-': ignored if missing; '+': outside the root). */
static void add_words(struct unit_sandbox *s, const char *prefix, const char *v) {
        while (*v) {
                v += strspn(v, " \t");
                size_t n = strcspn(v, " \t");
                const char *w = v;
                v += n;
                while (n && (*w == '-' || *w == '+')) {
                        w++;
                        n--;
                }
                while (n > 1 && w[n - 1] == '/')
                        n--;
                if (n)
                        add_writable(s, prefix, w, n);
        }
}

/* -c PATH, --config PATH or --config=PATH in ExecStart's words. */
static void exec_config(struct unit_sandbox *s, const char *v) {
        char words[4096];
        snprintf(words, sizeof(words), "%s", v);
        char *save = NULL, *prev = NULL;
        s->config_path[0] = 0;
        for (char *w = strtok_r(words, " \t", &save); w; prev = w, w = strtok_r(NULL, " \t", &save))
                if (strncmp(w, "--config=", 9) == 0)
                        snprintf(s->config_path, sizeof(s->config_path), "%s", w + 9);
                else if (prev && (strcmp(prev, "-c") == 0 || strcmp(prev, "--config") == 0))
                        snprintf(s->config_path, sizeof(s->config_path), "%s", w);
}

/* The [Service] keys that decide where the daemon may write, as systemd reads them: a later assignment
 * replaces a setting, and adds to a list, which an empty one empties.  The *Directory= lists are kept apart
 * while reading (an empty one empties only its own), and joined at the end. */
struct dirs_so_far {
        char lists[4][1024];
};

static const struct {
        const char *key, *base;
} directory_keys[] = {
        { "RuntimeDirectory", "/run/" }, { "StateDirectory", "/var/lib/" },
        { "CacheDirectory", "/var/cache/" }, { "LogsDirectory", "/var/log/" },
};

static void apply(struct unit_sandbox *s, struct dirs_so_far *d, char (*rw)[1024], const char *key, const char *v) {
        bool b;
        if (strcmp(key, "ProtectSystem") == 0)
                s->protect_system = strcmp(v, "strict") == 0 ? PROTECT_SYSTEM_STRICT
                                    : strcmp(v, "full") == 0 ? PROTECT_SYSTEM_FULL
                                    : parse_bool(v, &b) && b ? PROTECT_SYSTEM_YES
                                                             : PROTECT_SYSTEM_NO;
        else if (strcmp(key, "ProtectHome") == 0)
                s->protect_home = strcmp(v, "read-only") == 0 ? PROTECT_HOME_READ_ONLY
                                  : strcmp(v, "tmpfs") == 0   ? PROTECT_HOME_TMPFS
                                  : parse_bool(v, &b) && b    ? PROTECT_HOME_YES
                                                              : PROTECT_HOME_NO;
        else if (strcmp(key, "PrivateTmp") == 0)
                s->private_tmp = parse_bool(v, &b) && b;
        else if (strcmp(key, "ExecStart") == 0)
                exec_config(s, v);
        else if (strcmp(key, "ReadWritePaths") == 0) {
                size_t n = v[0] ? strlen(*rw) : 0;
                snprintf(*rw + n, sizeof(*rw) - n, " %s", v);
        } else
                for (size_t i = 0; i < ELEMENTSOF(directory_keys); i++)
                        if (strcmp(key, directory_keys[i].key) == 0) {
                                size_t n = v[0] ? strlen(d->lists[i]) : 0;
                                snprintf(d->lists[i] + n, sizeof(d->lists[i]) - n, " %s", v);
                        }
}

static int read_unit_file(struct unit_sandbox *s, struct dirs_so_far *d, char (*rw)[1024], const char *path) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        char line[4096];
        bool service = false;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\r\n")] = 0;
                char *l = line + strspn(line, " \t");
                if (l[0] == '[') {
                        service = strcmp(l, "[Service]") == 0;
                        continue;
                }
                char *eq = strchr(l, '=');
                if (!service || l[0] == '#' || l[0] == ';' || !eq)
                        continue;
                char *end = eq;
                while (end > l && (end[-1] == ' ' || end[-1] == '\t'))
                        end--;
                *end = 0;
                char *v = eq + 1;
                v += strspn(v, " \t");
                size_t n = strlen(v);
                while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
                        v[--n] = 0;
                apply(s, d, rw, l, v);
        }
        return 0;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(strrchr(*(char *const *) a, '/') + 1, strrchr(*(char *const *) b, '/') + 1);
}

/* Every NAME.d/ *.conf, by file name; of two with one name, the earlier dir's. */
static size_t find_dropins(const char *const *dirs, const char *name, char (*found)[4500], size_t max) {
        size_t n = 0;
        for (size_t i = 0; dirs[i]; i++) {
                char dir_path[4200];
                snprintf(dir_path, sizeof(dir_path), "%s/%s.d", dirs[i], name);
                DIR *dir = opendir(dir_path);
                if (!dir)
                        continue;
                for (struct dirent *de; (de = readdir(dir)) && n < max;) {
                        size_t len = strlen(de->d_name);
                        if (len < 6 || strcmp(de->d_name + len - 5, ".conf") != 0)
                                continue;
                        bool shadowed = false;
                        for (size_t j = 0; j < n && !shadowed; j++)
                                shadowed = strcmp(strrchr(found[j], '/') + 1, de->d_name) == 0;
                        if (!shadowed)
                                snprintf(found[n++], sizeof(found[0]), "%s/%s", dir_path, de->d_name);
                }
                closedir(dir);
        }
        return n;
}

int unit_sandbox_load(const char *const *dirs, const char *name, struct unit_sandbox *ret) {
        struct unit_sandbox s = {};
        struct dirs_so_far d = {};
        char rw[1024] = "";
        int r = -ENOENT;
        for (size_t i = 0; dirs[i] && r == -ENOENT; i++) {
                snprintf(s.unit_path, sizeof(s.unit_path), "%s/%s", dirs[i], name);
                r = read_unit_file(&s, &d, &rw, s.unit_path);
        }
        if (r < 0)
                return r;
        _cleanup_(freep) char (*dropins)[4500] = calloc(DROPINS_MAX, sizeof(*dropins));
        if (!dropins)
                return -ENOMEM;
        size_t n = find_dropins(dirs, name, dropins, DROPINS_MAX);
        char *order[DROPINS_MAX];
        for (size_t i = 0; i < n; i++)
                order[i] = dropins[i];
        qsort(order, n, sizeof(order[0]), compare_names);
        for (size_t i = 0; i < n; i++)
                (void) read_unit_file(&s, &d, &rw, order[i]);
        add_words(&s, "", rw);
        for (size_t i = 0; i < ELEMENTSOF(directory_keys); i++)
                add_words(&s, directory_keys[i].base, d.lists[i]);
        *ret = s;
        return 0;
}

/* dir is at or below top. */
static bool below(const char *dir, const char *top) {
        size_t n = strlen(top);
        while (n > 1 && top[n - 1] == '/')
                n--;
        return strncmp(dir, top, n) == 0 && (dir[n] == 0 || dir[n] == '/' || (n == 1 && top[0] == '/'));
}

const char *unit_sandbox_dir_problem(const struct unit_sandbox *s, const char *dir, char *buf, size_t size) {
        for (size_t i = 0; i < s->n_writable; i++)
                if (below(dir, s->writable[i]))
                        return NULL;
        static const char *const system_ro[] = { "/usr", "/boot", "/efi" };
        static const char *const full_ro[] = { "/etc" };
        static const char *const api[] = { "/dev", "/proc", "/sys" };
        static const char *const home[] = { "/home", "/root", "/run/user" };
        const char *why = NULL;
        if (s->private_tmp && (below(dir, "/tmp") || below(dir, "/var/tmp")))
                why = "is the unit's own (PrivateTmp=yes): what it writes there is not seen outside it";
        for (size_t i = 0; !why && s->protect_home != PROTECT_HOME_NO && i < ELEMENTSOF(home); i++)
                if (below(dir, home[i]))
                        why = s->protect_home == PROTECT_HOME_READ_ONLY ? "is read-only for it (ProtectHome=read-only)"
                              : s->protect_home == PROTECT_HOME_TMPFS   ? "is an empty tmpfs of its own (ProtectHome=tmpfs)"
                                                                        : "is hidden from it (ProtectHome=yes)";
        bool api_fs = false;
        for (size_t i = 0; i < ELEMENTSOF(api); i++)
                api_fs = api_fs || below(dir, api[i]);
        if (!why && s->protect_system == PROTECT_SYSTEM_STRICT && !api_fs)
                why = "is read-only for it (ProtectSystem=strict)";
        for (size_t i = 0; !why && s->protect_system >= PROTECT_SYSTEM_YES && i < ELEMENTSOF(system_ro); i++)
                if (below(dir, system_ro[i]))
                        why = "is read-only for it (ProtectSystem=)";
        for (size_t i = 0; !why && s->protect_system >= PROTECT_SYSTEM_FULL && i < ELEMENTSOF(full_ro); i++)
                if (below(dir, full_ro[i]))
                        why = "is read-only for it (ProtectSystem=full)";
        if (!why)
                return NULL;
        size_t n = (size_t) snprintf(buf, size, "under the unit (%s), %s %s; it may write under", s->unit_path, dir, why);
        for (size_t i = 0; i < s->n_writable && n < size; i++)
                n += (size_t) snprintf(buf + n, size - n, "%s %s", i ? "," : "", s->writable[i]);
        if (n < size)
                snprintf(buf + n, size - n, "%s: choose one, or add ReadWritePaths=%s in a drop-in (systemctl edit "
                         "aiotraced)", s->n_writable ? "" : " nothing", dir);
        return buf;
}
