# Helpers for the tests that run against the real kernel.  Sourced; expects top_builddir and top_srcdir.
set -u

AIOTRACED=${top_builddir:?}/aiotraced
WORKLOAD=${top_builddir}/tests/aio-workload
PYTHON3=${PYTHON3:-python3}
T=$(mktemp -d /tmp/aiotraced-test.XXXXXX)
# The tests of calls ask for the calls alone (the default is requests and summaries).
CALLS='records = [ "syscalls" ];'
DAEMON_PID=

cleanup() {
        [ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
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

hold_and_kill() { # COMM TRUTH: a workload with requests in flight, killed with SIGKILL while it holds them
        coproc HOLD { exec "$WORKLOAD" --comm "$1" --hold --truth "$2" --dir "$T/w1"; }
        local hold_pid=$HOLD_PID line
        read -r line <&"${HOLD[0]}"
        [ "$line" = holding ] || fail "hold workload did not start"
        sleep 0.2
        kill -9 "$hold_pid"
        wait "$hold_pid" 2>/dev/null
        sleep 0.1
}

# JSON on standard output: the started line is a JSON object's message.
start_daemon_json() {
        START_PATTERN='"message":"\[info\] tracking aio starts' start_daemon "$@"
}

# Under valgrind, loading takes seconds.
start_daemon_slow() {
        START_TRIES=6000 start_daemon "$@"
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

write_config() { # FILE, then config lines
        local f=$1
        shift
        printf '%s\n' "$@" >"$f"
}
