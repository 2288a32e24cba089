/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "outbuf.h"

/* The journal's schema (doc/journal-fields.md): one entry per call, loss, drop or daemon event. */
#define MESSAGE_ID_CALL "5e7d0b7a6c2f4b1e9a3d8c41f0b2a6e1"
#define MESSAGE_ID_LOST "9c1f3e2a7b5d4c8e8f0a1b2c3d4e5f61"
#define MESSAGE_ID_DROPPED "2b8e4f6a1c3d4e5f9a0b7c6d5e4f3a21"
#define MESSAGE_ID_STARTED "7a3c5e1f9b2d4a6c8e0f1a3b5c7d9e02"
#define MESSAGE_ID_STOPPED "4f6e8d0c2b4a4968a7b6c5d4e3f2a103"
#define MESSAGE_ID_RELOADED "1d3f5b7a9c2e4f60b8d6a4c2e0f8b604"
#define MESSAGE_ID_INFO "8e0a2c4e6f1b4d3a9c7e5a3c1e9f7b05"
#define MESSAGE_ID_REQUEST "3c9e1a7f5b2d4e8a9f6c0b1d2e3a4f52"
#define MESSAGE_ID_SUMMARY "6b2d8f4a0c1e4937b5a6d7e8f9c0a163"

/* An entry as journal fields, appended to b as a sequence of { uint32_t length; "NAME=value" } with
 * nothing between them; the text of MESSAGE is the text layout's, without its last newline.  Returns the
 * number of fields. */
unsigned format_journal(struct outbuf *b, const struct entry *e, unsigned max_iocbs_per_call);

/* The entry saying how many were dropped, in the same encoding. */
unsigned format_journal_dropped(struct outbuf *b, uint64_t dropped, const char *why);
