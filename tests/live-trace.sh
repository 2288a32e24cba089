#!/bin/bash
# The daemon against the real kernel tracepoints, compared with the workload's own ground truth: every scenario
# with both sources of the traced memory, the in-kernel capture and process_vm_readv after the call.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing

compare() {
        "$PYTHON3" "$top_srcdir/tests/compare.py" "$@" || fail "trace differs from the ground truth"
}

mkdir -p "$T/w1" "$T/w2" "$T/w3"

scenarios() { # CAPTURE: bpf or remote-read
        local cap=$1 C="$T/$1"
        # With the capture every value is what the call saw; read afterwards, values may only be marked.
        local exact=
        [ "$cap" = bpf ] && exact=--strict

        echo "== $cap 1. calm workload: every call, iocb and event exact; an unwatched process absent; a migrating thread"
        write_config "$C.calm.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-workload"; } );' 'drain_interval_ms = 5;'
        start_daemon "$C.calm.conf" "$C.calm.out"
        "$WORKLOAD" --comm aio-unwatched --truth "$C.unwatched.truth" --dir "$T/w2" &
        local U=$!
        "$WORKLOAD" --truth "$C.calm.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 300 || fail "workload failed"
        wait $U || fail "unwatched workload failed"
        stop_daemon "$C.calm.out"
        compare --trace "$C.calm.out" --truth "$C.calm.truth" --unwatched "$C.unwatched.truth" --strict --expect-migration
        grep '^\[stats\]' "$C.calm.out"

        echo "== $cap 2. full speed, selected by a glob (*, ?, a class), as the kernel's filter takes one"
        write_config "$C.fast.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-w?rk*[a-e]"; } );'
        start_daemon "$C.fast.conf" "$C.fast.out"
        "$WORKLOAD" --comm aio-unwatched --truth "$C.fast-unwatched.truth" --dir "$T/w2" &
        U=$!
        "$WORKLOAD" --truth "$C.fast.truth" --dir "$T/w1" --linger-ms 300 || fail "workload failed"
        wait $U || fail "unwatched workload failed"
        stop_daemon "$C.fast.out"
        compare --trace "$C.fast.out" --truth "$C.fast.truth" --unwatched "$C.fast-unwatched.truth" $exact

        echo "== $cap 3. a small max_iocbs_per_call truncates, and says so"
        write_config "$C.trunc.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-workload"; } );' \
                'max_iocbs_per_call = 3;' 'drain_interval_ms = 5;'
        start_daemon "$C.trunc.conf" "$C.trunc.out"
        "$WORKLOAD" --truth "$C.trunc.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 300 || fail "workload failed"
        stop_daemon "$C.trunc.out"
        compare --trace "$C.trunc.out" --truth "$C.trunc.truth" --max-iocbs 3 --strict
        grep -q '^    \.\.\. 5 more iocbs not read (max_iocbs_per_call = 3)$' "$C.trunc.out" || fail "no truncation line"

        echo "== $cap 4. a watched process killed with requests in flight"
        start_daemon "$C.calm.conf" "$C.kill.out"
        hold_and_kill aio-workload "$C.kill.truth"
        stop_daemon "$C.kill.out"
        compare --trace "$C.kill.out" --truth "$C.kill.truth"
        grep -q "io_submit(.*, 4, .*) \[retval = 4\]" "$C.kill.out" || fail "the submit before the kill is missing"

        echo "== $cap 5. watch by pid: the process's threads, including one it creates later"
        # Read afterwards, a new thread is followed once its fork record is processed: give it time.  The
        # programs select by process in the kernel, so there the thread calls at once.
        local delay=200
        [ "$cap" = bpf ] && delay=0
        "$WORKLOAD" --truth "$C.pid.truth" --dir "$T/w3" --comm not-by-comm --start-when "$C.pid.go" \
                --pause-us 30000 --thread-delay-ms $delay --linger-ms 300 &
        local W=$!
        write_config "$C.pid.conf" "$CALLS" "capture = \"$cap\";" "watch = ( { pid = $W; } );" 'drain_interval_ms = 5;'
        start_daemon "$C.pid.conf" "$C.pid.out"
        touch "$C.pid.go"
        wait $W || fail "workload failed"
        stop_daemon "$C.pid.out"
        if [ "$cap" = remote-read ]; then
                grep -q "^\[info\] following thread" "$C.pid.out" || fail "the new thread was not followed"
        fi
        compare --trace "$C.pid.out" --truth "$C.pid.truth" --strict --expect-migration

        echo "== $cap 6. a ring that overflows: read + lost = produced, and every loss reported"
        write_config "$C.lost.conf" 'records = [ "syscalls", "summary" ];' "capture = \"$cap\";" \
                'watch = ( { comm = "aio-lost"; } );' 'ring_pages = 1;'
        start_daemon "$C.lost.conf" "$C.lost.out"
        kill -STOP "$DAEMON_PID" # the kernel keeps writing into rings nobody reads
        # a name of its own: the totals must not take in another test's workloads (make check -j runs them together)
        for i in $(seq 10); do
                "$WORKLOAD" --comm aio-lost --dir "$T/w1" --truth "$C.lost.$i.truth" || fail "workload failed"
        done
        kill -CONT "$DAEMON_PID"
        stop_daemon "$C.lost.out"
        local low high sum lost samples
        read -r low high < <(records_produced "$cap" "$C".lost.*.truth)
        sum=$(sed -n 's/^\[lost\] cpu [0-9]*: \([0-9]*\) records lost (.*)$/\1/p' "$C.lost.out" | awk '{s += $1} END {print s + 0}')
        lost=$(stat_of "$C.lost.out" lost)
        samples=$(stat_of "$C.lost.out" samples)
        echo "produced $low (and up to $((high - low)) rings' last completions), read $samples, lost $lost (in [lost] lines: $sum)"
        [ "$lost" -gt 0 ] || fail "a one-page ring nobody read did not overflow"
        [ "$sum" = "$lost" ] || fail "the [lost] lines say $sum, the stats line $lost"
        [ $((samples + lost)) -ge "$low" ] && [ $((samples + lost)) -le "$high" ] ||
                fail "read $samples + lost $lost is not produced $low (+ up to $((high - low)) rings' records)"
        # a summary whose counts are short because records were lost says so: with the capture, whose programs
        # count what they could not write (without it the kernel's LOST record comes only once the ring has room
        # again, and may come after the summaries: a known limit)
        if [ "$cap" = bpf ]; then
                "$PYTHON3" - "$top_srcdir/tests" "$C.lost.out" "$C".lost.*.truth <<'PY' || fail "a short summary does not say it is incomplete"
