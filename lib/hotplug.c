/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hotplug.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

void hotplug_clock(uint64_t monotonic, uint64_t now_realtime_ns, uint64_t now_ns, char *buf, size_t size) {
        uint64_t ago = now_ns > monotonic ? now_ns - monotonic : 0;
        uint64_t at = now_realtime_ns - ago;
        time_t t = (time_t) (at / 1000000000ull);
        struct tm tm;
        size_t n = strftime(buf, size, "%H:%M:%S", localtime_r(&t, &tm));
        snprintf(buf + n, size - n, ".%03u", (unsigned) (at / 1000000ull % 1000));
}

static bool is_online(int cpu, const int *online, size_t n_online) {
        for (size_t j = 0; j < n_online; j++)
                if (online[j] == cpu)
                        return true;
        return false;
}

void hotplug_look(struct cpu_life *const *cpus, size_t n, const int *online, size_t n_online,
                  const struct hotplug_ops *ops, void *userdata, uint64_t now_realtime_ns, uint64_t now_ns) {
        for (size_t i = 0; i < n; i++) {
                struct cpu_life *c = cpus[i];
                char when[32], line[1200], error[1024] = "";
                if (c->state == CPU_TRACED) {
                        if (ops->check(userdata, i) <= 0)
                                continue;
                        hotplug_clock(c->stopped_at, now_realtime_ns, now_ns, when, sizeof(when));
                        snprintf(line, sizeof(line), "CPU %d went offline at %s: its events went with it, and nothing "
                                 "on it is traced until it is back", c->cpu, when);
                        ops->say(userdata, LOG_WARNING, line);
                }
                if (!is_online(c->cpu, online, n_online))
                        continue;
                enum cpu_state was = c->state;
                int r = ops->revive(userdata, i, error, sizeof(error));
                if (r == -ENODEV)
                        continue;
                if (r < 0) {
                        if (was != CPU_REVIVE_FAILED) {
                                snprintf(line, sizeof(line), "CPU %d is online but cannot be traced: %s", c->cpu, error);
                                ops->say(userdata, LOG_ERR, line);
                        }
                        c->state = CPU_REVIVE_FAILED; /* tried again at each look, said once */
                        continue;
                }
                if (c->stopped_at == 0) {
                        snprintf(line, sizeof(line), "CPU %d came online: traced from now on", c->cpu);
                        ops->say(userdata, LOG_NOTICE, line);
                        continue;
                }
                hotplug_clock(c->stopped_at, now_realtime_ns, now_ns, when, sizeof(when));
                snprintf(line, sizeof(line), "CPU %d is traced again: its calls from %s until now (%.3f s) were not",
                         c->cpu, when, (double) (c->live_since - c->stopped_at) / 1e9);
                ops->say(userdata, LOG_NOTICE, line);
        }
}
