/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a root daemon writes in directories others can write to: a file replaced whole never opens what was at
 * its path (a FIFO, a symlink, another user's file, a hard link), its mode and group are the ones asked for; an
 * output file that is there is taken only when it is the daemon's own, regular, with one link; a directory is
 * reached through a symbolic link only where nobody else could have made it.  The cases that need a file of
 * another user run as root only. */
#include "safefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "test.h"
#include "util.h"

#define NOBODY 65534

static const char *at(const char *name) {
        static char path[4][4200];
        static unsigned next;
        char *p = path[next++ % 4];
        snprintf(p, sizeof(path[0]), "%s/%s", test_dir, name);
        return p;
}

static unsigned entries(void) {
        unsigned n = 0;
        _cleanup_(closep) int fd = open(test_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fdopendir(TAKE_FD(fd));
        for (struct dirent *de; d && (de = readdir(d));)
                n += de->d_name[0] != '.' || (de->d_name[1] && de->d_name[1] != '.');
        if (d)
                closedir(d);
        return n;
}

TEST(replace) {
        char got[64];
        struct stat st;
        CHECK_EQ(file_replace(at("m.prom"), "a 1\n", 4, 0640, (gid_t) -1), 0);
        CHECK_EQ(file_replace(at("m.prom"), "b 2\n", 4, 0600, (gid_t) -1), 0);
        CHECK_EQ(read_small_file(at("m.prom"), got, sizeof(got)), 4);
        CHECK_STR(got, "b 2\n");
        CHECK(stat(at("m.prom"), &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == geteuid());
        CHECK_EQ(entries(), 1); /* no temporary file left */
        /* a group of ours */
        CHECK_EQ(file_replace(at("m.prom"), "c 3\n", 4, 0640, getegid()), 0);
        CHECK(stat(at("m.prom"), &st) == 0 && st.st_gid == getegid() && (st.st_mode & 07777) == 0640);

        /* a FIFO at the old fixed name and at the path: never opened (this would block) */
        CHECK(mkfifo(at("f.prom.tmp"), 0666) == 0);
        CHECK(mkfifo(at("f.prom"), 0666) == 0);
        CHECK_EQ(file_replace(at("f.prom"), "d 4\n", 4, 0640, (gid_t) -1), 0);
        CHECK(lstat(at("f.prom"), &st) == 0 && S_ISREG(st.st_mode));

        /* a hard link at the path: the other name's file keeps its bytes */
        int fd = open(at("victim"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, "keep\n", 5) == 5);
        close(fd);
        CHECK(link(at("victim"), at("h.prom")) == 0);
        CHECK_EQ(file_replace(at("h.prom"), "e 5\n", 4, 0640, (gid_t) -1), 0);
        CHECK_EQ(read_small_file(at("victim"), got, sizeof(got)), 5);
        CHECK_STR(got, "keep\n");

        /* a directory that is not there: an error, and nothing made */
        CHECK_EQ(file_replace(at("no/m.prom"), "f 6\n", 4, 0640, (gid_t) -1), -ENOENT);
        /* a directory at the path: refused, the temporary file gone */
        CHECK(mkdir(at("d.prom"), 0755) == 0);
        unsigned before = entries();
        CHECK(file_replace(at("d.prom"), "g 7\n", 4, 0640, (gid_t) -1) < 0);
        CHECK_EQ(entries(), before);

        CHECK_EQ(file_remove_owned(at("m.prom")), 1);
        CHECK_EQ(file_remove_owned(at("m.prom")), 0);
        CHECK_EQ(file_remove_owned(at("d.prom")), 0); /* not a file: left */
}

static int open_owned(const char *name, mode_t mode, struct stat *st) {
        _cleanup_(closep) int dirfd = -1, fd = -1;
        const char *base;
        int r = safe_dir_open(at(name), &dirfd, &base);
        if (r < 0)
                return r;
        return owned_file_open(dirfd, base, mode, &fd, st);
}

TEST(owned_open) {
        struct stat st;
        char why[256];
        /* made anew with the mode; an existing one of ours gets the mode again */
        CHECK_EQ(open_owned("t.log", 0640, &st), 0);
        CHECK(stat(at("t.log"), &st) == 0 && (st.st_mode & 07777) == 0640);
        CHECK(chmod(at("t.log"), 0666) == 0);
        CHECK_EQ(open_owned("t.log", 0600, &st), 0);
        CHECK(stat(at("t.log"), &st) == 0 && (st.st_mode & 07777) == 0600);
        /* a symbolic link, a FIFO (with no reader: no wait), a second hard link */
        CHECK(symlink("t.log", at("s.log")) == 0);
        CHECK_EQ(open_owned("s.log", 0640, &st), -ELOOP);
        CHECK(lstat(at("s.log"), &st) == 0);
        char want[128];
        snprintf(want, sizeof(want), "is a symbolic link of uid %u", (unsigned) geteuid());
        CHECK_CONTAINS(owned_file_refusal(-ELOOP, &st, why, sizeof(why)), want);
        CHECK_CONTAINS(owned_file_refusal(-ELOOP, &st, why, sizeof(why)), "which is refused, not followed");
        CHECK(mkfifo(at("p.log"), 0666) == 0);
        CHECK_EQ(open_owned("p.log", 0640, &st), -EINVAL);
        CHECK(S_ISFIFO(st.st_mode)); /* what is there, for the message */
        CHECK_CONTAINS(owned_file_refusal(-EINVAL, &st, why, sizeof(why)), "is a FIFO of uid ");
        CHECK(link(at("t.log"), at("l.log")) == 0);
        CHECK_EQ(open_owned("l.log", 0640, &st), -EMLINK);
        CHECK_CONTAINS(owned_file_refusal(-EMLINK, &st, why, sizeof(why)), "has 2 hard links");
        CHECK(owned_file_refusal(-ENOSPC, &st, why, sizeof(why)) == NULL);
        if (geteuid() != 0)
                return;
        /* another user's file, even one writable by all */
        int fd = open(at("n.log"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        CHECK(fd >= 0 && fchown(fd, NOBODY, NOBODY) == 0 && fchmod(fd, 0666) == 0);
        close(fd);
        CHECK_EQ(open_owned("n.log", 0640, &st), -EPERM);
        CHECK_EQ(st.st_uid, NOBODY);
        CHECK_CONTAINS(owned_file_refusal(-EPERM, &st, why, sizeof(why)), "is owned by uid 65534 (nobody)");
        CHECK(stat(at("n.log"), &st) == 0 && (st.st_mode & 07777) == 0666 && st.st_size == 0);
}

TEST(dir_links) {
        _cleanup_(closep) int dirfd = -1;
        const char *name;
        CHECK(mkdir(at("real"), 0755) == 0);
        CHECK(symlink("real", at("ours")) == 0);
        CHECK_EQ(safe_dir_open(at("ours/x.log"), &dirfd, &name), 0);
        CHECK_STR(name, "x.log");
        struct stat a, b;
        CHECK(fstat(dirfd, &a) == 0 && stat(at("real"), &b) == 0 && a.st_ino == b.st_ino);
        CHECK_EQ(safe_dir_open(at("missing/x.log"), &dirfd, &name), -ENOENT);
        CHECK_EQ(safe_dir_open("relative/x.log", &dirfd, &name), -EINVAL);
        if (geteuid() != 0)
                return;
        /* in a directory another user owns, a link is theirs to swap: not followed, even one of root's */
        CHECK(mkdir(at("users"), 0755) == 0 && chown(at("users"), NOBODY, NOBODY) == 0);
        CHECK(symlink("../real", at("users/link")) == 0);
        close(TAKE_FD(dirfd));
        CHECK_EQ(safe_dir_open(at("users/link/x.log"), &dirfd, &name), -EXDEV);
        /* a link another user made in a sticky directory of root's: not followed; root's own there: followed */
        CHECK(mkdir(at("sticky"), 01777) == 0 && chmod(at("sticky"), 01777) == 0);
        CHECK(symlink("../real", at("sticky/root")) == 0);
        CHECK_EQ(safe_dir_open(at("sticky/root/x.log"), &dirfd, &name), 0);
        close(TAKE_FD(dirfd));
        CHECK(symlink("../real", at("sticky/nobody")) == 0 && lchown(at("sticky/nobody"), NOBODY, NOBODY) == 0);
        CHECK_EQ(safe_dir_open(at("sticky/nobody/x.log"), &dirfd, &name), -EXDEV);
        /* root's link hard-linked there from elsewhere (fs.protected_hardlinks = 0 lets anybody): not followed */
        CHECK(mkdir(at("rootdir"), 0700) == 0 && symlink("../real", at("rootdir/link")) == 0);
        CHECK(linkat(AT_FDCWD, at("rootdir/link"), AT_FDCWD, at("sticky/planted"), 0) == 0);
        CHECK_EQ(safe_dir_open(at("sticky/planted/x.log"), &dirfd, &name), -EXDEV);
        /* a sticky directory another user owns: its owner may replace any entry, root's link too */
        CHECK(mkdir(at("theirs"), 01777) == 0 && chmod(at("theirs"), 01777) == 0);
        CHECK(chown(at("theirs"), NOBODY, NOBODY) == 0);
        CHECK(symlink("../real", at("theirs/root")) == 0);
        CHECK_EQ(safe_dir_open(at("theirs/root/x.log"), &dirfd, &name), -EXDEV);
        CHECK_EQ(safe_dir_open(at("theirs/x.log"), &dirfd, &name), 0); /* the directory itself: only a warning */
        close(TAKE_FD(dirfd));
        _cleanup_(closep) int users = open(at("users"), O_PATH | O_CLOEXEC);
        CHECK_EQ(dir_other_writer(users), NOBODY);
}

TEST(file_links) {
        int fd = -1;
        struct stat a, b;
        CHECK(mkdir(at("files"), 0755) == 0);
        CHECK(close(open(at("files/real.conf"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == 0);
        CHECK(stat(at("files/real.conf"), &b) == 0);
        /* the last component a link of ours: followed, relative to its directory or absolute */
        CHECK(symlink("real.conf", at("files/rel.conf")) == 0);
        CHECK(symlink(at("files/real.conf"), at("files/abs.conf")) == 0);
        CHECK(symlink("files/rel.conf", at("chain.conf")) == 0);
        const char *names[] = { "files/rel.conf", "files/abs.conf", "chain.conf", "files/real.conf" };
        for (size_t i = 0; i < ELEMENTS(names); i++) {
                CHECK_EQ(safe_file_open(at(names[i]), O_RDONLY, &fd), 0);
                CHECK(fd >= 0 && fstat(fd, &a) == 0 && a.st_ino == b.st_ino);
                CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
                close(fd);
        }
        /* relative to the working directory */
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof(cwd)) != NULL && chdir(test_dir) == 0);
        CHECK_EQ(safe_file_open("files/rel.conf", O_RDONLY, &fd), 0);
        CHECK(fd >= 0 && fstat(fd, &a) == 0 && a.st_ino == b.st_ino);
        close(fd);
        CHECK(chdir(cwd) == 0);
        CHECK_EQ(safe_file_open(at("files/missing.conf"), O_RDONLY, &fd), -ENOENT);
        CHECK(symlink("loop.conf", at("files/loop.conf")) == 0);
        CHECK_EQ(safe_file_open(at("files/loop.conf"), O_RDONLY, &fd), -ELOOP);
        if (geteuid() != 0)
                return;
        /* another user's link to root's file: which file it is would be theirs to choose */
        CHECK(symlink("real.conf", at("files/theirs.conf")) == 0 && lchown(at("files/theirs.conf"), NOBODY, NOBODY) == 0);
        CHECK_EQ(safe_file_open(at("files/theirs.conf"), O_RDONLY, &fd), -EXDEV);
        /* root's link in a directory of another user's */
        CHECK(mkdir(at("files/users"), 0755) == 0 && chown(at("files/users"), NOBODY, NOBODY) == 0);
        CHECK(symlink("../real.conf", at("files/users/root.conf")) == 0);
        CHECK_EQ(safe_file_open(at("files/users/root.conf"), O_RDONLY, &fd), -EXDEV);
}

TEST_MAIN_IN_DIR("test-safefile")
