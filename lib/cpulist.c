/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cpulist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fileio.h"
#include "util.h"

#define CPU_MAX 65536 /* beyond any kernel's NR_CPUS: a list past it is not a list of CPUs */

int cpu_list_parse(const char *s, int **ret, size_t *ret_n) {
        size_t cap = 16, count = 0;
        _cleanup_(freep) int *cpus = malloc(cap * sizeof(*cpus));
        if (!cpus)
                return -ENOMEM;
        for (const char *p = s; *p && *p != '\n';) {
                char *end;
                long a = strtol(p, &end, 10), b = a;
                if (end == p || a < 0 || a >= CPU_MAX)
                        return -EINVAL;
                if (*end == '-') {
                        p = end + 1;
                        b = strtol(p, &end, 10);
                        if (end == p || b < a || b >= CPU_MAX)
                                return -EINVAL;
                }
                for (long c = a; c <= b; c++) {
                        if (count == cap) {
                                int *q = realloc(cpus, 2 * cap * sizeof(*cpus));
                                if (!q)
                                        return -ENOMEM;
                                cpus = q;
                                cap *= 2;
                        }
                        cpus[count++] = (int) c;
                }
                p = end;
                if (*p == ',')
                        p++;
                else if (*p && *p != '\n')
                        return -EINVAL;
        }
        if (count == 0)
                return -EINVAL;
        *ret = TAKE_PTR(cpus);
        *ret_n = count;
        return 0;
}

int sysfs_cpus(const char *sysfs_dir, const char *which, const char *only, int **ret, size_t *ret_n) {
        char path[4096], buf[4096];
        snprintf(path, sizeof(path), "%s/%s", sysfs_dir, which);
        ssize_t n = read_small_file(path, buf, sizeof(buf));
        if (n <= 0)
                return n < 0 ? (int) n : -EIO;
        _cleanup_(freep) int *listed = NULL, *wanted = NULL;
        size_t n_listed, n_wanted;
        int r = cpu_list_parse(buf, &listed, &n_listed);
        if (r < 0)
                return r;
        if (only) {
                r = cpu_list_parse(only, &wanted, &n_wanted);
                if (r < 0)
                        return r;
                size_t k = 0;
                for (size_t i = 0; i < n_listed; i++)
                        for (size_t j = 0; j < n_wanted; j++)
                                if (listed[i] == wanted[j]) {
                                        listed[k++] = listed[i];
                                        break;
                                }
                if (k == 0)
                        return -ENOENT;
                n_listed = k;
        }
        *ret = TAKE_PTR(listed);
        *ret_n = n_listed;
        return 0;
}
