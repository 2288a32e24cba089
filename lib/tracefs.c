/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tracefs.h"

#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

/* 0: dir/events is there; else why not (-EACCES: it is, but this process may not look). */
static int events_in(const char *dir) {
        char path[4096];
        struct stat st;
        if ((size_t) snprintf(path, sizeof(path), "%s/events", dir) >= sizeof(path))
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static bool has_events(const char *dir) {
        return events_in(dir) == 0;
}

int tracefs_find(const char *mounts_path, bool mount_if_missing, char *ret, size_t size) {
        char found[4096] = "";
        FILE *f = setmntent(mounts_path, "re");
        int denied = 0;
        if (f) {
                struct mntent *m;
                while ((m = getmntent(f))) {
                        int r = strcmp(m->mnt_type, "tracefs") == 0 ? events_in(m->mnt_dir) : -ENOENT;
                        if (r == -EACCES)
                                denied = r; /* mounted, but not for this process to read */
                        if (r == 0 && (size_t) snprintf(found, sizeof(found), "%s", m->mnt_dir) < sizeof(found))
                                break;
                        if (strcmp(m->mnt_type, "debugfs") == 0 && !found[0]) {
                                char dir[4096];
                                if ((size_t) snprintf(dir, sizeof(dir), "%s/tracing", m->mnt_dir) < sizeof(dir) &&
                                    has_events(dir))
                                        memcpy(found, dir, sizeof(found)); /* keep looking for tracefs */
                        }
                }
                endmntent(f);
        }
        if (!found[0] && denied)
                return denied;
        bool mounted = false;
        if (!found[0] && mount_if_missing) {
                int m = mount("nodev", TRACEFS_DEFAULT, "tracefs", 0, NULL);
                if (m < 0 && errno != EBUSY)
                        return -errno;
                mounted = m == 0;
                if (has_events(TRACEFS_DEFAULT))
                        snprintf(found, sizeof(found), "%s", TRACEFS_DEFAULT);
        }
        if (!found[0])
                return -ENOENT;
        if (strlen(found) >= size)
                return -ENAMETOOLONG;
        memcpy(ret, found, strlen(found) + 1);
        return mounted;
}

bool seccomp_filtered(void) {
        char status[8192];
        if (read_small_file("/proc/self/status", status, sizeof(status)) < 0)
                return true; /* not known: the careful answer */
        const char *s = strstr(status, "\nSeccomp:");
        return !s || strtol(s + 9, NULL, 10) != 0;
}
