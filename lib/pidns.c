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

static int read_status(const char *proc_root, const char *who, char *buf, size_t size) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%s/status", proc_root, who);
        ssize_t n = read_small_file(path, buf, size);
        return n < 0 ? (int) n : 0;
}

int pidns_of_self(const char *proc_root, struct pidns *ret) {
        char path[128], status[8192];
        struct stat st;
        snprintf(path, sizeof(path), "%s/self/ns/pid", proc_root);
        if (stat(path, &st) < 0)
                return -errno;
        int r = read_status(proc_root, "self", status, sizeof(status));
        uint32_t pid;
        unsigned levels;
        if (r >= 0)
                r = nspid_parse(status, &pid, &levels);
        if (r < 0)
                return r;
        *ret = (struct pidns) { .dev = st.st_dev, .ino = st.st_ino, .level = levels - 1 };
        return 0;
}

int proc_ns_pid(const char *proc_root, uint32_t pid, uint32_t *ret) {
        char who[16], status[8192];
        snprintf(who, sizeof(who), "%u", pid);
        int r = read_status(proc_root, who, status, sizeof(status));
        uint32_t innermost;
        unsigned levels;
        if (r >= 0)
                r = nspid_parse(status, &innermost, &levels);
        if (r < 0)
                return r;
        *ret = innermost;
        return 0;
}
