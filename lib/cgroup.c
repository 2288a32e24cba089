/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#define PATH_MAX_CGROUP 4096

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

int cgroup2_mount_point(const char *mountinfo_path, char *ret, size_t size) {
        FILE *f = fopen(mountinfo_path, "re");
        if (!f)
                return -errno;
        char *line = NULL;
        size_t cap = 0;
        int r = -ENOENT;
        while (r == -ENOENT && getline(&line, &cap, f) > 0) {
                /* ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS */
                char point[4096];
                const char *sep = strstr(line, " - ");
                if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0 ||
                    sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
                        continue;
                /* mountinfo writes a space, a tab, a newline or a backslash in octal: none is in such a path */
                if (strchr(point, '\\') || strlen(point) >= size)
                        continue;
                memcpy(ret, point, strlen(point) + 1);
                r = 0;
        }
        free(line);
        fclose(f);
        return r;
}

static unsigned path_depth(const char *pattern) {
        unsigned n = 0;
        for (const char *p = pattern; *p; p++)
                n += *p == '/' && p[1];
        return n;
}

struct cgroup_search {
        const char *pattern; /* a path glob, */
        unsigned depth;      /* with this many levels; */
        const char *name;    /* or a name, at any level up to CGROUP_FIND_DEPTH */
        int (*found)(void *userdata, const char *path, uint64_t id);
        void *userdata;
};

/* dir_fd is the cgroup at rel (depth levels below the root). */
static int find_below(int dir_fd, char *rel, size_t rel_len, unsigned depth, const struct cgroup_search *q) {
        DIR *d = fdopendir(dir_fd);
        if (!d) {
                int r = -errno;
                close(dir_fd);
                return r;
        }
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                size_t len = strlen(de->d_name);
                if (rel_len + 1 + len >= PATH_MAX_CGROUP)
                        continue;
                rel[rel_len] = '/';
                memcpy(rel + rel_len + 1, de->d_name, len + 1);
                int r = 0;
                bool match = q->name ? strcmp(de->d_name, q->name) == 0
                                     : depth + 1 == q->depth && fnmatch(q->pattern, rel, FNM_PATHNAME) == 0;
                struct stat st;
                if (match && fstatat(dirfd(d), de->d_name, &st, 0) == 0) {
                        r = q->found(q->userdata, rel, (uint64_t) st.st_ino);
                        r = r < 0 ? r : 1;
                }
                if (r >= 0 && !match && depth + 1 < (q->name ? CGROUP_FIND_DEPTH : q->depth)) {
                        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (fd >= 0)
                                r = find_below(fd, rel, rel_len + 1 + len, depth + 1, q);
                }
                rel[rel_len] = 0;
                if (r < 0) {
                        n = r;
                        break;
                }
                n += r;
        }
        closedir(d);
        return n;
}

static int search(const char *root, const struct cgroup_search *q) {
        int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        char rel[PATH_MAX_CGROUP] = "";
        return find_below(fd, rel, 0, 0, q);
}

int cgroup_find(const char *root, const char *pattern,
                int (*found)(void *userdata, const char *path, uint64_t id), void *userdata) {
        if (strcmp(pattern, "/") == 0) {
                struct stat st;
                if (stat(root, &st) < 0)
                        return -errno;
                int r = found(userdata, "/", (uint64_t) st.st_ino);
                return r < 0 ? r : 1;
        }
        struct cgroup_search q = { .pattern = pattern, .depth = path_depth(pattern), .found = found, .userdata = userdata };
        return search(root, &q);
}

int cgroup_find_named(const char *root, const char *name,
                      int (*found)(void *userdata, const char *path, uint64_t id), void *userdata) {
        struct cgroup_search q = { .name = name, .found = found, .userdata = userdata };
        return search(root, &q);
}
