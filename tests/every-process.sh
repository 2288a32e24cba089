#!/bin/bash
# The packaged default, every process watched, with the capture in the kernel: a process that ended before the
# daemon read its records (the daemon stopped meanwhile) is named in each of them, and in its summary, by the
# name its calls were made under; the daemon cannot ask /proc for it any more.  Runs alone: the daemon watches
# every process, another test's too.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing_alone

mkdir -p "$T/w"
write_config "$T/all.conf" 'records = [ "syscalls", "requests", "summary" ];' 'capture = "bpf";' 'ring_pages = 1024;'
start_daemon "$T/all.conf" "$T/all.out"
kill -STOP "$DAEMON_PID"
"$WORKLOAD" --comm aio-gone --truth "$T/gone.truth" --dir "$T/w" || { kill -CONT "$DAEMON_PID"; fail "workload failed"; }
kill -CONT "$DAEMON_PID"
stop_daemon "$T/all.out"
pid=$(sed -n 's/^process pid=\([0-9]*\) .*/\1/p' "$T/gone.truth")
[ -n "$pid" ] || fail "no pid in the workload's truth"
[ "$(stat_of "$T/all.out" lost)" = 0 ] || fail "records lost"
calls=$(grep -c '^call ' "$T/gone.truth")
named=$(grep -Ec "^\[aio-gone - $pid - [0-9]+\] io_" "$T/all.out")
grep -E "^\[[^]]* - $pid( - [0-9]+)?\] " "$T/all.out" | grep -v '^\[aio-gone - ' >"$T/others" || true
others=$(wc -l <"$T/others")
echo "the workload's $calls calls: $named traced under its name, $others lines of its pid under another"
[ "$named" = "$calls" ] || fail "$named of the workload's $calls calls traced under its name"
[ "$others" = 0 ] || fail "lines of pid $pid under another name: $(head -3 "$T/others")"
grep -Eq "^\[aio-gone - $pid\] summary over " "$T/all.out" || fail "no summary under the workload's name"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --trace "$T/all.out" --truth "$T/gone.truth" --strict ||
        fail "the workload's requests differ from its truth"
echo PASS