import re, sys
sys.path.insert(0, sys.argv[1])
from compare import parse_truth
sums = {}
for l in open(sys.argv[2]):
    m = re.match(r'^\[.* - (\d+)\] summary over [\d.]+ s(?: \((.*?)\))?: submitted = (\d+)', l)
    if m:
        s = sums.setdefault(int(m[1]), [0, False])
        s[0] += int(m[3])
        s[1] = s[1] or 'incomplete: ' in (m[2] or '')
short = unmarked = 0
for t in sys.argv[3:]:
    process, calls, _ = parse_truth(t)
    want = sum(max(int(c['call']['ret']), 0) for c in calls if c['call']['syscall'] == 'io_submit')
    got, marked = sums.get(int(process['pid']), (want, False))  # no summary at all claims nothing
    if got < want:
        short += 1
        unmarked += not marked
print(f'{len(sums)} processes summarized, {short} of them short, {unmarked} of those not marked incomplete')
sys.exit(1 if unmarked or not short else 0)
PY
        fi

        echo "== $cap 7. real programs' idiom at full speed: stack-local iocb array, reused iocbs and event buffer"
        write_config "$C.idiom.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-workload"; } );' 'ring_pages = 8192;' \
                'drain_interval_ms = 5;'
        start_daemon "$C.idiom.conf" "$C.idiom.out"
        "$WORKLOAD" --idiom 4 --rounds 2000 --truth "$C.idiom.truth" --dir "$T/w1" --linger-ms 300 || fail "workload failed"
        stop_daemon "$C.idiom.out"
        compare --trace "$C.idiom.out" --truth "$C.idiom.truth" $exact


        # Read afterwards, a value is exact only if the daemon reads it before the thread's next call (5 ms later
        # here): on a loaded machine some are marked, which is right, so only the capture must be exact.
        echo "== $cap 8. reload: the new selection at once, a process watched by both traced throughout, a broken config refused"
        write_config "$C.rl.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-a"; } );' 'drain_interval_ms = 5;'
        start_daemon "$C.rl.conf" "$C.rl.out"
        "$WORKLOAD" --comm aio-a --truth "$C.rl-a.truth" --dir "$T/w1" --pause-us 40000 --linger-ms 100 &
        local A=$!
        "$WORKLOAD" --comm aio-b --truth "$C.rl-b1.truth" --dir "$T/w2" --pause-us 5000 || fail "workload failed"
        write_config "$C.rl.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-a"; }, { comm = "aio-b"; } );' \
                'drain_interval_ms = 5;'
        kill -HUP "$DAEMON_PID"
        wait_for "$C.rl.out" '^\[info\] reloaded .*: watching comm == "aio-a", comm == "aio-b"$'
        "$WORKLOAD" --comm aio-b --truth "$C.rl-b2.truth" --dir "$T/w2" --pause-us 5000 || fail "workload failed"
        wait $A || fail "workload failed"
        write_config "$C.rl.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "aio-c" } ' # no closing parenthesis
        kill -HUP "$DAEMON_PID"
        wait_for "$C.rl.out" "^\[info\] reload refused, the running configuration stays: $C.rl.conf:[0-9]*: syntax error"
        "$WORKLOAD" --comm aio-b --truth "$C.rl-b3.truth" --dir "$T/w2" --pause-us 5000 || fail "workload failed"
        stop_daemon "$C.rl.out"
        grep '^\[info\] reload' "$C.rl.out"
        compare --trace "$C.rl.out" --truth "$C.rl-a.truth" --truth "$C.rl-b2.truth" --truth "$C.rl-b3.truth" \
                --unwatched "$C.rl-b1.truth" $exact
}

