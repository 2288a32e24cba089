/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pidns.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"

int nspid_parse(const char *status, uint32_t *ret_innermost, unsigned *ret_count) {
        const char *line = strstr(status, "\nNSpid:");
        if (!line)
                return -EBADMSG;
        const char *s = line + 7;
        unsigned n = 0;
        unsigned long last = 0;
        for (;;) {
                s += strspn(s, " \t");
                char *end;
                unsigned long v = strtoul(s, &end, 10);
                if (end == s)
                        break;
                last = v;
                n++;
                s = end;
        }
        if (!n || last > UINT32_MAX)
                return -EBADMSG;
        *ret_innermost = (uint32_t) last;
        *ret_count = n;
        return 0;
}

/* The NSpid line of /proc/WHO/status: the innermost pid and how many namespaces deep it is. */
static int status_nspid(const char *proc_root, const char *who, uint32_t *ret_innermost, unsigned *ret_count) {
        char path[128], status[8192];
        snprintf(path, sizeof(path), "%s/%s/status", proc_root, who);
        ssize_t n = read_small_file(path, status, sizeof(status));
        if (n < 0)
                return (int) n;
        return nspid_parse(status, ret_innermost, ret_count);
}

int pidns_of_self(const char *proc_root, struct pidns *ret) {
        char path[128];
        struct stat st;
        snprintf(path, sizeof(path), "%s/self/ns/pid", proc_root);
        if (stat(path, &st) < 0)
                return -errno;
        uint32_t pid;
        unsigned levels;
        int r = status_nspid(proc_root, "self", &pid, &levels);
        if (r < 0)
                return r;
        *ret = (struct pidns) { .dev = st.st_dev, .ino = st.st_ino, .level = levels - 1 };
        return 0;
}

int proc_ns_pid(const char *proc_root, uint32_t pid, uint32_t *ret) {
        char who[16];
        snprintf(who, sizeof(who), "%u", pid);
        uint32_t innermost;
        unsigned levels;
        int r = status_nspid(proc_root, who, &innermost, &levels);
        if (r < 0)
                return r;
        *ret = innermost;
        return 0;
}
