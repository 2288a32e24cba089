/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "entry.h"
#include "outbuf.h"

/* The human layout, a superset of what the SystemTap seed printed: one header line per call, then one line per
 * iocb or event.  Appends whole lines to b. */
void format_text(struct outbuf *b, const struct entry *e, unsigned max_iocbs_per_call);

/* The same text as a message field takes it: into text (emptied first); returns its length without the last
 * newline. */
size_t format_text_message(struct outbuf *text, const struct entry *e, unsigned max_iocbs_per_call);
