/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The ops of each interface, one row each, read by the capture (bpf/capture.bpf.c) and by user space
 * (lib/aio_decode.c, lib/uring.c): adding an op is adding its row.  Each table is an X macro: a user defines
 * X(...) to take what it needs of a row. */

/* AIO's (IOCB_CMD_*): X(opcode, name, dir, vectored)
 *   dir: the way its data goes (READ, WRITE, NO_DATA); vectored: its buf is an iovec array of nbytes entries. */
#define AIO_OPS(X)                         \
        X(0, "pread", READ, 0)                            \
        X(1, "pwrite", WRITE, 0)                          \
        X(2, "fsync", NO_DATA, 0)                         \
        X(3, "fdsync", NO_DATA, 0)                        \
        X(5, "poll", NO_DATA, 0)                          \
        X(6, "noop", NO_DATA, 0)                          \
        X(7, "preadv", READ, 1)                           \
        X(8, "pwritev", WRITE, 1)
#define AIO_OPCODE_MAX 8 /* the largest opcode of the table */

/* io_uring's (IORING_OP_*): X(opcode, name, aio, layout, file, vectored)
 *   name: the kernel's (io_uring_get_opcode(), as its tracepoints print them), in lower case;
 *   aio: the AIO opcode that means the same, or -1 (then the request's opcode is URING_OPCODE_BASE + opcode; an
 *        fsync with IORING_FSYNC_DATASYNC is fdsync);
 *   layout: where the op's prep keeps the offset, length and flags the capture reads: RW (struct io_rw), SYNC
 *        (struct io_sync), NONE (not read);
 *   file: the op works on the SQE's fd (the kernel's needs_file);
 *   vectored: its length counts iovecs, not bytes. */
#define URING_OPS(X)                                      \
        X(0, "nop", 6, NONE, 0, 0)                        \
        X(1, "readv", 7, RW, 1, 1)                        \
        X(2, "writev", 8, RW, 1, 1)                       \
        X(3, "fsync", 2, SYNC, 1, 0)                      \
        X(4, "read_fixed", 0, RW, 1, 0)                   \
        X(5, "write_fixed", 1, RW, 1, 0)                  \
        X(6, "poll_add", 5, NONE, 1, 0)                   \
        X(7, "poll_remove", -1, NONE, 0, 0)               \
        X(8, "sync_file_range", -1, SYNC, 1, 0)           \
        X(9, "sendmsg", -1, NONE, 1, 0)                   \
        X(10, "recvmsg", -1, NONE, 1, 0)                  \
        X(11, "timeout", -1, NONE, 0, 0)                  \
        X(12, "timeout_remove", -1, NONE, 0, 0)           \
        X(13, "accept", -1, NONE, 1, 0)                   \
        X(14, "async_cancel", -1, NONE, 0, 0)             \
        X(15, "link_timeout", -1, NONE, 0, 0)             \
        X(16, "connect", -1, NONE, 1, 0)                  \
        X(17, "fallocate", -1, SYNC, 1, 0)                \
        X(18, "openat", -1, NONE, 0, 0)                   \
        X(19, "close", -1, NONE, 0, 0)                    \
        X(20, "files_update", -1, NONE, 0, 0)             \
        X(21, "statx", -1, NONE, 0, 0)                    \
        X(22, "read", 0, RW, 1, 0)                        \
        X(23, "write", 1, RW, 1, 0)                       \
        X(24, "fadvise", -1, NONE, 1, 0)                  \
        X(25, "madvise", -1, NONE, 0, 0)                  \
        X(26, "send", -1, NONE, 1, 0)                     \
        X(27, "recv", -1, NONE, 1, 0)                     \
        X(28, "openat2", -1, NONE, 0, 0)                  \
        X(29, "epoll", -1, NONE, 1, 0)                    \
        X(30, "splice", -1, NONE, 1, 0)                   \
        X(31, "provide_buffers", -1, NONE, 0, 0)          \
        X(32, "remove_buffers", -1, NONE, 0, 0)           \
        X(33, "tee", -1, NONE, 1, 0)                      \
        X(34, "shutdown", -1, NONE, 1, 0)                 \
        X(35, "renameat", -1, NONE, 0, 0)                 \
        X(36, "unlinkat", -1, NONE, 0, 0)                 \
        X(37, "mkdirat", -1, NONE, 0, 0)                  \
        X(38, "symlinkat", -1, NONE, 0, 0)                \
        X(39, "linkat", -1, NONE, 0, 0)                   \
        X(40, "msg_ring", -1, NONE, 1, 0)                 \
        X(41, "fsetxattr", -1, NONE, 1, 0)                \
        X(42, "setxattr", -1, NONE, 0, 0)                 \
        X(43, "fgetxattr", -1, NONE, 1, 0)                \
        X(44, "getxattr", -1, NONE, 0, 0)                 \
        X(45, "socket", -1, NONE, 0, 0)                   \
        X(46, "uring_cmd", -1, NONE, 1, 0)                \
        X(47, "send_zc", -1, NONE, 1, 0)                  \
        X(48, "sendmsg_zc", -1, NONE, 1, 0)               \
        X(49, "read_multishot", -1, NONE, 1, 0)           \
        X(50, "waitid", -1, NONE, 0, 0)                   \
        X(51, "futex_wait", -1, NONE, 0, 0)               \
        X(52, "futex_wake", -1, NONE, 0, 0)               \
        X(53, "futex_waitv", -1, NONE, 0, 0)              \
        X(54, "fixed_fd_install", -1, NONE, 1, 0)         \
        X(55, "ftruncate", -1, NONE, 1, 0)                \
        X(56, "bind", -1, NONE, 1, 0)                     \
        X(57, "listen", -1, NONE, 1, 0)                   \
        X(58, "recv_zc", -1, NONE, 1, 0)                  \
        X(59, "epoll_wait", -1, NONE, 1, 0)               \
        X(60, "readv_fixed", -1, NONE, 1, 1)              \
        X(61, "writev_fixed", -1, NONE, 1, 1)             \
        X(62, "pipe", -1, NONE, 0, 0)
#define URING_OP_COUNT 63 /* the opcodes of the table: 0 to this, less one */

enum uring_op_layout {
        URING_LAYOUT_NONE,
        URING_LAYOUT_RW,   /* struct io_rw: kiocb.ki_pos, addr, len, flags (RWF_*) */
        URING_LAYOUT_SYNC, /* struct io_sync: off, len, flags */
};
#define IORING_FSYNC_DATASYNC 1u
