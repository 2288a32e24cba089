/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benchmark's ceiling for any tracer built on the tracepoints aiotraced uses: a BPF program that does
 * nothing (it returns 0, so the kernel writes no sample) attached to each tracepoint named, as the daemon
 * attaches its syscall programs (one perf event on CPU 0: a tracepoint runs its programs on whatever CPU it
 * fires).  What a load pays beside it is what the tracepoints cost before a program does
 * anything: the syscalls' slow path, the tracepoint, building its record and calling the program.
 *   tp-floor TRACEFS_EVENT...     (as root; e.g. syscalls/sys_enter_io_submit; runs until SIGINT or SIGTERM)
 * It prints "attached N" once every program is enabled.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int tracepoint_id(const char *event) {
        static const char *const roots[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
                char path[512];
                snprintf(path, sizeof(path), "%s/%s/id", roots[i], event);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                int id = -1;
                if (fscanf(f, "%d", &id) != 1)
                        id = -1;
                fclose(f);
                return id;
        }
        return -1;
}

static int load_nothing(void) {
        struct bpf_insn insns[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        union bpf_attr a = {
                .prog_type = BPF_PROG_TYPE_TRACEPOINT,
                .insns = (uint64_t) (uintptr_t) insns,
                .insn_cnt = sizeof(insns) / sizeof(insns[0]),
                .license = (uint64_t) (uintptr_t) "GPL",
        };
        return (int) syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

static volatile sig_atomic_t stop;
static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: tp-floor TRACEFS_EVENT...\n");
                return 2;
        }
        int prog = load_nothing();
        if (prog < 0) {
                fprintf(stderr, "tp-floor: loading the program: %s\n", strerror(errno));
                return 1;
        }
        int attached = 0;
        for (int i = 1; i < argc; i++) {
                int id = tracepoint_id(argv[i]);
                if (id < 0) {
                        fprintf(stderr, "tp-floor: no tracepoint %s\n", argv[i]);
                        return 1;
                }
                struct perf_event_attr attr = {
                        .type = PERF_TYPE_TRACEPOINT,
                        .size = sizeof(attr),
                        .config = (uint64_t) id,
                        .sample_period = 1,
                        .sample_type = PERF_SAMPLE_RAW,
                        .disabled = 1,
                };
                int fd = (int) syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
                if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
                        fprintf(stderr, "tp-floor: attaching to %s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                attached++;
        }
        sigset_t mask, old;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, &old);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        printf("attached %d\n", attached);
        fflush(stdout);
        while (!stop)
                sigsuspend(&old);
        return 0;
}
