#!/bin/bash
# The daemon against the real kernel tracepoints, compared with the workload's own ground truth.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing

compare() {
        "$PYTHON3" "$top_srcdir/tests/compare.py" "$@" || fail "trace differs from the ground truth"
}

echo "== 1. calm workload: every call, iocb and event exact; an unwatched process absent; a migrating thread"
write_config "$T/calm.conf" 'watch = ( { comm = "aio-workload"; } );' 'drain_interval_ms = 5;'
start_daemon "$T/calm.conf" "$T/calm.out"
mkdir -p "$T/w1" "$T/w2"
"$WORKLOAD" --comm aio-unwatched --truth "$T/unwatched.truth" --dir "$T/w2" &
U=$!
"$WORKLOAD" --truth "$T/calm.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 300 || fail "workload failed"
wait $U || fail "unwatched workload failed"
stop_daemon "$T/calm.out"
compare --trace "$T/calm.out" --truth "$T/calm.truth" --unwatched "$T/unwatched.truth" --strict --expect-migration
grep '^\[stats\]' "$T/calm.out"

echo "== 2. full speed: values may be marked, never wrong"
write_config "$T/fast.conf" 'watch = ( { comm = "aio-workload"; } );'
start_daemon "$T/fast.conf" "$T/fast.out"
"$WORKLOAD" --truth "$T/fast.truth" --dir "$T/w1" --linger-ms 300 || fail "workload failed"
stop_daemon "$T/fast.out"
compare --trace "$T/fast.out" --truth "$T/fast.truth"

echo "== 3. a small max_iocbs_per_call truncates, and says so"
write_config "$T/trunc.conf" 'watch = ( { comm = "aio-workload"; } );' 'max_iocbs_per_call = 3;' 'drain_interval_ms = 5;'
start_daemon "$T/trunc.conf" "$T/trunc.out"
"$WORKLOAD" --truth "$T/trunc.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 300 || fail "workload failed"
stop_daemon "$T/trunc.out"
compare --trace "$T/trunc.out" --truth "$T/trunc.truth" --max-iocbs 3 --strict
grep -q '^    \.\.\. 5 more iocbs not read (max_iocbs_per_call = 3)$' "$T/trunc.out" || fail "no truncation line"

echo "== 4. a watched process killed with requests in flight"
start_daemon "$T/calm.conf" "$T/kill.out"
coproc HOLD { exec "$WORKLOAD" --hold --truth "$T/kill.truth" --dir "$T/w1"; }
HOLD_PID_=$HOLD_PID
read -r line <&"${HOLD[0]}"
[ "$line" = holding ] || fail "hold workload did not start"
sleep 0.2
kill -9 "$HOLD_PID_"
wait "$HOLD_PID_" 2>/dev/null
sleep 0.1
stop_daemon "$T/kill.out"
compare --trace "$T/kill.out" --truth "$T/kill.truth"
grep -q "io_submit(.*, 4, .*) \[retval = 4\]" "$T/kill.out" || fail "the submit before the kill is missing"

echo "== 5. watch by pid: the process's threads, including one it creates later"
mkdir -p "$T/w3"
"$WORKLOAD" --truth "$T/pid.truth" --dir "$T/w3" --comm not-by-comm --start-delay-ms 700 --pause-us 30000 \
        --thread-delay-ms 200 --linger-ms 300 &
W=$!
write_config "$T/pid.conf" "watch = ( { pid = $W; } );" 'drain_interval_ms = 5;'
start_daemon "$T/pid.conf" "$T/pid.out"
wait $W || fail "workload failed"
stop_daemon "$T/pid.out"
grep -q "^\[info\] following thread" "$T/pid.out" || fail "the new thread was not followed"
compare --trace "$T/pid.out" --truth "$T/pid.truth" --strict --expect-migration

echo "== 6. a ring that overflows: read + lost = produced, exactly, and every loss reported"
write_config "$T/lost.conf" 'watch = ( { comm = "aio-workload"; } );' 'ring_pages = 1;'
start_daemon "$T/lost.conf" "$T/lost.out"
kill -STOP "$DAEMON_PID" # the kernel keeps writing into rings nobody reads
for i in $(seq 10); do "$WORKLOAD" --dir "$T/w1" --truth "$T/lost.$i.truth" || fail "workload failed"; done
kill -CONT "$DAEMON_PID"
stop_daemon "$T/lost.out"
produced=$(( 2 * $(cat "$T"/lost.*.truth | grep -c '^call ') )) # one enter and one exit per call
sum=$(sed -n 's/^\[lost\] cpu [0-9]*: \([0-9]*\) records lost (ring full)$/\1/p' "$T/lost.out" | awk '{s += $1} END {print s + 0}')
lost=$(sed -n 's/^\[stats\].* lost = \([0-9]*\),.*/\1/p' "$T/lost.out")
samples=$(sed -n 's/^\[stats\].* samples = \([0-9]*\),.*/\1/p' "$T/lost.out")
echo "produced $produced, read $samples, lost $lost (in [lost] lines: $sum)"
[ "$lost" -gt 0 ] || fail "a one-page ring nobody read did not overflow"
[ "$sum" = "$lost" ] || fail "the [lost] lines say $sum, the stats line $lost"
[ $((samples + lost)) = "$produced" ] || fail "read $samples + lost $lost != produced $produced"

echo "PASS"