scenarios bpf
grep -q '^\[info\] tracking aio starts.*memory captured in the kernel' "$T/bpf.calm.out" ||
        fail "capture = \"bpf\" did not say it captures in the kernel"

echo "== 8b. what the capture's programs cost the traced threads, said at exit when the kernel measured it"
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
if [ "$stats_was" = 0 ]; then
        ! grep 'the in-kernel capture:' "$T/bpf.calm.out.err" || fail "a cost reported that the kernel did not measure"
fi
if ! sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null; then
        echo "kernel.bpf_stats_enabled cannot be set here: part skipped"
else
        write_config "$T/cost.conf" "$CALLS" 'capture = "bpf";' 'watch = ( { comm = "aio-workload"; } );'
        start_daemon "$T/cost.conf" "$T/cost.out"
        rc=0
        "$WORKLOAD" --truth "$T/cost.truth" --dir "$T/w1" || rc=$?
        sysctl -q -w kernel.bpf_stats_enabled="$stats_was" # a global switch: back as it was before anything fails
        [ $rc = 0 ] || fail "workload failed"
        stop_daemon "$T/cost.out"
        compare --trace "$T/cost.out" --truth "$T/cost.truth" --strict
        captured=$(stat_of "$T/cost.out" captured)
        read -r runs ns_run < <(sed -n 's/^aiotraced: the in-kernel capture: \([0-9]*\) program runs, [0-9.]* s in the traced threads (\([0-9]*\) ns a run), measured while kernel.bpf_stats_enabled was 1$/\1 \2/p' \
                "$T/cost.out.err")
        echo "captured $captured calls; the programs ran ${runs:-?} times, ${ns_run:-?} ns a run"
        [ -n "${runs:-}" ] || fail "no cost of the capture reported: $(cat "$T/cost.out.err")"
        # an enter and an exit for every captured call, and what other processes' calls ran
        [ "$captured" -gt 0 ] && [ "$runs" -ge $((2 * captured)) ] ||
                fail "the programs ran $runs times for $captured captured calls"
        [ "$ns_run" -gt 0 ] || fail "the programs took no time"
