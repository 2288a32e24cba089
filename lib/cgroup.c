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
#include "util.h"

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
        const char *const *patterns; /* path globs, */
        size_t n_patterns;
        unsigned depth[CGROUP_PATTERNS_MAX]; /* each with this many levels; */
        const char *name;                    /* or a name, at any level up to CGROUP_FIND_DEPTH */
        int (*found)(void *userdata, size_t which, const char *path, uint64_t id);
        void *userdata;
        unsigned dirs_read;
};

/* Whether the component at level (0: the first below the root) of pattern matches name. */
static bool component_matches(const char *pattern, unsigned level, const char *name) {
        const char *p = pattern;
        for (unsigned l = 0; l <= level; l++) {
                p += strspn(p, "/");
                if (l < level)
                        p += strcspn(p, "/");
        }
        char comp[CGROUP_PATTERN_SIZE];
        size_t len = strcspn(p, "/");
        if (len >= sizeof(comp))
                return false;
        memcpy(comp, p, len);
        comp[len] = 0;
        return fnmatch(comp, name, 0) == 0;
}

/* dir_fd is the cgroup at rel (depth levels below the root); alive: the patterns whose first depth components
 * matched on the way here.  A subtree no pattern can match below is not read. */
static int find_below(int dir_fd, char *rel, size_t rel_len, unsigned depth, uint64_t alive, struct cgroup_search *q) {
        DIR *d = fdopendir(dir_fd);
        if (!d) {
                int r = -errno;
                close(dir_fd);
                return r;
        }
        q->dirs_read++;
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
                uint64_t matched = 0, below = 0;
                if (q->name) {
                        if (strcmp(de->d_name, q->name) == 0)
                                matched = 1;
                        else if (depth + 1 < CGROUP_FIND_DEPTH)
                                below = 1;
                } else
                        for (size_t i = 0; i < q->n_patterns; i++)
                                if ((alive & (1ull << i)) && component_matches(q->patterns[i], depth, de->d_name)) {
                                        if (depth + 1 == q->depth[i])
                                                matched |= 1ull << i;
                                        else
                                                below |= 1ull << i;
                                }
                int r = 0;
                struct stat st;
                if (matched && fstatat(dirfd(d), de->d_name, &st, 0) == 0)
                        for (size_t i = 0; r >= 0 && i < MAX(q->n_patterns, (size_t) 1); i++)
                                if (matched & (1ull << i)) {
                                        r = q->found(q->userdata, i, rel, (uint64_t) st.st_ino);
                                        n += r >= 0;
                                }
                if (r >= 0 && below) {
                        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (fd >= 0)
                                r = find_below(fd, rel, rel_len + 1 + len, depth + 1, below, q);
                        n += r > 0 ? r : 0;
                }
                rel[rel_len] = 0;
                if (r < 0) {
                        n = r;
                        break;
                }
        }
        closedir(d);
        return n;
}

static int search(const char *root, uint64_t alive, struct cgroup_search *q) {
        int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        char rel[PATH_MAX_CGROUP] = "";
        return find_below(fd, rel, 0, 0, alive, q);
}

int cgroup_find_all(const char *root, const char *const *patterns, size_t n,
                    int (*found)(void *userdata, size_t which, const char *path, uint64_t id), void *userdata,
                    unsigned *ret_dirs_read) {
        if (n > CGROUP_PATTERNS_MAX)
                return -E2BIG;
        struct cgroup_search q = { .patterns = patterns, .n_patterns = n, .found = found, .userdata = userdata };
        uint64_t alive = 0; /* the patterns below the root: "/" is the root itself */
        int n_root = 0;
        for (size_t i = 0; i < n; i++) {
                q.depth[i] = path_depth(patterns[i]);
                if (q.depth[i]) {
                        alive |= 1ull << i;
                        continue;
                }
                struct stat st;
                if (stat(root, &st) < 0)
                        return -errno;
                int r = found(userdata, i, "/", (uint64_t) st.st_ino);
                if (r < 0)
                        return r;
                n_root++;
        }
        int r = alive ? search(root, alive, &q) : 0;
        if (ret_dirs_read)
                *ret_dirs_read = q.dirs_read;
        return r < 0 ? r : r + n_root;
}

struct one_pattern {
        int (*found)(void *userdata, const char *path, uint64_t id);
        void *userdata;
};

static int one_found(void *userdata, size_t which, const char *path, uint64_t id) {
        const struct one_pattern *o = userdata;
        (void) which;
        return o->found(o->userdata, path, id);
}

int cgroup_find(const char *root, const char *pattern,
                int (*found)(void *userdata, const char *path, uint64_t id), void *userdata) {
        struct one_pattern o = { found, userdata };
        return cgroup_find_all(root, &pattern, 1, one_found, &o, NULL);
}

int cgroup_find_named(const char *root, const char *name,
                      int (*found)(void *userdata, const char *path, uint64_t id), void *userdata) {
        struct one_pattern o = { found, userdata };
        struct cgroup_search q = { .name = name, .found = one_found, .userdata = &o };
        return search(root, 1, &q);
}
