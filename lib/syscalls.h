/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "capture.h" /* enum aio_syscall: the capture numbers them as we do */
#include "field_name.h"
#include "util.h"

enum syscall_arg_type {
        ARG_PTR, /* an address or a context: hex */
        ARG_S64,
        ARG_U32, /* an int the kernel takes as unsigned: the tracepoint's 64 bits cut to 32 */
};

/* One argument of a syscall, in order: the tracepoint's field, and how every format writes it (the text layout
 * all of them, in the call's parentheses). */
struct syscall_arg {
        const char *tp_field;
        struct field_name name; /* the journal's (when in_journal) and JSON's */
        enum syscall_arg_type type;
        bool in_journal;
};

/* What a call read of the caller's memory beyond its arguments and its iocbs or events. */
enum syscall_aux {
        AUX_NONE,
        AUX_CTX,     /* io_setup: the context the kernel wrote to *ctxp */
        AUX_TIMEOUT, /* io_getevents, io_pgetevents: the timespec the timeout argument names */
};

/* How the formats write an aux value: its fields when it could be read, its state's when not, the text's label. */
struct syscall_aux_desc {
        struct field_name name;
        struct field_name state; /* JSON's "ctx_state": why it could not be read (the journal has none) */
        const char *label;      /* "ctx" */
};

/* The one table of the AIO syscalls: adding an argument to one is a line here. */
struct syscall_desc {
        struct word name;
        unsigned n_args;
        struct syscall_arg args[AIO_ARGS_MAX];
        enum syscall_aux aux;
        unsigned aux_arg; /* the pointer argument the aux value is read from */
};

_const_ const struct syscall_desc *syscall_desc(enum aio_syscall s);
_const_ const struct syscall_aux_desc *syscall_aux_desc(enum syscall_aux a);
_const_ const char *aio_syscall_name(enum aio_syscall s);
const struct word *aio_syscall_word(enum aio_syscall s);
