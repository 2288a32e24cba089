/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "outbuf.h"

/* The journal's MESSAGE_IDs (made with systemd-id128 new; explained in systemd/aiotraced.catalog, listed in the
 * README's journal fields): one per kind of entry. */
#define MESSAGE_ID_CALL "b0f6e50e82354737904d93ee3e91c53e"
#define MESSAGE_ID_LOST "9b685a297a104ca3aa8448b63f089a18"
#define MESSAGE_ID_DROPPED "17a5747dddd649c89ea17cba761c0b6a"
#define MESSAGE_ID_STARTED "61b2eff4723e4dc08f4bf5aaaf9f5d30"
#define MESSAGE_ID_STOPPED "8c47d1cf7b484c958fac3d196e1b1bd7"
#define MESSAGE_ID_RELOADED "3cd7459aaa3647c88c228785cdac866c"
#define MESSAGE_ID_INFO "372fea0230944b24afa420c5d20158c9"
#define MESSAGE_ID_REQUEST "daf67091c6974a4084e966bba1b19746"
#define MESSAGE_ID_SUMMARY "adcec88b8d6f4f368b3ac88e7f33c99f"
#define MESSAGE_ID_FILE_SUMMARY "9dd8944c10744439a8559486c73acdda"

/* An entry as journal fields, appended to b as a sequence of { uint32_t length; "NAME=value" } with
 * nothing between them; the text of MESSAGE is the text layout's, without its last newline.  Returns the
 * number of fields. */
unsigned format_journal(struct outbuf *b, const struct entry *e, unsigned max_iocbs_per_call);

/* The entry saying how many were dropped, in the same encoding. */
unsigned format_journal_dropped(struct outbuf *b, uint64_t dropped, const char *why);
