/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Files: an fd's open file and its identity, the kernel's own view of an iocb, and a file's path, sent once.
 * Part of bpf/capture.bpf.c, which includes it. */

/* After a failed read of a whole array: how many of its leading elements can be read, one at a time. */
static long prefix_step(__u32 i, void *ctx) {
        struct scratch *s = scratch_of(ctx);
        if (!s || i >= s->b.n)
                return 1;
        __u32 elem = s->b.elem & 63;
        __u32 at = (s->b.dst_off + i * elem) & (OFF_LIMIT - 1);
        if (bpf_probe_read_user(s->buf + at, elem, (const void *) (s->b.src + (__u64) i * elem)) != 0)
                return 1;
        s->b.good = i + 1;
        return 0;
}

/* An array of n elements: one segment, whose valid part is the prefix that could be read.  Returns it. */
static __always_inline __u32 put_array(struct loop_ctx *l, struct scratch *s, __u64 addr, __u32 n, __u32 elem) {
        __u32 start = s->b.off;
        if (n == 0 || put_segment(s, addr, n * elem) < 0)
                return 0;
        struct capture_segment *seg = (void *) (s->buf + (start & (OFF_LIMIT - 1)));
        if (seg->valid)
                return seg->valid;
        s->b.dst_off = start + SEG_HDR;
        s->b.n = n;
        s->b.elem = elem;
        s->b.src = addr;
        s->b.good = 0;
        bpf_loop(CAPTURE_MAX_ITEMS, prefix_step, l, 0);
        s = scratch_of(l);
        if (!s)
                return 0;
        seg = (void *) (s->buf + (start & (OFF_LIMIT - 1)));
        seg->valid = s->b.good * elem;
        return seg->valid;
}

/* The mount id of a file's vfsmount, as fdinfo shows it; 0 if it cannot be read. */
static __always_inline int mount_id_of(struct vfsmount *mnt, __u32 *ret_mnt_id) {
        int mnt_id = 0;
        /* real_mount(): the vfsmount sits inside its struct mount, which the verifier does not know it by */
        if (!mnt || bpf_probe_read_kernel(&mnt_id, sizeof(mnt_id),
                                          (__u8 *) mnt - bpf_core_field_offset(struct mount, mnt) +
                                                  bpf_core_field_offset(struct mount, mnt_id)) != 0)
                return 0;
        *ret_mnt_id = (__u32) mnt_id;
        return 1;
}

/* The (mnt_id, ino) of an open file, as fdinfo shows them; 0 if it cannot be read. */
static __always_inline int identity_of(struct file *f, __u32 *ret_mnt_id, __u64 *ret_ino) {
        unsigned long ino = BPF_CORE_READ(f, f_inode, i_ino);
        if (!mount_id_of(BPF_CORE_READ(f, f_path.mnt), ret_mnt_id))
                return 0;
        *ret_ino = ino;
        return 1;
}

/* The same for a file pointer the verifier knows the type of (a tp_btf program's argument, or what one points
 * to): its fields read directly, a load each. */
static __always_inline int identity_of_btf(struct file *f, __u32 *ret_mnt_id, __u64 *ret_ino) {
        if (!mount_id_of(f->f_path.mnt, ret_mnt_id))
                return 0;
        *ret_ino = f->f_inode->i_ino;
        return 1;
}

/* The open file the current task's fd names now; NULL if none.  The task's own pointer is one the verifier knows
 * the type of: read directly (a load each, not a helper call), down to the array, which it cannot index. */
static __always_inline struct file *file_of_fd(__u32 fd) {
        struct task_struct *task = bpf_get_current_task_btf();
        struct fdtable *fdt = task->files->fdt;
        if (!fdt || fd >= fdt->max_fds)
                return 0;
        struct file **fds = fdt->fd;
        struct file *f = 0;
        if (!fds || bpf_probe_read_kernel(&f, sizeof(f), fds + fd) != 0)
                return 0;
        return f;
}

/* From kernel 6.2 this kfunc makes a kernel address a typed pointer whose fields are plain loads (faulting ones
 * read as 0), not a helper call each.  The programs that use it have twins that do not ("_probed"), and the
 * daemon loads one of each pair as the kernel has it or not (weak: without it, the object still loads). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* A tp_btf program that reads through bpf_rdonly_cast, and its twin for kernels without it, which reads through
 * helper calls: body(ctx, typed). */
#define TP_BTF_TWINS(tp, name, body)                                        \
        SEC("tp_btf/" #tp)                                                  \
        int name(__u64 *ctx) {                                              \
                return in_force() ? body(ctx, 1) : 0;                       \
        }                                                                   \
        SEC("tp_btf/" #tp)                                                  \
        int name##_probed(__u64 *ctx) {                                     \
                return in_force() ? body(ctx, 0) : 0;                       \
        }

/* A file's identity, its fields read through bpf_rdonly_cast (`typed`) or through helper calls. */
static __always_inline int identity_of_as(struct file *f, __u32 *ret_mnt_id, __u64 *ret_ino, const int typed) {
        if (typed)
                return identity_of_btf(bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file)), ret_mnt_id,
                                       ret_ino);
        return identity_of(f, ret_mnt_id, ret_ino);
}

