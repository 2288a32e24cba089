/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CPU lists as sysfs writes them ("0-3,8,10-11"): parsed, refused when malformed, and read from a tree laid out
 * as /sys/devices/system/cpu, with the part of it AIOTRACED_CPUS names. */
#include "cpulist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

TEST(cpu_list) {
        int *cpus = NULL;
        size_t n = 0;
        CHECK_EQ(cpu_list_parse("0-3,8,10-11\n", &cpus, &n), 0);
        CHECK_EQ(n, 7);
        if (cpus && n == 7)
                CHECK(cpus[0] == 0 && cpus[3] == 3 && cpus[4] == 8 && cpus[5] == 10 && cpus[6] == 11);
        free(cpus);
        CHECK_EQ(cpu_list_parse("1", &cpus, &n), 0);
        CHECK(n == 1 && cpus[0] == 1);
        free(cpus);
        static const char *const bad[] = { "", "x", "3-1", "-1", "1,,2", "0-999999", "1 2", "2-" };
        for (size_t i = 0; i < ELEMENTS(bad); i++)
                CHECK_EQ(cpu_list_parse(bad[i], &cpus, &n), -EINVAL);
}

/* sysfs_cpus on a tree laid out as /sys/devices/system/cpu: the list, and the part of it `only` names. */
TEST(sysfs_cpus) {
        char path[128];
        snprintf(path, sizeof(path), "%s/online", test_dir);
        FILE *f = fopen(path, "we");
        CHECK(f != NULL);
        if (!f)
                return;
        fputs("0-2,5\n", f);
        fclose(f);
        int *cpus = NULL;
        size_t n = 0;
        CHECK_EQ(sysfs_cpus(test_dir, "online", NULL, &cpus, &n), 0);
        CHECK(n == 4 && cpus[3] == 5);
        free(cpus);
        CHECK_EQ(sysfs_cpus(test_dir, "online", "1,5,7", &cpus, &n), 0);
        CHECK(n == 2 && cpus[0] == 1 && cpus[1] == 5);
        free(cpus);
        CHECK_EQ(sysfs_cpus(test_dir, "online", "7", &cpus, &n), -ENOENT);
        CHECK_EQ(sysfs_cpus(test_dir, "possible", NULL, &cpus, &n), -ENOENT);
}

TEST_MAIN_IN_DIR("test-cpulist")
