# Helpers for the tests that run against the real kernel.  Sourced; expects top_builddir and top_srcdir.
set -u

# absolute: the tests change directory (and containers see the host's tree at the same paths)
top_builddir=$(cd "${top_builddir:?}" && pwd)
top_srcdir=$(cd "${top_srcdir:?}" && pwd)
AIOTRACED=$top_builddir/aiotraced
WORKLOAD=${top_builddir}/tests/aio-workload
PYTHON3=${PYTHON3:-python3}
T=$(mktemp -d /tmp/aiotraced-test.XXXXXX)
# The tests of calls ask for the calls alone (the default is requests and summaries).
CALLS='records = [ "syscalls" ];'
DAEMON_PID=

cleanup() {
        stop_fuse
        [ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
        restore_fs
        [ -n "${KEEP_T:-}" ] || rm -rf "$T"
}
trap cleanup EXIT

fail() {
        echo "FAIL: $*"
        exit 1
}

# Skip (77) only where the privilege really is missing.
need_tracing() {
        if [ "$(id -u)" != 0 ]; then
                echo "SKIP: needs root (perf tracepoint samples of other processes, process_vm_readv)"
                exit 77
        fi
        if ! grep -q tracefs /proc/mounts && [ ! -d /sys/kernel/tracing/events ]; then
                mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || {
                        echo "SKIP: tracefs cannot be mounted here"
                        exit 77
                }
        fi
        # Tests that run a daemon share the machine; the one that needs it alone (need_tracing_alone) waits
        # for the others, whose daemons and workloads would be its load too.
        exec 9>"$top_builddir/tests/live.lock"
        flock -"${1:-s}" -w 1800 9 || fail "the lock of the live tests was held for 30 minutes"
}

# For a test whose every-process daemon must see no other test's load (make check -j runs tests together).
need_tracing_alone() {
        need_tracing x
}

# start_daemon CONFIG OUT: runs aiotraced in the foreground, waits until its events are enabled.
# AIOTRACED_WRAP: a command to run it under (setpriv, ...).
start_daemon() {
        ${AIOTRACED_WRAP:-} "$AIOTRACED" --stdout -c "$1" ${AIOTRACED_ARGS:-} >"$2" 2>"$2.err" &
        DAEMON_PID=$!
        for _ in $(seq "${START_TRIES:-500}"); do
                grep -q "${START_PATTERN:-^\[info\] tracking aio starts}" "$2" 2>/dev/null && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$2.err"; fail "aiotraced exited at start"; }
                sleep 0.01
        done
        fail "aiotraced did not start within $(( ${START_TRIES:-500} / 100 )) s"
}

start_daemon_to_file() { # CONF LOG ERR [ARGS...]: started on its config's file sink LOG, once it says so
        local conf=$1 log=$2 err=$3
        shift 3
        "$AIOTRACED" -c "$conf" "$@" 2>"$err" &
        DAEMON_PID=$!
        for _ in $(seq 500); do
                grep -qs 'tracking aio starts' "$log" && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$err"; fail "aiotraced exited at start"; }
                sleep 0.01
        done
        fail "aiotraced did not start within 5 s"
}

# COMM TRUTH [PROGRAM DIR]: a workload (the AIO one, in $T/w1, unless said) with requests in flight, killed with
# SIGKILL while it holds them
hold_and_kill() {
        coproc HOLD { exec "${3:-$WORKLOAD}" --comm "$1" --hold --truth "$2" --dir "${4:-$T/w1}"; }
        local hold_pid=$HOLD_PID line
        read -r line <&"${HOLD[0]}"
        [ "$line" = holding ] || fail "hold workload did not start"
        sleep 0.2
        kill -9 "$hold_pid"
        wait "$hold_pid" 2>/dev/null
        sleep 0.2
}

# JSON on standard output: the started line is a JSON object's message.
start_daemon_json() {
        START_PATTERN='"message":"\[info\] tracking aio starts' start_daemon "$@"
}

# Under valgrind, loading takes seconds.
start_daemon_slow() {
        START_TRIES=6000 start_daemon "$@"
}

# tests/fuse-stall, the tests' own FUSE server (SIGUSR1: it stalls, printing "stalled"; SIGUSR2: it answers
# again): serving BACKING at MOUNTPOINT once it has mounted, its lines in $T/fuse.out.  stop_fuse ends it, and
# the requests still waiting on it fail; cleanup does too.
FUSE_PID=
start_fuse() { # MOUNTPOINT BACKING
        "$top_builddir/tests/fuse-stall" "$1" "$2" >"$T/fuse.out" 2>&1 &
        FUSE_PID=$!
        wait_for "$T/fuse.out" '^mounted$'
}
stop_fuse() {
        [ -n "$FUSE_PID" ] || return 0
        kill -TERM "$FUSE_PID" 2>/dev/null
        wait "$FUSE_PID" 2>/dev/null
        FUSE_PID=
}

wait_for() { # FILE REGEX: until a line of FILE matches (5 s at most)
        for _ in $(seq 500); do
                grep -q "$2" "$1" 2>/dev/null && return 0
                sleep 0.01
        done
        fail "no line matching '$2' in $1 within 5 s"
}

# For sinks other than standard output: the caller waits for the sink to show the start.
start_daemon_bg() {
        "$AIOTRACED" -c "$1" >"$T/daemon.out" 2>"$T/daemon.err" &
        DAEMON_PID=$!
        DAEMON_PID_SEEN=$DAEMON_PID
}

stop_daemon_bg() {
        kill -INT "$DAEMON_PID"
        wait "$DAEMON_PID"
        local rc=$?
        DAEMON_PID=
        cat "$T/daemon.err"
        [ "$rc" = 0 ] || fail "aiotraced exited with $rc"
}

stop_daemon() {
        kill -INT "$DAEMON_PID"
        wait "$DAEMON_PID"
        local rc=$?
        DAEMON_PID=
        [ "$rc" = 0 ] || { cat "$1.err"; fail "aiotraced exited with $rc"; }
        grep -q '\[stats\] ' "$1" || fail "no stats line at exit" # a line of its own, or a JSON message
}

copy_source() { # DEST: the source tree as git has it (with what is not ignored yet), or the tarball's tree
        mkdir -p "$1"
        # a checkout's top only: make distcheck unpacks the tarball inside the checkout's ignored build tree
        if [ "$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$top_srcdir" && pwd -P)" ]; then
                (cd "$top_srcdir" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$1"
        else
                tar -C "$top_srcdir" -cf - . | tar -xf - -C "$1"
        fi
        [ ! -f "$1/Makefile" ] || (cd "$1" && make -s distclean >/dev/null 2>&1)
        [ -x "$1/configure" ] || (cd "$1" && autoreconf -fi >/dev/null 2>&1) || fail "autoreconf in the copy"
}

stat_of() { # FILE NAME: the [stats] line's value of NAME (the line alone, or as a JSON object's message)
        sed -n "s/.*\[stats\] \(.*, \)\?$2 = \([0-9]*\)\(,.*\|\)$/\2/p; s/.*\[stats\] \(.*, \)\?$2 = \([0-9]*\)\(,.*\|\)\"}$/\2/p" "$1" | head -1
}

# CAPTURE TRUTH...: the records the workloads of the truth files made a tracer write, as "LOW HIGH".  A record
# a call with the capture (bpf: its enter travels in its exit's record), an enter and an exit without; each
# workload's end; and with the capture up to one more a context set up, for an AIO ring that holds completions
# no call looked at when it goes (io_destroy, exit_group): the kernel's timing, which no workload sees.
records_produced() {
        local cap=$1
        shift
        cat "$@" | awk -v cap="$cap" -v workloads=$# '
                /^call / { calls++ }
                /^call syscall=io_setup .* ret=0 / { rings++ }
                END { low = (cap == "bpf" ? 1 : 2) * calls + workloads; print low, low + (cap == "bpf" ? rings : 0) }'
}

write_config() { # FILE, then config lines
        local f=$1
        shift
        printf '%s\n' "$@" >"$f"
}

# container_boot ROOT: systemd as PID 1 in a container (systemd-nspawn over a volatile overlay of ROOT, which
# stays as it was), allowed to trace; sets C, the command prefix that runs a command inside, and L, its init's
# pid.  container_stop powers it off.  "/" boots this machine's own root (through a bind mount: nspawn refuses
# -D / itself).  CT_TRACEFS=no: without the host's tracefs bound in.
container_boot() {
        local root=$1 bind=
        CT_NAME=aiot$$
        CT_CG=
        for h in systemd unified; do # a cgroup of its own, removed afterwards
                if [ -d "/sys/fs/cgroup/$h" ]; then
                        mkdir -p "/sys/fs/cgroup/$h/$CT_NAME"
                        echo $$ >"/sys/fs/cgroup/$h/$CT_NAME/cgroup.procs"
                        CT_CG="$CT_CG /sys/fs/cgroup/$h/$CT_NAME"
                fi
        done
        if [ "$root" = / ]; then
                CT_ROOT=/var/tmp/aiotraced-root.$$
                mkdir -p "$CT_ROOT"
                bind=yes
        else
                CT_ROOT=$root
        fi
        # /run here is not a tmpfs: nspawn's --volatile would take it for a disk it must not touch
        local tracefs=--bind-ro=/sys/kernel/tracing
        [ "${CT_TRACEFS:-yes}" = no ] && tracefs=--setenv=NO_TRACEFS=1
        unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run && { [ -z "$2" ] || mount --bind / "$0"; } &&
                exec systemd-nspawn -q -D "$0" -M "$1" --volatile=overlay --register=no --keep-unit --console=passive \
                        --system-call-filter="perf_event_open bpf" --capability=CAP_PERFMON,CAP_BPF \
                        "$3" -b systemd.mask=postgresql.service' "$CT_ROOT" "$CT_NAME" "$bind" "$tracefs" \
                >"$T/nspawn.log" 2>&1 &
        CT_NSPAWN=$!
        trap container_stop EXIT
        L=
        for _ in $(seq 400); do
                L=$(pgrep -P "$CT_NSPAWN" -x systemd | head -1)
                [ -n "$L" ] && break
                sleep 0.05
        done
        [ -n "$L" ] || { cat "$T/nspawn.log"; fail "the container's systemd did not start"; }
        C="nsenter -t $L -a"
        for _ in $(seq 400); do
                $C systemctl is-system-running --wait 2>/dev/null | grep -qE 'running|degraded' && return 0
                sleep 0.05
        done
        fail "the container's systemd did not finish booting"
}

container_stop() {
        container_poweroff
        cleanup
}
container_poweroff() { # the container gone, $T kept
        [ -n "${L:-}" ] && nsenter -t "$L" -a systemctl poweroff --no-block >/dev/null 2>&1
        L=
        for _ in $(seq 100); do kill -0 "$CT_NSPAWN" 2>/dev/null || break; sleep 0.05; done
        kill -9 "$CT_NSPAWN" 2>/dev/null
        wait "$CT_NSPAWN" 2>/dev/null
        echo $$ >/sys/fs/cgroup/systemd/cgroup.procs 2>/dev/null
        echo $$ >/sys/fs/cgroup/unified/cgroup.procs 2>/dev/null
        for c in $CT_CG; do find "$c" -depth -type d -exec rmdir {} + 2>/dev/null; done
        [ "$CT_ROOT" = /var/tmp/aiotraced-root.$$ ] && rmdir "$CT_ROOT" 2>/dev/null
}

# A journald of the test's own, in a mount namespace of its own (the host's journal sees nothing): the script
# runs again in a new namespace (call it at the top level, with "$@"), mounts tmpfs over journald's places and
# starts one.  start_journald and stop_journald for a test that stops it; J is its pid.
private_journald() {
        [ -x /lib/systemd/systemd-journald ] || { echo "SKIP: no systemd-journald"; exit 77; }
        command -v journalctl >/dev/null || { echo "SKIP: no journalctl"; exit 77; }
        if [ "${AIOTRACED_PRIVATE_JOURNAL:-}" != 1 ]; then
                AIOTRACED_PRIVATE_JOURNAL=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
        fi
        mount -t tmpfs tmpfs /run/systemd
        mount -t tmpfs tmpfs /run/log
        mkdir -p /var/log/journal && mount -t tmpfs tmpfs /var/log/journal
        mkdir -p /run/systemd/journal /run/systemd/journald.conf.d
        printf '[Journal]\nStorage=volatile\nRateLimitBurst=0\n' >/run/systemd/journald.conf.d/test.conf
        J=
        trap 'cleanup; [ -n "$J" ] && kill -9 "$J" 2>/dev/null' EXIT
        start_journald
}
start_journald() {
        /lib/systemd/systemd-journald &
        J=$!
        for _ in $(seq 500); do [ -S /run/systemd/journal/socket ] && return 0; sleep 0.01; done
        fail "journald did not start"
}
stop_journald() { kill "$J"; wait "$J" 2>/dev/null; J=; }
journal_started() { # until the daemon's "started" entry is in the private journal
        for _ in $(seq 500); do
                journalctl --sync
                journalctl -D /run/log/journal _PID="$DAEMON_PID" MESSAGE_ID=61b2eff4723e4dc08f4bf5aaaf9f5d30 -q |
                        grep -q . && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$T/daemon.err"; fail "aiotraced exited at start"; }
                sleep 0.01
        done
        fail "no started entry within 5 s"
}

# The kernel's protections against files planted in world-writable directories (fs.protected_*), off for a test
# that plays the attacker they would stop: what the daemon does must hold without them.  Restored at exit.
unprotect_fs() {
        local s
        PROTECTED_SAVED=
        for s in fifos regular hardlinks symlinks; do
                PROTECTED_SAVED="$PROTECTED_SAVED $s=$(cat /proc/sys/fs/protected_$s)"
                echo 0 >/proc/sys/fs/protected_$s
        done
}
restore_fs() {
        local s
        for s in ${PROTECTED_SAVED:-}; do echo "${s#*=}" >"/proc/sys/fs/protected_${s%%=*}"; done
        PROTECTED_SAVED=
}
as_nobody() { # COMMAND...: run as nobody:nogroup, no other group
        setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
# A python another user can run: the system's, not one under root's home (pyenv)
NOBODY_PYTHON3=/usr/bin/python3
