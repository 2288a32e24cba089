/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How fast the daemon's own work goes, without the kernel and without root: records recorded once by
 * `aiotraced --dump FILE` are replayed through the engine (merge, decode, capture, requests, summaries) and one
 * output format at a time, on one core, as fast as they go.  CPU time of the replay only (not the loading).
 *   bench-replay DUMP [SECONDS_PER_FORMAT]      (0 seconds: the dump once through, for REPLAY_OUTPUT;
 *                                               top_srcdir in the environment: the formats of tests/fixtures;
 *                                               REPLAY_FORMAT=json, text, ...: that format alone;
 *                                               REPLAY_OUTPUT=FILE: what it wrote, to compare two builds
 *                                               (the timing then includes writing it);
 *                                               REPLAY_PROC_ROOT=DIR: DIR/PID/fd/N links standing for /proc,
 *                                               so that requests carry their paths as they did live;
 *                                               REPLAY_FILES=1: file summaries too (the 5 busiest);
 *                                               REPLAY_CAPTURED=1: as the daemon runs with the capture
 *                                               (paths by the files' identities, from the dump's own path
 *                                               records; no index of the rings before each drain);
 *                                               REPLAY_RINGS=N: the records dealt over N rings, one to each
 *                                               in turn, as a host of N CPUs whose threads move at every
 *                                               call would write them: the merge's worst case)
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump.h"
#include "engine.h"
#include "format_journal.h"
#include "format_json.h"
#include "format_text.h"
#include "ringbuf.h"

/* The daemon's default ring (ring_pages = 512): it drains records the kernel has just written, so they are where
 * a ring of this size keeps them (in the cache), not in a buffer so large that every header misses. */
#define RING_BYTES (512u * 4096u)

enum replay_format { FMT_NONE, FMT_TEXT, FMT_JSON, FMT_JSON_MESSAGE, FMT_JOURNAL, _FMT_MAX };
static const char *const format_names[_FMT_MAX] = { "engine only", "text", "json", "json+message", "journal fields" };

static struct outbuf out, text;
static FILE *output;
static enum replay_format format;
static uint64_t entries; /* the records the output carries: a call's, a request's, a summary's */

static void collect(void *userdata, const struct entry *e) {
        entries++;
        switch (format) {
        case FMT_TEXT:
                format_text(&out, e, 256);
                break;
        case FMT_JSON:
        case FMT_JSON_MESSAGE: {
                const struct line_format f = { .format = OUTPUT_JSON, .json_message = format == FMT_JSON_MESSAGE,
                                               .max_iocbs_per_call = 256 };
                format_json(&out, &text, e, &f);
                break;
        }
        case FMT_JOURNAL:
                format_journal(&out, e, 256);
                break;
        default:
                break;
        }
        if (out.len > (1u << 20)) {
                if (output)
                        fwrite(out.data, 1, out.len, output);
                outbuf_reset(&out);
        }
}

static double cpu_seconds(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The next RING_BYTES of the dump's records, dealt over the rings from their starts; past the dump's end it
 * begins again, later in time by span (span 0: it stops there).  Returns how many records. */
static size_t fill(struct fake_ring *rings, size_t n_rings, const uint8_t *dump, size_t len, size_t *pos,
                   uint64_t *shift, uint64_t span) {
        size_t at[n_rings], total = 0, records = 0;
        memset(at, 0, sizeof(at));
        for (;; records++) {
                if (*pos >= len && span == 0)
                        break;
                if (*pos >= len) {
                        *pos = 0;
                        *shift += span;
                }
                struct perf_event_header h;
                memcpy(&h, dump + *pos, sizeof(h));
                size_t i = records % n_rings;
                if (total + h.size > RING_BYTES || at[i] + h.size > rings[i].data_size)
                        break;
                uint8_t *rec = rings[i].base + FAKE_PAGE + at[i];
                memcpy(rec, dump + *pos, h.size);
                if (h.type == PERF_RECORD_SAMPLE) {
                        uint64_t t;
                        memcpy(&t, rec + 24, 8);
                        t += *shift;
                        memcpy(rec + 24, &t, 8);
                }
                at[i] += h.size;
                total += h.size;
                *pos += h.size;
        }
        for (size_t i = 0; i < n_rings; i++) {
                fake_meta(&rings[i])->data_tail = 0;
                fake_meta(&rings[i])->data_head = at[i];
        }
        return records;
}

/* Each ring as large as its share of a fill, twice over (shares are uneven), a power of two. */
static size_t ring_size_for(size_t n_rings) {
        size_t size = 4 * FAKE_PAGE;
        while (size < RING_BYTES && size < 2 * RING_BYTES / n_rings)
                size *= 2;
        return size;
}

static int init_rings(struct ring *rings, struct fake_ring *fakes, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (ring_init(&rings[i], fakes[i].base, FAKE_PAGE, fakes[i].data_size, (int) i) < 0)
                        return -1;
        return 0;
}

static void done_rings(struct ring *rings, size_t n) {
        for (size_t i = 0; i < n; i++)
                ring_done(&rings[i]);
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: bench-replay DUMP [SECONDS_PER_FORMAT]\n");
                return 2;
        }
        double seconds = argc > 2 ? strtod(argv[2], NULL) : 2.0;
        const char *src = getenv("top_srcdir");
        char dir[4096], error[512];
        snprintf(dir, sizeof(dir), "%s/tests/fixtures/tracefs", src ? src : ".");
        struct event_table *t = NULL;
        if (event_table_load(dir, EVENTS_FORK | EVENTS_EXEC, &t, error, sizeof(error)) < 0) {
                fprintf(stderr, "bench-replay: %s\n", error);
                return 1;
        }
        uint8_t *dump;
        size_t len = 0, n_records = 0;
        int r = dump_load(argv[1], t, &dump, &len, &n_records);
        if (r < 0 || len == 0) {
                fprintf(stderr, "bench-replay: %s: %s\n", argv[1], r < 0 ? strerror(-r) : "no records");
                return 1;
        }
        uint64_t first = UINT64_MAX, last = 0;
        for (size_t off = 0; off < len;) {
                const struct perf_event_header *h = (const void *) (dump + off);
                uint64_t time;
                if (record_time(h, &time)) {
                        first = time < first ? time : first;
                        last = time > last ? time : last;
                }
                off += h->size;
        }
        bool once = seconds <= 0;
        uint64_t span = once ? 0 : last - first + 1000000;
        printf("bench-replay: %s: %zu records (%.1f MiB), replayed for %.1f s of CPU per format\n", argv[1],
               n_records, (double) len / (1 << 20), seconds);

        const char *rings_env = getenv("REPLAY_RINGS");
        size_t n_rings = rings_env ? strtoul(rings_env, NULL, 10) : 1;
        if (n_rings < 1 || n_rings > 4096) {
                fprintf(stderr, "bench-replay: REPLAY_RINGS=%s: 1 to 4096\n", rings_env);
                return 2;
        }
        size_t ring_size = ring_size_for(n_rings);
        struct fake_ring *fakes = calloc(n_rings, sizeof(*fakes));
        struct ring *rings = calloc(n_rings, sizeof(*rings));
        if (!fakes || !rings)
                return 1;
        for (size_t i = 0; i < n_rings; i++)
                fake_ring_init(&fakes[i], ring_size, 0);
        if (n_rings > 1)
                printf("  over %zu rings of %zu KiB\n", n_rings, ring_size / 1024);
        const char *only = getenv("REPLAY_FORMAT"); /* one format alone, for a profiler */
        const char *output_path = getenv("REPLAY_OUTPUT");
        const char *proc_root = getenv("REPLAY_PROC_ROOT");
        if (output_path && !(output = fopen(output_path, "we"))) {
                fprintf(stderr, "bench-replay: %s: %m\n", output_path);
                return 1;
        }
        for (format = 0; format < _FMT_MAX; format++) {
                if (only && strcmp(only, format_names[format]) != 0)
                        continue;
                struct engine e;
                struct engine_options opt = {
                        .max_iocbs_per_call = 256, .max_inflight = 65536, .max_inflight_per_process = 65536,
                        .records = RECORD_SYSCALLS | RECORD_REQUESTS | RECORD_SUMMARY,
                        .summary_interval_ns = 1000000000ull, .read_memory = false,
                        .summary_by = getenv("REPLAY_FILES") ? SUMMARY_BY_PROCESS | SUMMARY_BY_FILE : SUMMARY_BY_PROCESS,
                        .summary_files = 5,
                        .captured = getenv("REPLAY_CAPTURED") != NULL,
                        .proc_root = proc_root ? proc_root : "/nonexistent",
                };
                struct engine_callbacks cb = { .emit = collect };
                uint64_t shift = 0, records = 0;
                size_t pos = 0;
                double used = 0;
                entries = 0;
                if (init_rings(rings, fakes, n_rings) < 0 || engine_init(&e, rings, n_rings, t, &opt, &cb) < 0)
                        return 1;
                while (once ? pos < len : used < seconds) {
                        done_rings(rings, n_rings);
                        size_t n = fill(fakes, n_rings, dump, len, &pos, &shift, span);
                        if (init_rings(rings, fakes, n_rings) < 0)
                                return 1;
                        double t0 = cpu_seconds();
                        engine_drain(&e, UINT64_MAX);
                        used += cpu_seconds() - t0;
                        records += n;
                }
                if (once) /* the summaries of what is still going on, as at the daemon's stop */
                        engine_finish(&e, e.processed_up_to);
                printf("  %-15s %10.0f output records/s %10.0f calls/s %10.0f ring records/s   (%" PRIu64
                       " output records, %" PRIu64 " calls, %" PRIu64 " ring records, %.2f s)\n",
                       format_names[format], (double) entries / used, (double) e.stats.calls / used,
                       (double) records / used, entries, e.stats.calls, records, used);
                engine_done(&e);
                done_rings(rings, n_rings);
                if (output)
                        fwrite(out.data, 1, out.len, output);
                outbuf_reset(&out);
        }
        if (output && fclose(output) != 0) {
                fprintf(stderr, "bench-replay: %s: %m\n", output_path);
                return 1;
        }
        for (size_t i = 0; i < n_rings; i++)
                fake_ring_free(&fakes[i]);
        free(fakes);
        free(rings);
        free(dump);
        outbuf_free(&out);
        outbuf_free(&text);
        event_table_free(t);
        return 0;
}
