/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Any bytes as the contents of two CPU rings, through the whole engine (records, samples against the real
 * formats, pairing, captured records, requests, summaries) and every formatter; the traced memory is never
 * read. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "format_journal.h"
#include "format_json.h"
#include "format_text.h"

/* with the message: what the members are made of is formatted too */
static const struct line_format json_format = {
        .format = OUTPUT_JSON, .json_message = true, .max_iocbs_per_call = 256,
};
#include "../ringbuf.h"

static struct event_table *table;
static struct outbuf out, text;

static void collect(void *userdata, const struct entry *e) {
        format_text(&out, e, 256);
        format_json(&out, &text, e, &json_format);
        format_journal(&out, e, 256);
        if (out.len > (1u << 20))
                outbuf_reset(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!table) {
                char dir[4096], error[512];
                const char *src = getenv("FUZZ_FIXTURES");
                snprintf(dir, sizeof(dir), "%s", src ? src : "tests/fixtures/tracefs");
                if (event_table_load(dir, EVENTS_FORK | EVENTS_EXEC | EVENTS_URING, &table, error, sizeof(error)) < 0) {
                        fprintf(stderr, "%s\n", error);
                        abort();
                }
        }
        /* The first byte says where the data splits between the two rings. */
        size_t split = size ? (size_t) data[0] * size / 256 : 0;
        const uint8_t *part[2] = { data + (size ? 1 : 0), data + split };
        size_t len[2] = { split > 0 ? split - 1 : 0, size - split };
        struct fake_ring f[2];
        struct ring rings[2];
        for (int i = 0; i < 2; i++) {
                fake_ring_init(&f[i], 65536, 65536 - 64); /* records wrap the ring's end */
                if (len[i] > 65536)
                        len[i] = 65536;
                fake_ring_put(&f[i], part[i], len[i] & ~(size_t) 7);
                if (ring_init(&rings[i], f[i].base, FAKE_PAGE, 65536, i) < 0)
                        abort();
        }
        struct engine e;
        struct engine_options opt = { .max_iocbs_per_call = 16, .max_inflight = 64, .read_memory = false,
                                      .replaced_sets = true, .proc_root = "/nonexistent",
                                      .records = RECORD_SYSCALLS | RECORD_REQUESTS | RECORD_SUMMARY,
                                      .summary_interval_ns = 1000 };
        struct engine_callbacks cb = { .emit = collect };
        if (engine_init(&e, rings, 2, table, &opt, &cb) == 0) {
                engine_drain(&e, UINT64_MAX);
                engine_account_lost(&e, 0, 1000);
                engine_finish(&e, UINT64_MAX / 2);
                engine_done(&e);
        }
        for (int i = 0; i < 2; i++) {
                ring_done(&rings[i]);
                fake_ring_free(&f[i]);
        }
        outbuf_reset(&out);
        return 0;
}
