/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's types the programs read.
 * Part of bpf/capture.bpf.c, which includes it. */

/* The few kernel fields the program reads to name an fd's open file, relocated by libbpf against the running
 * kernel's BTF at load (CO-RE): no kernel headers here or at run time. */
struct dentry;
struct vfsmount {
        struct dentry *mnt_root;
} __attribute__((preserve_access_index));
struct mount {
        struct mount *mnt_parent;
        struct dentry *mnt_mountpoint;
        struct vfsmount mnt;
        int mnt_id;
} __attribute__((preserve_access_index));
struct super_block {
        __u32 s_dev;
        unsigned long s_magic;
} __attribute__((preserve_access_index));
struct inode {
        unsigned long i_ino;
        unsigned int i_nlink;
        struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct qstr {
        __u32 len;
        const unsigned char *name;
} __attribute__((preserve_access_index));
struct dentry {
        struct dentry *d_parent;
        struct qstr d_name;
        struct inode *d_inode;
} __attribute__((preserve_access_index));
struct path {
        struct vfsmount *mnt;
        struct dentry *dentry;
} __attribute__((preserve_access_index));
struct file {
        struct path f_path;
        struct inode *f_inode;
} __attribute__((preserve_access_index));
struct fdtable {
        unsigned int max_fds;
        struct file **fd;
} __attribute__((preserve_access_index));
typedef struct {
        int counter;
} atomic_t;
struct files_struct {
        atomic_t count; /* the tasks that share the table */
        struct fdtable *fdt;
} __attribute__((preserve_access_index));
struct mm_struct {
        struct file *exe_file;
} __attribute__((preserve_access_index));
/* A cgroup's directory: its name, its id (the inode number user space sees), its parent (renamed __parent in
 * 6.15). */
struct kernfs_node {
        const char *name;
        __u64 id;
        struct kernfs_node *__parent;
} __attribute__((preserve_access_index));
struct kernfs_node___old {
        struct kernfs_node *parent;
} __attribute__((preserve_access_index));
struct cgroup {
        struct kernfs_node *kn;
} __attribute__((preserve_access_index));
struct css_set {
        struct cgroup *dfl_cgrp; /* the task's cgroup of the v2 hierarchy */
} __attribute__((preserve_access_index));
/* A task's pid in each namespace it is in, from the first (level 0) to its own. */
struct ns_common {
        unsigned int inum;
} __attribute__((preserve_access_index));
struct pid_namespace {
        struct ns_common ns;
} __attribute__((preserve_access_index));
struct upid {
        int nr;
        struct pid_namespace *ns;
} __attribute__((preserve_access_index));
struct pid {
        unsigned int level;
        struct upid numbers[1];
} __attribute__((preserve_access_index));
struct task_struct {
        unsigned int flags;
        int pid;
        int tgid;
        __u64 start_boottime;
        char comm[16];
        struct task_struct *group_leader;
        struct pid *thread_pid;
        struct files_struct *files;
        struct mm_struct *mm;
        struct css_set *cgroups;
} __attribute__((preserve_access_index));
/* An io_uring request, as io_uring_submit_req sees it after its prep: the SQE's fd, and the op's own part
 * (struct io_rw for reads and writes, struct io_sync for fsync and its kin) where the prep put the offset and
 * length. */
struct io_cqe {
        __u64 user_data;
        int fd;
} __attribute__((preserve_access_index));
struct io_ring_ctx {
        unsigned int flags;            /* IORING_SETUP_* */
        struct mm_struct *mm_account; /* the memory of the process that made it, held as long as the ring */
} __attribute__((preserve_access_index));
struct io_kiocb {
        struct file *file;
        __u8 opcode;
        __u64 flags; /* 32 bits on older kernels: libbpf sizes the load to the running kernel's */
        struct io_ring_ctx *ctx;
        struct io_cqe cqe;
        void *async_data;
} __attribute__((preserve_access_index));
struct kiocb {
        struct file *ki_filp;
        long long ki_pos;
        void *ki_complete;
} __attribute__((preserve_access_index));
/* AIO's request (fs/aio.c): its kiocb first, and the event it will complete with, whose obj is the user's
 * iocb */
struct io_event___k {
        __u64 data;
        __u64 obj;
} __attribute__((preserve_access_index));
struct aio_kiocb {
        struct kiocb rw;
        struct io_event___k ki_res;
} __attribute__((preserve_access_index));
struct io_rw {
        struct kiocb kiocb;
        __u64 addr;
        __u32 len;
        int flags;
} __attribute__((preserve_access_index));
/* A vectored read or write's iovecs, as the prep imported them (kernels since 6.10: before, the import came at
 * issue, and io_async_rw had no iter of its own) */
struct iov_iter {
        unsigned long count;
} __attribute__((preserve_access_index));
struct io_async_rw {
        struct iov_iter iter;
} __attribute__((preserve_access_index));
struct io_sync {
        long long len;
        long long off;
        int flags;
} __attribute__((preserve_access_index));

/* The user registers a thread entered the kernel with; x86-64 passes a syscall's arguments in these.  Read
 * only where the running kernel's BTF has them. */
struct pt_regs {
        unsigned long di, si, dx, r10, r8, r9;
} __attribute__((preserve_access_index));
