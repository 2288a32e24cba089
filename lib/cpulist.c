/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cpulist.h"

#include <errno.h>
#include <stdlib.h>

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
