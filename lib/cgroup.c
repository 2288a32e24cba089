/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cgroup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"

static bool ends_with(const char *s, size_t len, const char *suffix) {
        size_t n = strlen(suffix);
        return len > n && memcmp(s + len - n, suffix, n) == 0;
}

int cgroup_path_unit(const char *path, char ret[static UNIT_NAME_MAX]) {
        for (const char *p = path; *p;) {
                p += strspn(p, "/");
                size_t len = strcspn(p, "/");
                if (len == 0)
                        break;
                if (ends_with(p, len, ".service") || ends_with(p, len, ".scope")) {
                        if (len >= UNIT_NAME_MAX)
                                return -ENAMETOOLONG;
                        memcpy(ret, p, len);
                        ret[len] = 0;
                        return 0;
                }
                if (!ends_with(p, len, ".slice"))
                        break; /* not under systemd's tree: no unit of its */
                p += len;
        }
        return -ENOENT;
}

const char *cgroup_of_proc_text(const char *text, size_t *ret_len) {
        const char *found = NULL;
        size_t found_len = 0;
        for (const char *line = text; *line;) {
                size_t len = strcspn(line, "\n");
                const char *path = NULL;
                if (len >= 3 && memcmp(line, "0::", 3) == 0)
                        path = line + 3;
                else {
                        const char *c = memchr(line, ':', len);
                        if (c && (size_t) (line + len - c) >= 15 && memcmp(c, ":name=systemd:", 14) == 0)
                                path = c + 14;
                }
                /* the unified line wins where systemd manages it; on a hybrid layout it is empty ("/") */
                if (path && (!found || (found_len <= 1 && (size_t) (line + len - path) > 1))) {
                        found = path;
                        found_len = (size_t) (line + len - path);
                }
                line += len;
                if (*line == '\n')
                        line++;
        }
        if (found)
                *ret_len = found_len;
        return found;
}

int proc_cgroup(const char *proc_root, uint32_t pid, char ret[static CGROUP_PATH_MAX]) {
        char path[128], text[8192];
        snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
        ssize_t n = read_small_file(path, text, sizeof(text));
        if (n < 0)
                return (int) n;
        size_t len;
        const char *at = cgroup_of_proc_text(text, &len);
        if (!at)
                return -ENOENT;
        if (len >= CGROUP_PATH_MAX)
                return -ENAMETOOLONG;
        memcpy(ret, at, len);
        ret[len] = 0;
        return 0;
}
