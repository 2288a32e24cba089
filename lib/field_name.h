/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A field's name as each structured format writes it, both spelled out at compile time: the journal's
 * AIO_<NAME>= and JSON's ,"<name>": (the same name in lower case, or another where JSON needs the plain one
 * for something else).  Each sits in FIELD_NAME_MAX bytes, padded, so that writing one is a copy of a fixed
 * size (no call, no string instruction), then the length. */
#define FIELD_NAME_MAX 32
struct field_name {
        char journal[FIELD_NAME_MAX];
        char json[FIELD_NAME_MAX];
        uint8_t journal_len;
        uint8_t json_len;
        /* The text layout writes the field in its place in the line, or leaves it out, by hand.  A field that
         * does not say so is written by the field list itself at the end of its text line, as ", name =
         * value": a field added to a list shows in every format at once. */
        bool text_laid_out;
};
#define FIELD_NAME_INIT_TEXT(upper, lower, laid_out)                                                         \
        { "AIO_" upper "=", ",\"" lower "\":", sizeof("AIO_" upper "=") - 1, sizeof(",\"" lower "\":") - 1,   \
          laid_out }
/* a table's name: the text writes a table's values from the table itself */
#define FIELD_NAME_INIT_LAID_OUT(upper, lower) FIELD_NAME_INIT_TEXT(upper, lower, true)
#define FIELD_NAME_TEXT(upper, lower, laid_out)                                                              \
        ({                                                                                                   \
                _Static_assert(sizeof("AIO_" upper "=") < FIELD_NAME_MAX, "field name too long");            \
                static const struct field_name _field_name = FIELD_NAME_INIT_TEXT(upper, lower, laid_out);   \
                &_field_name;                                                                                \
        })
#define FIELD_NAME(upper, lower) FIELD_NAME_TEXT(upper, lower, false)
#define FIELD_NAME_LAID_OUT(upper, lower) FIELD_NAME_TEXT(upper, lower, true)
