/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* A CPU list as sysfs writes one ("0-3,8,10-11"): the CPUs in order.  -EINVAL for anything else. */
int cpu_list_parse(const char *s, int **ret, size_t *ret_n);
