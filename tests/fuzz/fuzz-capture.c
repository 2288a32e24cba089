/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Any bytes as a captured record, then regions asked of it as the handlers ask. */
#include <string.h>

#include "capture_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct capture_view v;
        if (size < 8 || capture_view_parse(data + 8, size - 8, CAPTURE_EXIT_RAW_SIZE, &v) < 0)
                return 0;
        /* The first 8 bytes choose the regions: an address base and lengths. */
        uint64_t base;
        memcpy(&base, data, 8);
        uint8_t buf[8][128];
        struct remote_chunk c[8];
        for (int i = 0; i < 8; i++)
                c[i] = (struct remote_chunk) { .addr = base + (uint64_t) i * 8 * data[i % size], .buf = buf[i],
                                               .len = 1 + (data[(i + 3) % size] & 127) };
        capture_view_fill(&v, c, 8);
        return 0;
}