/* The (mnt_id, ino) of the file the current task's fd names now, as fdinfo shows them; mnt_id 0 if none.
 * `typed`: the file read through bpf_rdonly_cast. */
static __always_inline void file_identity(struct scratch *s, __u32 fd, struct capture_file *ret, const int typed) {
        ret->fd = fd;
        if (fd == s->b.last_fd) {
                ret->mnt_id = s->b.last_mnt_id;
                ret->ino = s->b.last_ino;
                return;
        }
        ret->mnt_id = 0;
        ret->ino = 0;
        struct file *f = file_of_fd(fd);
        if (!f)
                return;
        __u32 mnt_id;
        __u64 ino;
        if (!identity_of_as(f, &mnt_id, &ino, typed))
                return;
        ret->mnt_id = mnt_id;
        ret->ino = ino;
        s->b.last_file = f;
        s->b.last_fd = fd;
        s->b.last_mnt_id = ret->mnt_id;
        s->b.last_ino = ino;
}

/* The kernel's views beyond a call's first KVIEWS_IN_THREAD, by (thread, user iocb).  LRU: a view the exit never
 * took (its call's record lost) goes. */
struct kview_key {
        __u32 tid;
        __u32 pad;
        __u64 iocb;
};
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 4096);
        __type(key, struct kview_key);
        __type(value, struct kview);
} kviews SEC(".maps");

#define IOCB_OFFSET_OFFSET 40 /* aio_offset */

/* The iocb as the exit reads it, against the kernel's own view of it where there is one: the same, or the
 * kernel's file, offset and length instead. */
static __always_inline void kernel_view(struct scratch *s, struct capture_iocb_file *cf, __u64 iocb, const __u8 *cb,
                                        int vectored) {
        struct kview *v = 0;
        __u32 n = s->b.n_kviews;
        for (__u32 k = 0; k < KVIEWS_IN_THREAD; k++)
                if (k < n && s->b.kviews[k].iocb == iocb) {
                        v = &s->b.kviews[k].v;
                        break;
                }
        struct kview_key key = { .tid = (__u32) bpf_get_current_pid_tgid(), .iocb = iocb };
        int in_map = 0;
        if (!v && n > KVIEWS_IN_THREAD) {
                v = bpf_map_lookup_elem(&kviews, &key);
                in_map = v != 0;
        }
        if (!v)
                return;
        int same = v->mnt_id == cf->file.mnt_id && v->ino == cf->file.ino &&
                   v->pos == *(__s64 *) (cb + IOCB_OFFSET_OFFSET) &&
                   (vectored || v->count == *(__u64 *) (cb + IOCB_NBYTES_OFFSET));
        if (same)
                cf->flags = CAPTURE_IOCB_KERNEL_SAME; /* whatever the fd named at the enter */
        else {
                cf->flags = CAPTURE_IOCB_KERNEL_OTHER;
                cf->file.mnt_id = v->mnt_id;
                cf->file.ino = v->ino;
                cf->kernel_pos = v->pos;
                cf->kernel_count = v->count;
        }
        if (in_map)
                bpf_map_delete_elem(&kviews, &key);
}

/* The file identities whose paths were written: each once, while the daemon keeps what it was told (LRU: a
 * path pushed out of here is written again when next seen). */
struct file_key {
        __u32 mnt_id;
        __u32 pad;
        __u64 ino;
};
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 16384);
        __type(key, struct file_key);
        __type(value, __u8);
} paths_sent SEC(".maps");

enum { PATH_WALKING, PATH_AT_ROOT, PATH_OUTSIDE, PATH_TOO_LONG_ };
#define PATH_COMPONENTS_MAX 256

/* One step up: a component before the path, or from a mount's root to where it is mounted. */
static long path_step(__u32 i __attribute__((unused)), void *ctx) {
        struct scratch *s = scratch_of(ctx);
        if (!s)
                return 1;
        struct path_walk *w = &s->pw;
        struct dentry *d = w->d;
        struct mount *m = w->m;
        if (root_mnt_id && BPF_CORE_READ(m, mnt_id) == (int) root_mnt_id && BPF_CORE_READ(d, d_inode, i_ino) == root_ino) {
                w->state = PATH_AT_ROOT;
                return 1;
        }
        if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
                struct mount *parent = BPF_CORE_READ(m, mnt_parent);
                if (parent == m) {
                        w->state = root_mnt_id ? PATH_OUTSIDE : PATH_AT_ROOT;
                        return 1;
                }
                w->d = BPF_CORE_READ(m, mnt_mountpoint);
                w->m = parent;
                return 0;
        }
        struct dentry *parent = BPF_CORE_READ(d, d_parent);
        __u32 len = BPF_CORE_READ(d, d_name.len), pos = w->pos;
        if (parent == d || len == 0) {
                w->state = PATH_OUTSIDE; /* not reachable from a mount's root */
                return 1;
        }
        if (len > 255 || pos < len + 1) {
                w->state = PATH_TOO_LONG_;
                return 1;
        }
        pos -= len;
        bpf_probe_read_kernel(w->buf + (pos & (CAPTURE_PATH_MAX - 1)), len & 255, BPF_CORE_READ(d, d_name.name));
        pos -= 1;
        w->buf[pos & (CAPTURE_PATH_MAX - 1)] = '/';
        w->pos = pos;
        w->d = parent;
        return 0;
}

