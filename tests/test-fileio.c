/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small files read whole, writes made whole, write locks and who holds them, the limit on open files, the open files and resident
 * memory of the process, files looked up without waiting on their file system. */
#include "fileio.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

TEST(small_file_read_whole_or_cut) {
        char path[64], buf[8];
        snprintf(path, sizeof(path), "%s/small", test_dir);
        FILE *f = fopen(path, "we");
        CHECK(f && fputs("hello world\n", f) >= 0 && fclose(f) == 0);
        CHECK_EQ(read_small_file(path, buf, sizeof(buf)), 7);
        CHECK_STR(buf, "hello w");
        CHECK_EQ(read_small_file("/nonexistent/file", buf, sizeof(buf)), (uint64_t) -ENOENT);
        CHECK_EQ(read_small_file(path, buf, 0), (uint64_t) -EINVAL);
}

TEST(write_all_whole_or_says_why) {
        char path[64];
        snprintf(path, sizeof(path), "%s/written", test_dir);
        size_t size = 3u << 20, written = 0;
        char *data = malloc(size);
        CHECK(data != NULL);
        if (!data)
                return;
        for (size_t i = 0; i < size; i++)
                data[i] = (char) (i * 7);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        CHECK_EQ(write_all(fd, data, size, &written), 0);
        CHECK_EQ(written, size);
        close(fd);
        struct stat st;
        CHECK(stat(path, &st) == 0 && (size_t) st.st_size == size);
        fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
        CHECK_EQ(write_all(fd, data, size, &written), (uint64_t) -ENOSPC);
        CHECK_EQ(written, 0);
        close(fd);
        CHECK_EQ(write_all(-1, data, 1, &written), (uint64_t) -EBADF);
        free(data);
}

TEST(lock_held_by_another_process_is_named) {
        char path[64];
        snprintf(path, sizeof(path), "%s/locked", test_dir);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        int ready[2];
        CHECK(pipe2(ready, O_CLOEXEC) == 0);
        pid_t child = fork();
        if (child == 0) {
                pid_t none;
                _exit(lock_for_writing(fd, &none) == 0 && write(ready[1], "x", 1) == 1 ? (pause(), 0) : 1);
        }
        char c;
        CHECK(read(ready[0], &c, 1) == 1);
        pid_t holder = 0;
        CHECK_EQ(lock_for_writing(fd, &holder), (uint64_t) -EBUSY);
        CHECK_EQ(holder, child);
        char who[64], want[64];
        describe_holder(holder, who, sizeof(who));
        snprintf(want, sizeof(want), "pid %d (test-fileio)", child);
        CHECK_STR(who, want);
        describe_holder(0, who, sizeof(who));
        CHECK_STR(who, "another process");
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        CHECK_EQ(lock_for_writing(fd, &holder), 0); /* the holder gone, the lock is free */
        close(fd);
        close(ready[0]);
        close(ready[1]);
}

TEST(fd_limit_soft_raised_to_hard) {
        struct rlimit rl;
        CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        if (rl.rlim_max < 64) {
                printf("    (hard limit %ju: nothing to raise)\n", (uintmax_t) rl.rlim_max);
                return;
        }
        struct rlimit low = { .rlim_cur = 32, .rlim_max = rl.rlim_max };
        CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
        size_t limit = 0;
        CHECK_EQ(fd_limit_raise(16, &limit), 0);
        CHECK(getrlimit(RLIMIT_NOFILE, &low) == 0);
        CHECK_EQ(low.rlim_cur, rl.rlim_max);
        CHECK_EQ(limit, rl.rlim_max == RLIM_INFINITY ? SIZE_MAX : rl.rlim_max);
}

static bool has_cap_sys_resource(void) {
        char status[4096];
        unsigned long long eff = 0;
        const char *p = read_small_file("/proc/self/status", status, sizeof(status)) > 0 ? strstr(status, "CapEff:")
                                                                                       : NULL;
        return p && sscanf(p, "CapEff: %llx", &eff) == 1 && (eff & (1ull << 24 /* CAP_SYS_RESOURCE */));
}

/* Past the hard limit only with CAP_SYS_RESOURCE (which even root may lack); in a child, whose limits end with
 * it. */
TEST(fd_limit_hard_raised_only_with_privilege) {
        bool privileged = has_cap_sys_resource();
        pid_t child = fork();
        if (child == 0) {
                struct rlimit tight = { .rlim_cur = 48, .rlim_max = 64 };
                size_t limit = 0;
                if (setrlimit(RLIMIT_NOFILE, &tight) < 0 || fd_limit_raise(4096, &limit) < 0)
                        _exit(2);
                struct rlimit now;
                if (getrlimit(RLIMIT_NOFILE, &now) < 0 || now.rlim_cur != limit)
                        _exit(3);
                /* fs.nr_open is far above 4096 */
                _exit(limit == (privileged ? 4096u : 64u) ? 0 : 4);
        }
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
}

/* What the start line says of the daemon: its open files and its resident memory, as they change. */
TEST(open_files_and_rss_follow_the_process) {
        size_t before = 0, after = 0, rss_before = 0, rss_after = 0;
        CHECK_EQ(count_open_files(&before), 0);
        int fds[3];
        for (int i = 0; i < 3; i++)
                fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        CHECK_EQ(count_open_files(&after), 0);
        CHECK_EQ(after, before + 3);
        for (int i = 0; i < 3; i++)
                close(fds[i]);
        CHECK_EQ(count_open_files(&after), 0);
        CHECK_EQ(after, before);

        CHECK_EQ(resident_kib(&rss_before), 0);
        CHECK(rss_before > 0);
        size_t size = 32u << 20;
        char *touched = malloc(size);
        CHECK(touched != NULL);
        if (touched)
                memset(touched, 1, size); /* every page made resident */
        CHECK_EQ(resident_kib(&rss_after), 0);
        CHECK(rss_after >= rss_before + (size >> 10) / 2);
        volatile char last = touched ? touched[size - 1] : 1; /* read: the stores are not dead */
        CHECK_EQ(last, 1);
        free(touched);
}


/* The identity the lookup from the kernel's cache gives is stat's; and where openat2 is denied (a seccomp filter
 * as systemd's RestrictSUIDSGID= installs), the same identity from an ordinary lookup, and the lack said. */
static int identity_matches_stat(const char *dir) {
        char path[128];
        snprintf(path, sizeof(path), "%s/identity", dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return 10;
        close(fd);
        uint64_t ino = 0;
        dev_t dev = 0;
        if (file_identity_cached(AT_FDCWD, path, &ino, &dev) != 0)
                return 11;
        if (ino != st.st_ino || dev != st.st_dev)
                return 12;
        int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ino = 0;
        if (file_identity_cached(dirfd, "identity", &ino, &dev) != 0 || ino != st.st_ino)
                return 13;
        close(dirfd);
        return file_identity_cached(AT_FDCWD, "/nonexistent/file", &ino, &dev) == -ENOENT ? 0 : 14;
}

TEST(file_identity_with_and_without_openat2) {
        CHECK(cached_lookup_available());
        CHECK_EQ(identity_matches_stat(test_dir), 0);
        pid_t child = fork();
        if (child == 0) {
                struct sock_filter deny_openat2[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                struct sock_fprog prog = { .len = sizeof(deny_openat2) / sizeof(deny_openat2[0]),
                                           .filter = deny_openat2 };
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                        _exit(2);
                int r = identity_matches_stat(test_dir);
                _exit(r ? r : cached_lookup_available() ? 3 : 0);
        }
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
}

TEST_MAIN_IN_DIR("test-fileio")
