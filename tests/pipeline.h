/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the tests that run the engine on fake rings share: the text it emits, and the events by name. */
#pragma once

#include <string.h>

#include "engine.h"
#include "format_text.h"

static struct outbuf out;

static inline void collect(void *userdata, const struct entry *e) {
        format_text(&out, e, 256);
}

static inline const struct event_desc *find(const struct event_table *t, const char *name) {
        for (size_t i = 0; i < t->n_events; i++)
                if (strcmp(t->events[i].name, name) == 0)
                        return &t->events[i];
        return NULL;
}
