/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "filter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"
#include "util.h"

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

static void put_or(struct outbuf *b) {
        if (b->len)
                outbuf_puts(b, " || ");
}

int filter_build(const struct config *c, const uint32_t *tids, size_t n_tids, const char *tid_field, int with_comm,
                 char **ret) {
        if (c->n_watch == 0) {
                *ret = NULL;
                return 0;
        }
        struct outbuf b = {};
        for (size_t i = 0; with_comm && i < c->n_watch; i++) {
                const struct watch *w = &c->watch[i];
                if (w->kind == WATCH_PID)
                        continue;
                put_or(&b);
                outbuf_puts(&b, w->kind == WATCH_COMM ? "comm == \"" : "comm ~ \"");
                outbuf_puts(&b, w->comm);
                outbuf_putc(&b, '"');
        }

        _cleanup_(freep) uint32_t *sorted = NULL;
        if (n_tids) {
                sorted = malloc(n_tids * sizeof(*sorted));
                if (!sorted) {
                        outbuf_free(&b);
                        return -ENOMEM;
                }
                memcpy(sorted, tids, n_tids * sizeof(*sorted));
                qsort(sorted, n_tids, sizeof(*sorted), cmp_u32);
        }
        for (size_t i = 0; i < n_tids;) {
                size_t j = i;
                while (j + 1 < n_tids && sorted[j + 1] <= sorted[j] + 1)
                        j++;
                put_or(&b);
                if (sorted[j] == sorted[i]) {
                        outbuf_puts(&b, tid_field);
                        outbuf_puts(&b, " == ");
                        outbuf_u64(&b, sorted[i]);
                } else {
                        outbuf_putc(&b, '(');
                        outbuf_puts(&b, tid_field);
                        outbuf_puts(&b, " >= ");
                        outbuf_u64(&b, sorted[i]);
                        outbuf_puts(&b, " && ");
                        outbuf_puts(&b, tid_field);
                        outbuf_puts(&b, " <= ");
                        outbuf_u64(&b, sorted[j]);
                        outbuf_putc(&b, ')');
                }
                i = j + 1;
        }
        if (b.len == 0)
                /* watched pids that are all gone: nothing may match, which is not the same as no filter */
                outbuf_puts(&b, "common_pid < 0");
        outbuf_putc(&b, 0);
        if (b.failed) {
                outbuf_free(&b);
                return -ENOMEM;
        }
        if (b.len > FILTER_MAX) {
                outbuf_free(&b);
                return -E2BIG;
        }
        *ret = b.data;
        return 0;
}
