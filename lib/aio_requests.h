/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Native AIO's requests, from each io_submit's iocb to the io_event that reaps it (or the completion seen in the
 * context's AIO ring), in the tracker's AIO table keyed by (process, context, iocb). */

#include <stdbool.h>
#include <stdint.h>

#include "call.h"
#include "tracker.h"

/* A call whose memory was read: remember what it submitted, match what it reaped or cancelled (each event gets
 * its submit's fd, or is marked when its data disagrees), and note what ends; the call gets its process's unit,
 * cgroup and pid in its namespace, valid until tracker_flush().  The requests that ended are handed over by
 * tracker_flush(), after the call itself was written.  generation: the engine's drain count. */
void aio_requests_call(struct tracker *t, struct aio_call *call, uint64_t generation);

/* A completion the kernel wrote in ctx's ring, seen at `time` (by the capture, at a call of the process): its
 * request is complete.  reaped: taken from the ring, and by no io_getevents (none reaps from that ring): it
 * ends then, reaped in user space (handed over by tracker_flush()), unless its process ever reaped by a call;
 * else at its iocb's next submit, its context's io_destroy or its process's end, unless a call reaps it first.
 * False when no request in flight is its (yet). */
bool aio_requests_ring_event(struct tracker *t, uint32_t pid, uint64_t ctx, const struct io_event *ev, bool reaped,
                             uint64_t time);

/* What a call's record could not hold, from the capture's records of their own after it (CAPTURE_MORE_MAGIC): its
 * iocbs past the record's (cbs), submitted as its own were, or the io_events (evs) reaped, in place of the counts
 * of them its record left as not tracked.  call: the call they are of (pid, tid, context, times). */
void aio_requests_more(struct tracker *t, const struct aio_call *call, struct iocb_info *cbs,
                       struct event_info *evs, size_t n, uint64_t generation);
