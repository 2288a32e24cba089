/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The look at the CPUs, on CPUs whose events die and come back as a script says (the real ones, in
 * tests/hotplug.sh): a death said once, with when; a CPU back traced again, with how long it was not; one offline
 * since the start said once it comes; an opening that fails said once, and tried again at each look. */
#include "hotplug.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "test.h"

#define S 1000000000ull

struct script {
        struct cpu_life cpu[3];
        int revive_result[3]; /* what opening each CPU's events gives at this look */
        bool dies[3];         /* its events died since the last look */
        uint64_t now;
        char said[2048];
        int priorities;
};

static int check(void *userdata, size_t i) {
        struct script *s = userdata;
        if (!s->dies[i])
                return 0;
        s->cpu[i].state = CPU_DEAD;
        s->cpu[i].stopped_at = s->now - S / 2;
        return 1;
}

static int revive(void *userdata, size_t i, char *error, size_t error_size) {
        struct script *s = userdata;
        int r = s->revive_result[i];
        if (r < 0 && r != -ENODEV)
                snprintf(error, error_size, "no memory today");
        if (r == 0) {
                s->cpu[i].state = CPU_TRACED;
                s->cpu[i].live_since = s->now;
        }
        return r;
}

static void say(void *userdata, int priority, const char *message) {
        struct script *s = userdata;
        size_t n = strlen(s->said);
        snprintf(s->said + n, sizeof(s->said) - n, "%d: %s\n", priority, message);
        s->priorities |= 1 << priority;
}

static void look(struct script *s, const int *online, size_t n_online) {
        static const struct hotplug_ops ops = { .check = check, .revive = revive, .say = say };
        struct cpu_life *lives[3] = { &s->cpu[0], &s->cpu[1], &s->cpu[2] };
        s->said[0] = 0;
        /* the time of day is not what is tested: the host's clock says it */
        hotplug_look(lives, 3, online, n_online, &ops, s, 0, s->now);
}

/* "CPU 1 went offline at HH:MM:SS.mmm: ..." with the clock cut out. */
static const char *without_clock(const char *said) {
        static char buf[2048];
        size_t n = 0;
        for (const char *p = said; *p && n + 1 < sizeof(buf); p++) {
                if (p[0] >= '0' && p[0] <= '9' && p[2] == ':' && p[5] == ':' && p[8] == '.') {
                        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "CLOCK");
                        p += 11;
                        continue;
                }
                buf[n++] = *p;
        }
        buf[n] = 0;
        return buf;
}

TEST(death_and_return) {
        struct script s = { .cpu = { { 0, CPU_TRACED, 1, 0 }, { 1, CPU_TRACED, 1, 0 }, { 2, CPU_OFFLINE, 0, 0 } },
                            .now = 10 * S };
        const int all_but_2[] = { 0, 1 }, all[] = { 0, 1, 2 }, only_0[] = { 0 };
        s.revive_result[2] = -ENODEV;
        look(&s, all_but_2, 2);
        CHECK_STR(s.said, ""); /* nothing died, the offline one still is */
        s.dies[1] = true;
        s.revive_result[1] = -ENODEV;
        look(&s, only_0, 1);
        CHECK_STR(without_clock(s.said), "4: CPU 1 went offline at CLOCK: its events went with it, and nothing on it is "
                                         "traced until it is back\n");
        CHECK(s.cpu[1].state == CPU_DEAD);
        s.dies[1] = false;
        look(&s, only_0, 1);
        CHECK_STR(s.said, ""); /* still offline: said once */
        /* back two seconds later; CPU 2 comes for the first time */
        s.now = 12 * S;
        s.revive_result[1] = 0;
        s.revive_result[2] = 0;
        look(&s, all, 3);
        CHECK_CONTAINS(s.said, "5: CPU 1 is traced again: its calls from ");
        CHECK_CONTAINS(s.said, " until now (2.500 s) were not\n");
        CHECK_CONTAINS(s.said, "5: CPU 2 came online: traced from now on\n");
        CHECK(s.cpu[1].state == CPU_TRACED && s.cpu[2].state == CPU_TRACED);
}

TEST(failing_revive) {
        struct script s = { .cpu = { { 0, CPU_TRACED, 1, 0 }, { 1, CPU_DEAD, 1, 5 * S }, { 2, CPU_TRACED, 1, 0 } },
                            .now = 10 * S };
        const int all[] = { 0, 1, 2 };
        s.revive_result[1] = -ENOMEM;
        look(&s, all, 3);
        CHECK_STR(s.said, "3: CPU 1 is online but cannot be traced: no memory today\n");
        CHECK(s.cpu[1].state == CPU_REVIVE_FAILED);
        look(&s, all, 3);
        CHECK_STR(s.said, ""); /* tried again, said once */
        s.revive_result[1] = 0;
        look(&s, all, 3);
        CHECK_CONTAINS(s.said, "5: CPU 1 is traced again: its calls from ");
        CHECK_CONTAINS(s.said, " until now (5.000 s) were not\n");
}

TEST(clock) {
        char buf[32];
        /* a monotonic time 1.5 s before now, in a day's time of 00:00:10.000 UTC (TZ=UTC) */
        setenv("TZ", "UTC", 1);
        hotplug_clock(100 * S - 3 * S / 2, 10 * S, 100 * S, buf, sizeof(buf));
        CHECK_STR(buf, "00:00:08.500");
}

TEST_MAIN("test-hotplug")
