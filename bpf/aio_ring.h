/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An AIO context's completion ring in the process's memory: the completions reaped from it without io_getevents.
 * Part of bpf/capture.bpf.c, which includes it. */

/* Per context: where the next look starts (the ring's head at the last one), and whether io_getevents reaps
 * from it. */
struct ring_key {
        __u32 tgid;
        __u32 pad;
        __u64 ctx;
};

#define RING_NEXT_UNKNOWN 0xffffffffu /* no look yet: the first starts at head */

struct ring_state {
        __u32 next;
        __u32 by_call;
};

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_RINGS);
        __type(key, struct ring_key);
        __type(value, struct ring_state);
} ring_tails SEC(".maps");

/* The processes with a ring in ring_tails: what exit_group looks up before it walks that map. */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_RINGS);
        __type(key, __u32);
        __type(value, __u8);
} ring_owners SEC(".maps");

static __always_inline struct ring_state *ring_state_of(__u64 ctx, struct ring_key *key) {
        *key = (struct ring_key) { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32), .ctx = ctx };
        struct ring_state *v = bpf_map_lookup_elem(&ring_tails, key);
        if (v)
                return v;
        struct ring_state fresh = { .next = RING_NEXT_UNKNOWN };
        __u8 one = 1;
        bpf_map_update_elem(&ring_owners, &key->tgid, &one, BPF_ANY);
        bpf_map_update_elem(&ring_tails, key, &fresh, BPF_NOEXIST);
        return bpf_map_lookup_elem(&ring_tails, key);
}

/* io_getevents is about to reap from ctx's ring: a completion seen gone from it may be in that call's result,
 * not reaped by the program itself.  Marked before the call can take anything. */
static __always_inline void ring_reaped_by_call(__u64 ctx) {
        struct ring_key key;
        struct ring_state *v = ctx ? ring_state_of(ctx, &key) : 0;
        if (v)
                v->by_call = 1;
}

/* What of ctx's ring is new since the last look: from where that look's head was to the head now, less the
 * `own` last ones, which the io_getevents at hand returned itself.  The first look starts at head: what was
 * reaped before it is not known.  Returns the ring's state where there is something to take; with nothing, it
 * moves the state on to head. */
struct ring_window {
        struct ring_key key;
        __u32 nr;
        __u32 head;
        __u32 start;
        __u32 count;
};

static __always_inline struct ring_state *ring_window(__u64 ctx, __u32 own, struct ring_window *ret) {
        __u32 hdr[AIO_RING_HEADER / 4];
        if (!ctx || bpf_probe_read_user(hdr, sizeof(hdr), (const void *) ctx) != 0)
                return 0;
        __u32 nr = hdr[1], head = hdr[2], tail = hdr[3];
        if (hdr[4] != AIO_RING_MAGIC || hdr[7] != AIO_RING_HEADER || nr == 0 || head >= nr || tail >= nr)
                return 0;
        struct ring_state *v = ring_state_of(ctx, &ret->key);
        if (!v)
                return 0;
        __u32 start = v->next < nr ? v->next : head;
        __u32 count = head >= start ? head - start : nr - start + head;
        count = count > own ? count - own : 0;
        if (count == 0) {
                if (v->next != head)
                        v->next = head;
                return 0;
        }
        ret->nr = nr;
        ret->head = head;
        ret->start = start;
        ret->count = count;
        return v;
}

/* The completions reaped from ctx's ring since the last look, by the program itself or by io_getevents (see
 * CAPTURE_F_RING).  Those still waiting in the ring are taken once they are reaped. */
static __always_inline void capture_ring(struct scratch *s, __u64 ctx, __u32 own) {
        struct ring_window rw;
        struct ring_state *v = ring_window(ctx, own, &rw);
        if (!v)
                return;
        __u32 nr = rw.nr, head = rw.head, start = rw.start, count = rw.count;
        int capped = count > CAPTURE_RING_MAX;
        if (capped)
                count = CAPTURE_RING_MAX;
        __u32 first = nr - start < count ? nr - start : count;
        if (put_segment(s, ctx, AIO_RING_HEADER) < 0)
                return;
        s->b.flags |= CAPTURE_F_RING | (v->by_call ? CAPTURE_F_RING_BY_CALL : 0);
        /* A ring page the process has not touched yet is not mapped for it, and the program cannot fault it in:
         * what could not be read is read at a later look. */
        if (put_events(s, ctx + AIO_RING_HEADER + (__u64) start * IO_EVENT_SIZE, first) < 0)
                return;
        __u32 taken = first;
        if (count > first && put_events(s, ctx + AIO_RING_HEADER, count - first) == 0)
                taken = count;
        __u32 next = start + taken;
        if (next >= nr)
                next -= nr;
        /* all taken: on to head (past this call's own, which are in its record already) */
        v->next = taken == count && !capped ? head : next;
}
