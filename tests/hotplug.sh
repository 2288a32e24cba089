#!/bin/bash
# A CPU taken offline and brought back: its perf events die with it and stay dead.  The daemon says so both
# times, opens them again writing into the same ring, and every call made on the CPU before and after is
# traced exactly; with the capture, a load running across the return is all there, read or counted lost; and a
# CPU offline when the daemon starts is traced once it comes online.  It changes the host (CPU 1 goes offline
# for a while): `make check-live`.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
mkdir -p "$T/w1"
CPU1=/sys/devices/system/cpu/cpu1/online
if ! { [ -w "$CPU1" ] && [ "$(cat "$CPU1")" = 1 ] && echo 0 >"$CPU1" 2>/dev/null; }; then
        echo "SKIP: CPU 1 cannot be taken offline here"
        exit 77
fi
echo 1 >"$CPU1"
trap 'echo 1 >"$CPU1" 2>/dev/null; cleanup' EXIT

echo "== CPU 1 out and back, with a reload while it is out"
for cap in bpf remote-read; do
        C="$T/hp-$cap"
        write_config "$C.conf" "capture = \"$cap\";" 'watch = ( { comm = "aio-faults"; } );' "$CALLS" 'drain_interval_ms = 5;'
        start_daemon "$C.conf" "$C.out"
        taskset -c 1 "$WORKLOAD" --comm aio-faults --truth "$C.1.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 200 ||
                fail "workload failed"
        echo 0 >"$CPU1"
        wait_for "$C.out" '^\[info\] CPU 1 went offline at [0-9:.]*: its events went with it'
        # a reload while it is offline: the new set is opened on the CPUs that are there
        kill -HUP "$DAEMON_PID"
        wait_for "$C.out" '^\[info\] reloaded'
        echo 1 >"$CPU1"
        wait_for "$C.out" '^\[info\] CPU 1 is traced again: its calls from [0-9:.]* until now ([0-9.]* s) were not'
        taskset -c 1 "$WORKLOAD" --comm aio-faults --truth "$C.2.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 200 ||
                fail "workload failed"
        stop_daemon "$C.out"
        grep '^\[info\] CPU 1' "$C.out"
        ! grep '^\[lost\]' "$C.out" || fail "$cap: records lost, though no call ran while CPU 1 was out"
        "$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$C.out" --truth "$C.1.truth" --truth "$C.2.truth" \
                --strict || fail "$cap: the calls on CPU 1 before it went offline and after it came back differ"
done
# With the capture, calls made on the CPU once it is back but before its events are, are counted: a load
# running across that moment is all there, traced or lost.
C="$T/hp-across"
dd if=/dev/urandom of="$T/bench.dat" bs=1M count=4 status=none
write_config "$C.conf" 'capture = "bpf";' 'watch = ( { comm = "aio-faults"; } );' "$CALLS"
start_daemon "$C.conf" "$C.out"
echo 0 >"$CPU1"
wait_for "$C.out" '^\[info\] CPU 1 went offline'
echo 1 >"$CPU1"
made=$(taskset -c 1 "$WORKLOAD" --comm aio-faults --bench 2 --file "$T/bench.dat" --depth 4 --batch 1 |
        sed -n 's/^calls=\([0-9]*\) .*/\1/p')
[ -n "$made" ] || fail "the load did not run"
wait_for "$C.out" '^\[info\] CPU 1 is traced again'
stop_daemon "$C.out"
samples=$(stat_of "$C.out" samples)
lost=$(stat_of "$C.out" lost)
grep '^\[lost\]' "$C.out" || true
echo "across the return: $made calls made, $samples records read, $lost lost"
# a record per call, and one for the process's end
[ $((samples + lost)) = $((made + 1)) ] || fail "read $samples + lost $lost != $made calls + the process's end"
# offline when the daemon starts, online later: traced from then on
for cap in bpf remote-read; do
        C="$T/hp-late-$cap"
        echo 0 >"$CPU1"
        write_config "$C.conf" "capture = \"$cap\";" 'watch = ( { comm = "aio-faults"; } );' "$CALLS" 'drain_interval_ms = 5;'
        start_daemon "$C.conf" "$C.out"
        grep -q '^\[info\] tracking aio starts at .*: 1 CPUs (and 1 offline, traced once online)' "$C.out" ||
                fail "$cap: the start does not say CPU 1 is offline"
        echo 1 >"$CPU1"
        wait_for "$C.out" '^\[info\] CPU 1 came online: traced from now on'
        taskset -c 1 "$WORKLOAD" --comm aio-faults --truth "$C.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 200 ||
                fail "workload failed"
        stop_daemon "$C.out"
        ! grep '^\[lost\]' "$C.out" || fail "$cap: records lost on a CPU that came online"
        "$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$C.out" --truth "$C.truth" --strict ||
                fail "$cap: the calls on a CPU that came online after the start differ"
done
echo PASS
