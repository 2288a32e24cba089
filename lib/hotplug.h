/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* CPUs going offline and coming back: a CPU's events die with it and stay dead when it is back, so each look
 * (once a second) finds the dead ones, says so, and opens them again as soon as the CPU is there, as for a CPU
 * offline since the start.  The opening itself is the daemon's (ops): what to do and say is decided here. */

#include <stddef.h>
#include <stdint.h>

enum cpu_state {
        CPU_TRACED,        /* its events are open and alive */
        CPU_OFFLINE,       /* offline since the start: no ring yet, traced once it comes online */
        CPU_DEAD,          /* its events died when it went offline; opened again once it is back */
        CPU_REVIVE_FAILED, /* online again, but opening its events failed for another reason (said once) */
};

/* What the look knows of one CPU; the daemon's ops change it. */
struct cpu_life {
        int cpu;
        enum cpu_state state;
        uint64_t live_since; /* CLOCK_MONOTONIC when its events were (last) enabled */
        uint64_t stopped_at; /* CLOCK_MONOTONIC when its events died, as near as the kernel tells; 0: never opened */
};

struct hotplug_ops {
        /* Whether CPU i's events died since the last look (> 0: then state CPU_DEAD and stopped_at set). */
        int (*check)(void *userdata, size_t i);
        /* Its events opened again (state CPU_TRACED): 0, -ENODEV while it is offline, or another negative errno
         * with what went wrong in error. */
        int (*revive)(void *userdata, size_t i, char *error, size_t error_size);
        /* A line to say, at priority (syslog's). */
        void (*say)(void *userdata, int priority, const char *message);
};

/* One look at every CPU: online: the CPUs online now (sysfs).  now_realtime_ns and now_ns: the clocks now, to
 * say when a CPU went offline in the time of day. */
void hotplug_look(struct cpu_life *const *cpus, size_t n, const int *online, size_t n_online,
                  const struct hotplug_ops *ops, void *userdata, uint64_t now_realtime_ns, uint64_t now_ns);

/* "14:03:07.125": a CLOCK_MONOTONIC time in the local time of day, given the two clocks now. */
void hotplug_clock(uint64_t monotonic, uint64_t now_realtime_ns, uint64_t now_ns, char *buf, size_t size);