fi

scenarios remote-read

echo "== 8c. many comm patterns (300 exact names, 40 globs): the capture stays on, at start and at reload"
names=$(for i in $(seq 300); do printf '{ comm = "aio-name-%03d"; }, ' "$i"; done)
globs=$(for i in $(seq 40); do printf '{ comm = "aio-glob-%02d*"; }, ' "$i"; done)
write_config "$T/many.conf" "$CALLS" 'drain_interval_ms = 5;' "watch = ( $names $globs { comm = \"aio-last\"; } );"
start_daemon "$T/many.conf" "$T/many.out"
grep -q '^\[info\] tracking aio starts.*memory captured in the kernel' "$T/many.out" ||
        fail "with many comm patterns the capture was not used"
"$WORKLOAD" --comm aio-name-297 --truth "$T/many1.truth" --dir "$T/w1" --pause-us 5000 || fail "workload failed"
"$WORKLOAD" --comm aio-glob-39xy --truth "$T/many2.truth" --dir "$T/w1" --pause-us 5000 || fail "workload failed"
"$WORKLOAD" --comm aio-name-999 --truth "$T/many3.truth" --dir "$T/w1" --pause-us 5000 || fail "workload failed"
kill -HUP "$DAEMON_PID"
wait_for "$T/many.out" '^\[info\] reloaded '
"$WORKLOAD" --comm aio-last --truth "$T/many4.truth" --dir "$T/w1" --pause-us 5000 || fail "workload failed"
stop_daemon "$T/many.out"
! grep -q 'reload refused' "$T/many.out" || fail "a reload to the list that started was refused"
compare --trace "$T/many.out" --truth "$T/many1.truth" --truth "$T/many2.truth" --truth "$T/many4.truth" \
        --unwatched "$T/many3.truth" --strict

echo "== 9. no BPF allowed (CAP_BPF and CAP_SYS_ADMIN dropped, CAP_PERFMON kept)"
if ! setpriv --bounding-set -bpf,-sys_admin true 2>/dev/null; then
        echo "setpriv cannot drop CAP_BPF here: part skipped"
else
        write_config "$T/nobpf.conf" "$CALLS" 'capture = "bpf";' 'watch = ( { comm = "aio-workload"; } );'
        setpriv --bounding-set -bpf,-sys_admin "$AIOTRACED" --stdout -c "$T/nobpf.conf" >"$T/nobpf.out" 2>"$T/nobpf.err"
        rc=$?
        cat "$T/nobpf.err"
        [ $rc = 4 ] || fail "capture = \"bpf\" without CAP_BPF exited with $rc, not 4"
        grep -q 'capture = "bpf": loading the BPF programs: Operation not permitted (needs CAP_BPF' "$T/nobpf.err" ||
                fail "no reason given for refusing to start"

        write_config "$T/auto.conf" "$CALLS" 'watch = ( { comm = "aio-workload"; } );' 'drain_interval_ms = 5;'
        AIOTRACED_WRAP="setpriv --bounding-set -bpf,-sys_admin" start_daemon "$T/auto.conf" "$T/auto.out"
        "$WORKLOAD" --truth "$T/auto.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 300 || fail "workload failed"
        stop_daemon "$T/auto.out"
        grep '^\[info\] no in-kernel capture' "$T/auto.out" || fail "the fallback was not explained"
        grep -q '^\[info\] tracking aio starts.*memory read after each call' "$T/auto.out" || fail "no fallback"
        compare --trace "$T/auto.out" --truth "$T/auto.truth" --strict
fi

echo "PASS"
