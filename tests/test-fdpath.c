/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Paths of fds through the real /proc, on this process's own fds: an fd closed and reused for another file is
 * told apart from the file the kernel saw during the call, never named with the old or the new path. */
#include "fdpath.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

static int open_at(const char *dir, const char *name, int want_fd) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, want_fd) < 0)
                return -1;
        close(fd);
        return want_fd;
}

/* A file opened at fd, as the capture would name it during a call: its identity, looked up without the cache,
 * which knows nothing of it then.  Its path in ret_path. */
static struct capture_file opened_unseen(const char *dir, const char *name, int fd, char ret_path[static 4200]) {
        struct capture_file f = { .fd = (uint32_t) fd };
        struct path_str *p = NULL;
        snprintf(ret_path, 4200, "%s/%s", dir, name);
        CHECK_EQ(open_at(dir, name, fd), fd);
        CHECK_EQ(fdpath_resolve("/proc", (uint32_t) getpid(), (uint32_t) fd, &p, &f.mnt_id, &f.ino), 0);
        path_str_unref(p);
        return f;
}

int main(void) {
        char dir[] = "/tmp/test-fdpath.XXXXXX";
        if (!mkdtemp(dir))
                return 99;
        char path_a[4200], path_b[4200];
        snprintf(path_a, sizeof(path_a), "%s/a.dat", dir);
        snprintf(path_b, sizeof(path_b), "%s/b, \"odd\".dat", dir);
        uint32_t pid = (uint32_t) getpid();
        const int fd = 77;

        CASE("a path and its file's identity, from one open file");
        CHECK_EQ(open_at(dir, "a.dat", fd), fd);
        struct path_str *p = NULL;
        uint32_t mnt_a, mnt_b;
        uint64_t ino_a, ino_b;
        CHECK_EQ(fdpath_resolve("/proc", pid, fd, &p, &mnt_a, &ino_a), 0);
        CHECK_STR(p ? p->s : NULL, path_a);
        CHECK(mnt_a != 0 && ino_a != 0);
        path_str_unref(p);

        struct fdpath_cache c;
        CHECK_EQ(fdpath_cache_init(&c, 64, "/proc"), 0);
        struct capture_file during_a = { .fd = fd, .mnt_id = mnt_a, .ino = ino_a };
        enum path_state st;
        fdpath_lookup(&c, pid, fd, &during_a, 1, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_a);
        path_str_unref(p);
        CASE("cached: no new lookup");
        /* cached: no new lookup */
        uint64_t lookups = c.lookups;
        fdpath_lookup(&c, pid, fd, &during_a, 2, &p, &st);
        CHECK_EQ(c.lookups, lookups);
        CHECK_EQ(st, PATH_OK);
        path_str_unref(p);

        CASE("an fd closed and reused for another file is told apart");
        /* the fd closed and reused for another file */
        close(fd);
        CHECK_EQ(open_at(dir, "b, \"odd\".dat", fd), fd);
        CHECK_EQ(fdpath_resolve("/proc", pid, fd, &p, &mnt_b, &ino_b), 0);
        path_str_unref(p);
        CHECK(ino_b != ino_a);
        struct capture_file during_b = { .fd = fd, .mnt_id = mnt_b, .ino = ino_b };
        /* a request submitted on b: the cache holds a, the capture says b: looked up again, b */
        fdpath_lookup(&c, pid, fd, &during_b, 3, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_b);
        path_str_unref(p);
        /* a request submitted on a, decoded only now that the fd names b: a's path, by a's identity (found
         * again under another fd first, so that it is the newest in its slot of the direct-mapped table) */
        CHECK_EQ(open_at(dir, "a.dat", fd + 2), fd + 2);
        fdpath_lookup(&c, pid, fd + 2, NULL, 4, &p, &st);
        path_str_unref(p);
        close(fd + 2);
        fdpath_lookup(&c, pid, fd, &during_a, 4, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_a);
        path_str_unref(p);
        /* and for a file never found under any path: neither path is given */
        struct capture_file during_unknown = { .fd = fd, .mnt_id = mnt_a, .ino = ino_a + ino_b };
        fdpath_lookup(&c, pid, fd, &during_unknown, 4, &p, &st);
        CHECK_EQ(st, PATH_REUSED);
        CHECK(p == NULL);

        CASE("a negative fd: not an fd, and /proc not asked");
        lookups = c.lookups;
        fdpath_lookup(&c, pid, (uint32_t) -1, NULL, 4, &p, &st);
        CHECK_EQ(st, PATH_NOT_FD);
        CHECK(p == NULL);
        CHECK_EQ(c.lookups, lookups);
        CHECK_STR(path_state_name(PATH_NOT_FD), "not an fd");

        CASE("without a capture: unverified, once per generation");
        /* without a capture: unverified, looked up at most once per generation */
        fdpath_lookup(&c, pid, fd, NULL, 5, &p, &st);
        CHECK_EQ(st, PATH_UNVERIFIED);
        CHECK_STR(p ? p->s : NULL, path_b);
        path_str_unref(p);
        lookups = c.lookups;
        fdpath_lookup(&c, pid, fd, NULL, 5, &p, &st);
        CHECK_EQ(c.lookups, lookups);
        path_str_unref(p);
        close(fd);
        CHECK_EQ(open_at(dir, "a.dat", fd), fd);
        fdpath_lookup(&c, pid, fd, NULL, 6, &p, &st);
        CHECK_EQ(c.lookups, lookups + 1);
        CHECK_STR(p ? p->s : NULL, path_a);
        path_str_unref(p);

        CASE("closed since the call: the cache knows the file");
        /* closed since the call: the cache still knows the file the call used */
        close(fd);
        fdpath_lookup(&c, pid, fd, &during_a, 7, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_a);
        path_str_unref(p);
        CASE("the file known by its identity, whichever fd named it");
        /* a request on another fd, closed since, for a file already found under a path */
        fdpath_lookup(&c, pid, fd + 1, &during_a, 7, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_a);
        path_str_unref(p);
        CASE("an fd or a process gone before the lookup");
        /* an fd closed before the file it named was ever looked up; a process that does not exist */
        struct capture_file during_never = { .fd = fd + 1, .mnt_id = mnt_a, .ino = ino_a + ino_b };
        fdpath_lookup(&c, pid, fd + 1, &during_never, 7, &p, &st);
        CHECK_EQ(st, PATH_GONE);
        CHECK(p == NULL);
        fdpath_lookup(&c, 0x3ffffff0, 3, NULL, 8, &p, &st);
        CHECK_EQ(st, PATH_GONE);
        CASE("a failed lookup is remembered for its generation only");
        /* a failure is remembered for the rest of that generation only */
        lookups = c.lookups;
        fdpath_lookup(&c, 0x3ffffff0, 3, NULL, 8, &p, &st);
        CHECK_EQ(st, PATH_GONE);
        CHECK_EQ(c.lookups, lookups);
        fdpath_lookup(&c, 0x3ffffff0, 3, NULL, 9, &p, &st);
        CHECK_EQ(c.lookups, lookups + 1);

        CASE("a failed lookup is never an answer in a later generation");
        /* Failed for a file, then asked again for the same file in a later drain: looked up again, and still
         * unknown while the fd stays closed, never "ok" without a path; found once it is open again. */
        const int fd_c = 80;
        char path_c[4200], path_d[4200];
        struct capture_file during_c = opened_unseen(dir, "c.dat", fd_c, path_c);
        close(fd_c);
        fdpath_lookup(&c, pid, fd_c, &during_c, 10, &p, &st);
        CHECK_EQ(st, PATH_GONE);
        CHECK(p == NULL);
        lookups = c.lookups;
        fdpath_lookup(&c, pid, fd_c, &during_c, 11, &p, &st);
        CHECK_EQ(st, PATH_GONE);
        CHECK(p == NULL);
        CHECK_EQ(c.lookups, lookups + 1);
        CHECK_EQ(open_at(dir, "c.dat", fd_c), fd_c);
        /* O_TRUNC keeps the inode: the same file */
        fdpath_lookup(&c, pid, fd_c, &during_c, 12, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_c);
        path_str_unref(p);
        close(fd_c);

        CASE("a process's open files, known at once: one closed before its first lookup keeps its path");
        /* In a child that keeps that one file open and nothing else: whatever a test runner leaves open in this
         * process (make's pipes under distcheck) could share its slot of the direct-mapped table. */
        const int fd_d = 81;
        struct capture_file during_d = opened_unseen(dir, "d.dat", fd_d, path_d);
        pid_t child = fork();
        if (child == 0) {
                for (int other = 0; other < 65536; other++)
                        if (other != fd_d)
                                close(other);
                for (int more = 1; more <= 10; more++) /* the same file under 10 more fds, after it */
                        dup2(fd_d, fd_d + more);
                raise(SIGSTOP);
                _exit(0);
        }
        int status = 0;
        CHECK(child > 0 && waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status));
        close(fd_d);
        /* a few at a time, each call going on where the last stopped */
        long pos = 0;
        bool done = false;
        uint64_t before = c.lookups;
        CHECK_EQ(fdpath_prime(&c, (uint32_t) child, &pos, 4, &done), 4);
        CHECK(!done && pos > 0);
        CHECK_EQ(fdpath_prime(&c, (uint32_t) child, &pos, 4, &done), 4);
        CHECK(!done);
        CHECK_EQ(fdpath_prime(&c, (uint32_t) child, &pos, 4, &done), 3);
        CHECK(done);
        CHECK_EQ(c.lookups, before + 11);
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        /* the process gone: its fd names nothing, the file is known by its identity */
        fdpath_lookup(&c, (uint32_t) child, fd_d, &during_d, 13, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_d);
        path_str_unref(p);
        pos = 0;
        CHECK_EQ(fdpath_prime(&c, 0x3ffffff0, &pos, 4, &done), 0);
        CHECK(done);

        CASE("a cached path outlives its entry");
        /* a cached path outlives the cache entry for whoever holds it */
        CHECK_EQ(open_at(dir, "a.dat", fd), fd);
        fdpath_lookup(&c, pid, fd, NULL, 9, &p, &st);
        fdpath_forget(&c, pid);
        CHECK_STR(p ? p->s : NULL, path_a);
        path_str_unref(p);
        close(fd);

        CASE("a remembered path that no longer names its file is not an answer");
        /* e.whatever is opened and found; renamed, closed: a request on a closed fd for its identity must not
         * get the old name (an inode number freed and taken by another file would get it just the same) */
        char path_e[4200], path_e2[4200];
        const int fd_e = 83;
        struct capture_file during_e = opened_unseen(dir, "e.dat", fd_e, path_e);
        fdpath_lookup(&c, pid, fd_e, &during_e, 20, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_e);
        path_str_unref(p);
        snprintf(path_e2, sizeof(path_e2), "%s/e2.dat", dir);
        CHECK_EQ(rename(path_e, path_e2), 0);
        close(fd_e);
        fdpath_lookup(&c, pid, fd_e + 1, &during_e, 21, &p, &st);
        CHECK(st != PATH_OK);
        CHECK(p == NULL);
        path_str_unref(p);
        /* in the generation it was found in, the answer holds (no check each request) */
        CHECK_EQ(open_at(dir, "e2.dat", fd_e), fd_e);
        fdpath_lookup(&c, pid, fd_e, &during_e, 22, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_e2);
        path_str_unref(p);
        close(fd_e);
        unlink(path_e2);

        CASE("a path the capture walked in the kernel: the file's, by its identity, whatever its fd names now");
        char path_k[4200];
        const int fd_k = 85;
        struct capture_file during_k = opened_unseen(dir, "k.dat", fd_k, path_k);
        CHECK_EQ(fdpath_learn(&c, during_k.mnt_id, during_k.ino, path_k, strlen(path_k)), 0);
        CHECK_EQ(c.learned, 1);
        close(fd_k);
        lookups = c.lookups;
        fdpath_lookup(&c, pid, fd_k, &during_k, 24, &p, &st); /* the fd closed since: the file's path all the same */
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_k);
        path_str_unref(p);
        fdpath_of_identity(&c, pid, during_k.mnt_id, during_k.ino, 24, &p, &st);
        CHECK_EQ(st, PATH_OK);
        CHECK_STR(p ? p->s : NULL, path_k);
        path_str_unref(p);
        CHECK_EQ(c.lookups, lookups); /* no /proc */
        fdpath_of_identity(&c, pid, during_k.mnt_id, during_k.ino + 12345, 24, &p, &st);
        CHECK_EQ(st, PATH_NOT_KNOWN);
        CHECK(p == NULL);
        unlink(path_k); /* gone: no longer vouched for */
        fdpath_of_identity(&c, pid, during_k.mnt_id, during_k.ino, 25, &p, &st);
        CHECK_EQ(st, PATH_NOT_KNOWN);
        CHECK(p == NULL);

        CASE("a remembered path that cannot be checked without asking its file system: given, marked unverified");
        /* procfs revalidates its fd entries on every lookup: never all in the cache, as a stalled FUSE mount's */
        char path_proc[64];
        int n_proc = snprintf(path_proc, sizeof(path_proc), "/proc/%u/fd/%d", pid, fd_k);
        CHECK_EQ(fdpath_learn(&c, during_k.mnt_id, during_k.ino + 777, path_proc, (size_t) n_proc), 0);
        lookups = c.lookups;
        fdpath_of_identity(&c, pid, during_k.mnt_id, during_k.ino + 777, 26, &p, &st);
        CHECK_EQ(st, PATH_UNVERIFIED);
        CHECK_STR(p ? p->s : NULL, path_proc);
        path_str_unref(p);
        CHECK_EQ(c.lookups, lookups);

        CASE("a path longer than PATH_MAX: said to be, not a closed fd");
        /* 20 levels of 250 characters, made and opened relative to each other */
        char name[251];
        memset(name, 'n', 250);
        name[250] = 0;
        int level[21];
        level[0] = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(level[0] >= 0);
        for (int i = 1; i <= 20; i++) {
                CHECK_EQ(mkdirat(level[i - 1], name, 0700), 0);
                level[i] = openat(level[i - 1], name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                CHECK(level[i] >= 0);
        }
        const int fd_long = 84;
        int deep = openat(level[20], "deep.dat", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        CHECK(deep >= 0);
        CHECK_EQ(dup2(deep, fd_long), fd_long);
        close(deep);
        fdpath_lookup(&c, pid, fd_long, NULL, 23, &p, &st);
        CHECK_EQ(st, PATH_TOO_LONG);
        CHECK(p == NULL);
        CHECK_STR(path_state_name(st), "name too long");
        close(fd_long);
        CHECK_EQ(unlinkat(level[20], "deep.dat", 0), 0);
        for (int i = 20; i >= 1; i--) {
                close(level[i]);
                CHECK_EQ(unlinkat(level[i - 1], name, AT_REMOVEDIR), 0);
        }
        close(level[0]);

        fdpath_cache_done(&c);
        unlink(path_a);
        unlink(path_b);
        unlink(path_c);
        unlink(path_d);
        rmdir(dir);
        return test_result("test-fdpath");
}
