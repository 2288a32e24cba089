/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A FUSE file system that stops answering: one file, "file", whose bytes (and mode 0755) are those of a backing
 * file, served with no caching (every lookup and stat asks the server); from SIGUSR1 on it answers nothing
 * until SIGUSR2, as a hung sshfs or rclone server.  Speaks /dev/fuse itself, with no library.  As root: mounts
 * at MOUNTPOINT (allow_other), prints "mounted", and on SIGTERM closes the device, which fails every request
 * still waiting, and lazily unmounts.
 *
 *   fuse-stall MOUNTPOINT BACKING_FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define FILE_NODE 2
#define MAX_WRITE (128u * 1024u)

static int dev = -1, backing = -1;
static struct stat backing_st;
static volatile sig_atomic_t stalled, stopping;

static void on_signal(int sig) {
        if (sig == SIGUSR1)
                stalled = 1;
        else if (sig == SIGUSR2)
                stalled = 0;
        else
                stopping = 1;
}

static void reply(uint64_t unique, int error, const void *data, size_t len) {
        struct fuse_out_header h = { .len = (uint32_t) (sizeof(h) + (error ? 0 : len)), .error = -error,
                                     .unique = unique };
        struct iovec iov[2] = { { &h, sizeof(h) }, { (void *) data, error ? 0 : len } };
        (void) writev(dev, iov, 2); /* ENOENT: the request was interrupted meanwhile */
}

static void attr_of(uint64_t node, struct fuse_attr *a) {
        memset(a, 0, sizeof(*a));
        a->ino = node;
        a->blksize = 4096;
        if (node == FUSE_ROOT_ID) {
                a->mode = S_IFDIR | 0755;
                a->nlink = 2;
        } else {
                a->mode = S_IFREG | 0755;
                a->nlink = 1;
                a->size = (uint64_t) backing_st.st_size;
                a->blocks = (a->size + 511) / 512;
        }
}

static void handle(const struct fuse_in_header *in, const void *arg) {
        switch (in->opcode) {
        case FUSE_INIT: {
                const struct fuse_init_in *i = arg;
                struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
                                           .max_readahead = i->max_readahead, .max_write = MAX_WRITE,
                                           .max_background = 16, .congestion_threshold = 12, .time_gran = 1 };
                reply(in->unique, 0, &o, sizeof(o));
                break;
        }
        case FUSE_LOOKUP: {
                if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "file") != 0) {
                        reply(in->unique, ENOENT, NULL, 0);
                        break;
                }
                struct fuse_entry_out e = { .nodeid = FILE_NODE, .generation = 1 }; /* valid for 0 s */
                attr_of(FILE_NODE, &e.attr);
                reply(in->unique, 0, &e, sizeof(e));
                break;
        }
        case FUSE_GETATTR: {
                struct fuse_attr_out a = {};
                attr_of(in->nodeid, &a.attr);
                reply(in->unique, 0, &a, sizeof(a));
                break;
        }
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
                struct fuse_open_out o = {};
                reply(in->unique, 0, &o, sizeof(o));
                break;
        }
        case FUSE_READ: {
                const struct fuse_read_in *r = arg;
                static char buf[MAX_WRITE];
                size_t size = r->size < sizeof(buf) ? r->size : sizeof(buf);
                ssize_t n = pread(backing, buf, size, (off_t) r->offset);
                if (n < 0)
                        reply(in->unique, errno, NULL, 0);
                else
                        reply(in->unique, 0, buf, (size_t) n);
                break;
        }
        case FUSE_READDIR:
                reply(in->unique, 0, NULL, 0); /* nothing listed: the file is found by its name */
                break;
        case FUSE_RELEASE:
        case FUSE_RELEASEDIR:
        case FUSE_FLUSH:
        case FUSE_ACCESS:
                reply(in->unique, 0, NULL, 0);
                break;
        case FUSE_STATFS: {
                struct fuse_statfs_out s = { .st = { .bsize = 4096, .namelen = 255, .frsize = 4096 } };
                reply(in->unique, 0, &s, sizeof(s));
                break;
        }
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
                break; /* no reply */
        default:
                reply(in->unique, ENOSYS, NULL, 0);
                break;
        }
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: fuse-stall MOUNTPOINT BACKING_FILE\n");
                return 2;
        }
        const char *mnt = argv[1];
        backing = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (backing < 0 || fstat(backing, &backing_st) < 0) {
                perror(argv[2]);
                return 1;
        }
        dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (dev < 0) {
                perror("/dev/fuse");
                return 77;
        }
        char opts[256];
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", dev);
        if (mount("fuse-stall", mnt, "fuse.fuse-stall", MS_NOSUID | MS_NODEV, opts) < 0) {
                perror("mount");
                return 1;
        }
        struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: a signal ends a wait */
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGUSR2, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        printf("mounted\n");
        fflush(stdout);
        static char buf[MAX_WRITE + 4096];
        while (!stopping) {
                if (stalled) {
                        printf("stalled\n");
                        fflush(stdout);
                        while (stalled && !stopping)
                                usleep(10000); /* requests wait in the kernel, unread */
                        printf("answering again\n");
                        fflush(stdout);
                        continue;
                }
                ssize_t n = read(dev, buf, sizeof(buf));
                if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
                        continue;
                if (n < 0)
                        break; /* ENODEV: unmounted */
                if ((size_t) n >= sizeof(struct fuse_in_header))
                        handle((const void *) buf, buf + sizeof(struct fuse_in_header));
        }
        close(dev); /* the connection aborted: what waits on it fails */
        umount2(mnt, MNT_DETACH);
        return 0;
}
