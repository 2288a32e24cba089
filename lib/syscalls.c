/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "syscalls.h"

#define ARG(field, upper, lower, type, journal) { field, FIELD_NAME_INIT_LAID_OUT(upper, lower), type, journal }

static const struct syscall_desc syscalls[_AIO_SYSCALL_MAX] = {
        [AIO_IO_SETUP] = { WORD("io_setup"), 2,
                           { ARG("nr_events", "NR_EVENTS", "nr_events", ARG_U32, true),
                             ARG("ctxp", "CTXP", "ctxp", ARG_PTR, false) },
                           AUX_CTX, 1 },
        [AIO_IO_DESTROY] = { WORD("io_destroy"), 1, { ARG("ctx", "CTX", "ctx", ARG_PTR, true) }, AUX_NONE, 0 },
        [AIO_IO_SUBMIT] = { WORD("io_submit"), 3,
                            { ARG("ctx_id", "CTX", "ctx", ARG_PTR, true), ARG("nr", "NR", "nr", ARG_S64, true),
                              ARG("iocbpp", "IOCBPP", "iocbpp", ARG_PTR, true) },
                            AUX_NONE, 0 },
        [AIO_IO_CANCEL] = { WORD("io_cancel"), 3,
                            { ARG("ctx_id", "CTX", "ctx", ARG_PTR, true), ARG("iocb", "IOCB", "iocb", ARG_PTR, true),
                              ARG("result", "RESULT", "result_addr", ARG_PTR, false) },
                            AUX_NONE, 0 },
        [AIO_IO_GETEVENTS] = { WORD("io_getevents"), 5,
                               { ARG("ctx_id", "CTX", "ctx", ARG_PTR, true),
                                 ARG("min_nr", "MIN_NR", "min_nr", ARG_S64, true),
                                 ARG("nr", "NR", "nr", ARG_S64, true),
                                 ARG("events", "EVENTS", "events_addr", ARG_PTR, true),
                                 ARG("timeout", "TIMEOUT", "timeout_addr", ARG_PTR, false) },
                               AUX_TIMEOUT, 4 },
        [AIO_IO_PGETEVENTS] = { WORD("io_pgetevents"), 6,
                                { ARG("ctx_id", "CTX", "ctx", ARG_PTR, true),
                                  ARG("min_nr", "MIN_NR", "min_nr", ARG_S64, true),
                                  ARG("nr", "NR", "nr", ARG_S64, true),
                                  ARG("events", "EVENTS", "events_addr", ARG_PTR, true),
                                  ARG("timeout", "TIMEOUT", "timeout_addr", ARG_PTR, false),
                                  ARG("usig", "USIG", "usig_addr", ARG_PTR, false) },
                                AUX_TIMEOUT, 4 },
        [AIO_IO_URING_SETUP] = { WORD("io_uring_setup"), 2,
                                 { ARG("entries", "ENTRIES", "entries", ARG_U32, true),
                                   ARG("params", "PARAMS", "params", ARG_PTR, false) },
                                 AUX_NONE, 0 },
        [AIO_IO_URING_ENTER] = { WORD("io_uring_enter"), 6,
                                 { ARG("fd", "RING_FD", "ring_fd", ARG_U32, true),
                                   ARG("to_submit", "TO_SUBMIT", "to_submit", ARG_U32, true),
                                   ARG("min_complete", "MIN_COMPLETE", "min_complete", ARG_U32, true),
                                   ARG("flags", "ENTER_FLAGS", "enter_flags", ARG_PTR, true),
                                   ARG("argp", "ARGP", "argp", ARG_PTR, false),
                                   ARG("argsz", "ARGSZ", "argsz", ARG_S64, false) },
                                 AUX_NONE, 0 },
        [AIO_IO_URING_REGISTER] = { WORD("io_uring_register"), 4,
                                    { ARG("fd", "RING_FD", "ring_fd", ARG_U32, true),
                                      ARG("opcode", "REGISTER_OP", "register_op", ARG_U32, true),
                                      ARG("arg", "ARG", "arg", ARG_PTR, false),
                                      ARG("nr_args", "NR_ARGS", "nr_args", ARG_U32, true) },
                                    AUX_NONE, 0 },
};

static const struct syscall_desc unknown_syscall = { WORD("?"), 0, {}, AUX_NONE, 0 };

static const struct syscall_aux_desc aux_descs[] = {
        [AUX_NONE] = { FIELD_NAME_INIT_LAID_OUT("NONE", "none"), FIELD_NAME_INIT_LAID_OUT("NONE_STATE", "none_state"), "none" },
        [AUX_CTX] = { FIELD_NAME_INIT_LAID_OUT("CTX", "ctx"), FIELD_NAME_INIT_LAID_OUT("CTX_STATE", "ctx_state"), "ctx" },
        [AUX_TIMEOUT] = { FIELD_NAME_INIT_LAID_OUT("TIMEOUT_NSEC", "timeout_nsec"), FIELD_NAME_INIT_LAID_OUT("TIMEOUT_STATE", "timeout_state"),
                          "timeout" },
};

const struct syscall_aux_desc *syscall_aux_desc(enum syscall_aux a) {
        return &aux_descs[a <= AUX_TIMEOUT ? a : AUX_NONE];
}

const struct syscall_desc *syscall_desc(enum aio_syscall s) {
        return s < _AIO_SYSCALL_MAX ? &syscalls[s] : &unknown_syscall;
}

const struct word *aio_syscall_word(enum aio_syscall s) {
        return &syscall_desc(s)->name;
}

const char *aio_syscall_name(enum aio_syscall s) {
        return aio_syscall_word(s)->s;
}
