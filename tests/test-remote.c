/* SPDX-License-Identifier: GPL-2.0-or-later */
/* process_vm_readv against a real child: readable memory, a guard page, and a process that has exited. */
#include "remote.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

int main(void) {
        CASE("a child's memory, a guard page, a process gone");
        long page = sysconf(_SC_PAGESIZE);
        /* Mapped before the fork, so the child has the same layout: page 0 readable, page 1 unmapped. */
        uint8_t *m = mmap(NULL, 2 * (size_t) page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || munmap(m + page, (size_t) page) < 0)
                return 99;
        for (long i = 0; i < page; i++)
                m[i] = (uint8_t) (i * 7);
        int ready[2];
        if (pipe(ready) < 0)
                return 99;
        pid_t child = fork();
        if (child == 0) {
                /* change the memory so the parent provably reads the child's copy */
                for (long i = 0; i < page; i++)
                        m[i] = (uint8_t) (i * 7 + 1);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        char c;
        if (read(ready[0], &c, 1) != 1)
                return 99;

        uint8_t buf[64];
        int r = remote_read(child, (uint64_t) (uintptr_t) (m + 100), buf, sizeof(buf));
        if (r == -EPERM) {
                printf("SKIP: process_vm_readv of a child is not permitted here\n");
                kill(child, SIGKILL);
                return 77;
        }
        CHECK_EQ(r, 0);
        CHECK_EQ(buf[0], (uint8_t) (100 * 7 + 1));
        CHECK_EQ(buf[63], (uint8_t) (163 * 7 + 1));

        /* Half on the mapped page, half on the guard page: a short read is a failure, not data. */
        CHECK_EQ(remote_read(child, (uint64_t) (uintptr_t) (m + page - 32), buf, sizeof(buf)), -EFAULT);
        CHECK_EQ(remote_read(child, (uint64_t) (uintptr_t) (m + page), buf, 8), -EFAULT);
        CHECK_EQ(remote_read(child, UINT64_MAX - 4, buf, 8), -EFAULT);

        /* Batched: the chunk on the guard page fails alone; those around it are read. */
        uint8_t a[8], b[8], d[8], e[8];
        struct remote_chunk chunks[] = {
                { .addr = (uint64_t) (uintptr_t) m, .buf = a, .len = 8 },
                { .addr = (uint64_t) (uintptr_t) (m + page + 16), .buf = b, .len = 8 },
                { .addr = (uint64_t) (uintptr_t) (m + 8), .buf = d, .len = 8 },
                { .addr = 0, .buf = e, .len = 8 },
        };
        unsigned calls = remote_read_chunks(child, chunks, 4);
        CHECK(chunks[0].state == MEM_OK && a[1] == 8);
        CHECK(chunks[1].state == MEM_FAULT);
        CHECK(chunks[2].state == MEM_OK && d[0] == (uint8_t) (8 * 7 + 1));
        CHECK(chunks[3].state == MEM_FAULT);
        CHECK(calls >= 2 && calls <= 5);

        /* All good: one call for everything. */
        struct remote_chunk good[] = {
                { .addr = (uint64_t) (uintptr_t) m, .buf = a, .len = 8 },
                { .addr = (uint64_t) (uintptr_t) (m + 64), .buf = b, .len = 8 },
        };
        CHECK_EQ(remote_read_chunks(child, good, 2), 1);
        CHECK(good[0].state == MEM_OK && good[1].state == MEM_OK);

        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        CHECK_EQ(remote_read(child, (uint64_t) (uintptr_t) m, buf, 8), -ESRCH);
        struct remote_chunk gone[] = { { .addr = (uint64_t) (uintptr_t) m, .buf = a, .len = 8 },
                                       { .addr = (uint64_t) (uintptr_t) m, .buf = b, .len = 8 } };
        remote_read_chunks(child, gone, 2);
        CHECK(gone[0].state == MEM_GONE && gone[1].state == MEM_GONE);
        CHECK_STR(mem_state_name(MEM_GONE), "process gone");
        CHECK(mem_state_from_errno(EIO) == MEM_FAULT);
        CHECK(mem_state_from_errno(EPERM) == MEM_DENIED);
        return test_result("test-remote");
}
