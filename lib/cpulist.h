/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* A CPU list as sysfs writes one ("0-3,8,10-11"): the CPUs in order.  -EINVAL for anything else. */
int cpu_list_parse(const char *s, int **ret, size_t *ret_n);

/* The CPUs sysfs lists as `which` ("online", "possible") under sysfs_dir ("/sys/devices/system/cpu"); with
 * `only` (a CPU list), those of them it names (-ENOENT: none). */
int sysfs_cpus(const char *sysfs_dir, const char *which, const char *only, int **ret, size_t *ret_n);