#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B

/* A pipe's or a socket's name as /proc/PID/fd gives it, "pipe:[INO]": its identity's alone, unlike an anonymous
 * inode's (one inode for every eventfd and epoll), whose name /proc is left to give. */
static __always_inline void pseudo_name(struct path_walk *w, int socket, __u64 ino) {
        const char pipe_prefix[8] = "pipe:[", socket_prefix[8] = "socket:[";
        __u32 pos = CAPTURE_PATH_MAX - 1;
        w->buf[pos] = ']';
        for (int i = 0; i < 20; i++) {
                pos--;
                w->buf[pos & (CAPTURE_PATH_MAX - 1)] = '0' + ino % 10;
                ino /= 10;
                if (!ino)
                        break;
        }
        const char *prefix = socket ? socket_prefix : pipe_prefix;
        for (int i = socket ? 7 : 5; i >= 0; i--) {
                pos--;
                w->buf[pos & (CAPTURE_PATH_MAX - 1)] = prefix[i & 7];
        }
        w->pos = pos;
        w->state = PATH_AT_ROOT;
}

/* The path of file f (identity mnt_id, ino), written as a record of its own if it was not already and it lies
 * under the daemon's root (a file since deleted has none), or a pipe's or a socket's name. */
static __noinline int send_path(void *ctx, struct loop_ctx *l, struct file *f, __u32 mnt_id, __u64 ino) {
        struct file_key key = { .mnt_id = mnt_id, .ino = ino };
        struct scratch *s = scratch_of(l);
        if (!f || !s || (s->told_mnt_id == mnt_id && s->told_ino == ino))
                return 0;
        if (bpf_map_lookup_elem(&paths_sent, &key)) {
                s->told_mnt_id = mnt_id;
                s->told_ino = ino;
                return 0;
        }
        unsigned long magic = BPF_CORE_READ(f, f_inode, i_sb, s_magic);
        if (magic == PIPEFS_MAGIC || magic == SOCKFS_MAGIC) {
                pseudo_name(&s->pw, magic == SOCKFS_MAGIC, ino);
        } else {
                if (BPF_CORE_READ(f, f_inode, i_nlink) == 0)
                        return 0;
                struct vfsmount *mnt = BPF_CORE_READ(f, f_path.mnt);
                s->pw.d = BPF_CORE_READ(f, f_path.dentry);
                s->pw.m = (struct mount *) ((__u8 *) mnt - bpf_core_field_offset(struct mount, mnt));
                s->pw.pos = CAPTURE_PATH_MAX;
                s->pw.state = PATH_WALKING;
                bpf_loop(PATH_COMPONENTS_MAX, path_step, l, 0);
                s = scratch_of(l);
        }
        if (!s || s->pw.state != PATH_AT_ROOT)
                return 0;
        __u32 pos = s->pw.pos & (CAPTURE_PATH_MAX - 1), len = CAPTURE_PATH_MAX - s->pw.pos;
        if (len == 0) { /* the root itself */
                s->pw.buf[CAPTURE_PATH_MAX - 1] = '/';
                pos = CAPTURE_PATH_MAX - 1;
                len = 1;
        }
        __u8 *out = s->pw.out;
        put_common(out, exit_tp_id[AIO_IO_SUBMIT]);
        *(__s32 *) (out + CAPTURE_EXIT_NR_OFFSET) = -1;
        *(__u32 *) (out + CAPTURE_EXIT_NR_OFFSET + 4) = 0;
        *(__s64 *) (out + CAPTURE_EXIT_RET_OFFSET) = 0;
        struct capture_path *h = (void *) (out + CAPTURE_EXIT_RAW_SIZE);
        h->magic = CAPTURE_PATH_MAGIC;
        h->len = len;
        h->mnt_id = mnt_id;
        h->reserved = 0;
        h->ino = ino;
        len &= CAPTURE_PATH_MAX - 1;
        bpf_probe_read_kernel(out + CAPTURE_EXIT_RAW_SIZE + sizeof(*h), len, s->pw.buf + pos);
        output(ctx, out, CAPTURE_EXIT_RAW_SIZE + sizeof(*h) + len);
        __u8 one = 1;
        bpf_map_update_elem(&paths_sent, &key, &one, BPF_ANY);
        s = scratch_of(l);
        if (s) {
                s->told_mnt_id = mnt_id;
                s->told_ino = ino;
        }
        return 0;
}
