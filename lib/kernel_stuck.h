/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Requests summed in the kernel (the capture's sum_inflight map, which only the daemon can walk) that are
 * stuck: each in flight longer than stuck_after is said so once, as the tracker says its own.  A look walks
 * the whole map, once a second: kernel_stuck_begin(), kernel_stuck_add() for each entry, kernel_stuck_end().
 * The requests told are kept sorted from one look to the next: one told before and still there is not told
 * again; one gone has ended (its end is in the summaries). */

#include <stddef.h>
#include <stdint.h>

#include "capture.h"

struct tracker;

struct stuck_entry {
        uint64_t ctx, id, submit_time;
        uint32_t kind;
        uint32_t pid; /* as the daemon sees it */
        uint64_t data;
        uint16_t opcode;
};

struct kernel_stuck {
        struct stuck_entry *told; /* sorted */
        size_t n_told, cap_told;
        struct stuck_entry *now; /* this look's */
        size_t n_now, cap_now;
        uint64_t before; /* this look: those submitted before are stuck */
        uint64_t time;
};

void kernel_stuck_begin(struct kernel_stuck *k, struct tracker *t, uint64_t stuck_after_ns, uint64_t now);
/* One request in flight in the kernel: kept if it is stuck.  -ENOMEM: not kept (counted by the caller). */
int kernel_stuck_add(struct kernel_stuck *k, struct tracker *t, const struct sum_key *key, const struct sum_req *r);
/* Those stuck and not told before, told; each process's count of those stuck now set. */
void kernel_stuck_end(struct kernel_stuck *k, struct tracker *t);
void kernel_stuck_done(struct kernel_stuck *k);
