#!/bin/bash
# How small a CPU's ring may be: the highest record rate this machine makes (two one-iocb-a-call workloads and a
# batched one, at once, on a file in /var/tmp), traced at full detail (syscalls, requests, summaries) to the
# file sink on tmpfs, with ring_pages from 4 up, in both capture modes.  Per run: calls a second, output records
# a second, the daemon's CPU while tracing, records lost, and without the capture the calls whose memory was not
# read because a ring was over half full.  The default ring_memory comes from this: the smallest
# ring that lost nothing in every round, times the headroom docs/scaling.md states.
# Timings only, nothing asserted.  As root, from a build directory:
#   top_srcdir=SRC top_builddir=. bash SRC/tests/bench-rings.sh [ROUNDS [SECONDS]]
# BENCH_PAGES="8 16" and BENCH_CAPTURES=bpf narrow it.
set -eu
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
pgrep -x aiotraced >/dev/null && fail "another aiotraced is running: stop it first"
rounds=${1:-3}
secs=${2:-4}
(cd "$top_builddir" && make -s aiotraced tests/aio-workload)
file=/var/tmp/aiotraced-bench.dat
[ -s "$file" ] || dd if=/dev/zero of="$file" bs=1M count=512 oflag=direct status=none
out=/dev/shm/aiotraced-bench-rings
mkdir -p "$out"

run() { # CAPTURE PAGES: prints "calls records lost skipped cpu_s"
        rm -f "$out"/trace.log*
        write_config "$T/r.conf" "capture = \"$1\";" "ring_pages = $2;" 'watch = ( { comm = "aio-bench"; } );' \
                'records = [ "syscalls", "requests", "summary" ];' \
                "output = { sink = \"file\"; path = \"$out/trace.log\"; max_size = \"4G\"; keep = 1; };"
        start_daemon_to_file "$T/r.conf" "$out/trace.log" "$T/r.err"
        local pids=()
        for batch in 1 1 16; do
                "$WORKLOAD" --comm aio-bench --bench "$secs" --file "$file" --depth 16 --batch $batch >/dev/null &
                pids+=($!)
        done
        wait "${pids[@]}"
        kill -INT "$DAEMON_PID"
        wait "$DAEMON_PID" || fail "aiotraced exited with $?"
        DAEMON_PID=
        local cpu
        cpu=$(sed -n 's/^aiotraced: cpu .* system, \([0-9.]*\) s of them while tracing.*/\1/p' "$T/r.err")
        echo "$(stat_of "$out/trace.log" calls) \
$(sed -n 's/^aiotraced: \([0-9]*\) entries written to .*/\1/p' "$T/r.err") $(stat_of "$out/trace.log" lost) \
$(stat_of "$out/trace.log" skipped_reads) $cpu"
}

echo "capture      pages  round    calls/s  records/s  daemon CPU  lost  skipped"
for round in $(seq "$rounds"); do
        for cap in ${BENCH_CAPTURES:-bpf remote-read}; do
                for pages in ${BENCH_PAGES:-4 8 16 32 64 128 512}; do
                        read -r calls records lost skipped cpu < <(run "$cap" "$pages")
                        printf '%-12s %5s  %5s  %9.0f  %9.0f  %9.1f%%  %s  %s\n' "$cap" "$pages" "$round" \
                                "$(echo "$calls / $secs" | bc -l)" "$(echo "$records / $secs" | bc -l)" \
                                "$(echo "100 * $cpu / $secs" | bc -l)" "$lost" "$skipped"
                done
        done
done
rm -rf "$out"
