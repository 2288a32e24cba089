#!/bin/bash
# A FUSE server that stops answering (tests/fuse-stall, as a hung sshfs or rclone mount another user made with
# allow_other) beside the daemon must not freeze it: in both capture modes, while a watched program's requests
# on the FUSE file, and children of a program run from that mount, wait on the stalled server, root's workload on
# a local file is recorded whole, nothing is lost, and SIGTERM stops the daemon within 2 s.  As root.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }

mkdir -p "$T/fm" "$T/local"
# the workload as the mount's file: a program run from the mount, and 2 MiB of it to read with O_DIRECT
cp "$WORKLOAD" "$T/backing"
# root's workload from a copy of its own: the exe entry watches it, and not the other tests' aio-workload
# running beside this one (whose calls, read afterwards, would put the daemon behind)
LOCAL=$T/aio-workload-local
cp "$WORKLOAD" "$LOCAL"
truncate -s 2M "$T/backing"
dd if=/dev/urandom of="$T/local/data" bs=1M count=8 status=none

for cap in bpf remote-read; do
        echo "== capture = \"$cap\""
        start_fuse "$T/fm" "$T/backing"
        # an exe entry: without the capture, each new process's executable is looked at from user space
        write_config "$T/f.conf" "capture = \"$cap\";" 'records = [ "requests", "summary" ];' 'drain_interval_ms = 5;' \
                "watch = ( { comm = \"aio-fuse\"; }, { comm = \"aio-local\"; }, { comm = \"aio-load\"; }, { exe = \"$LOCAL\"; } );"
        start_daemon "$T/f.conf" "$T/f.out"
        rm -f "$T/go"
        # requests on the mount's file, running while the server stalls (they then wait on it); paced, so that
        # without the capture the daemon is not behind (and skipping reads) when root's workload starts
        "$T/fm/file" --comm aio-fuse --bench 30 --file "$T/fm/file" --depth 1 --batch 1 --pause-us 1000 \
                >/dev/null 2>&1 &
        bench_fuse=$!
        # a program run from the mount, whose children make their requests (on a local file) once it stalls
        "$T/fm/file" --comm aio-fuse --fan-out 20 --dir "$T/local" --start-when "$T/go" >/dev/null 2>&1 &
        fan_fuse=$!
        sleep 0.5
        kill -USR1 "$FUSE_PID"
        wait_for "$T/fuse.out" '^stalled$'
        touch "$T/go"
        sleep 0.5 # the daemon's drains meet the mount's file, and the new processes
        # root's workloads on local files: every kind of call, exact in any mode; and with the capture, a load
        # (a pause between calls: read afterwards, a value is vouched for only until the thread's next call)
        "$LOCAL" --comm aio-local --truth "$T/local.truth" --dir "$T/local" --pause-us 30000 --linger-ms 200 ||
                fail "$cap: the local workload failed"
        : >"$T/local.out"
        if [ $cap = bpf ]; then
                "$LOCAL" --comm aio-load --bench 2 --file "$T/local/data" --depth 16 --batch 4 >"$T/local.out" ||
                        fail "$cap: the local load failed"
                cat "$T/local.out"
        fi
        sleep 0.3
        start=$(date +%s%N)
        kill -TERM "$DAEMON_PID"
        for _ in $(seq 200); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.01; done
        took=$((($(date +%s%N) - start) / 1000000))
        kill -0 "$DAEMON_PID" 2>/dev/null && fail "$cap: SIGTERM did not stop the daemon within 2 s, the server stalled"
        wait "$DAEMON_PID" || fail "$cap: the daemon did not stop cleanly"
        DAEMON_PID=
        echo "stopped $took ms after SIGTERM"
        stop_fuse # the stalled requests fail: the mount's programs end
        wait "$bench_fuse" "$fan_fuse" 2>/dev/null
        lost=$(stat_of "$T/f.out" lost)
        echo "$cap: records lost: $lost, calls whose memory was not read: $(stat_of "$T/f.out" skipped_reads)"
        if [ "$lost" != 0 ]; then
                # whose records crossed the rings: with an exe entry and no capture, every process's calls do
                grep '^\[lost\]\|^\[stats\]' "$T/f.out"
                sed -n 's/^\[\([^]]* - [0-9]*\)\].*/\1/p' "$T/f.out" | sort | uniq -c | sort -rn | head -5
                fail "$cap: records were lost beside the stalled mount"
        fi
        grep -v '^\[aio-load' "$T/f.out" >"$T/f.local"
        exact=--complete # read afterwards: every request, some values marked
        [ $cap = bpf ] && exact=--strict
        "$PYTHON3" "$top_srcdir/tests/compare_requests.py" --trace "$T/f.local" --truth "$T/local.truth" $exact ||
                { grep '^\[stats\]' "$T/f.out"
                  fail "$cap: root's requests beside the stalled mount differ from the workload's truth"; }
        [ $cap = bpf ] || continue
        want=$(sed -n 's/^calls=[0-9]* iocbs=\([0-9]*\) .*/\1/p' "$T/local.out")
        got=$(grep -c '^\[aio-load - [0-9]*\] request completed: op = pread' "$T/f.out")
        summed=$(sed -n 's/^\[aio-load - [0-9]*\] summary over .*, completed = \([0-9]*\) .*/\1/p' "$T/f.out" |
                awk '{s += $1} END {print s + 0}')
        echo "$cap: the load made $want requests; $got recorded, $summed in its summaries"
        [ -n "$want" ] && [ "$want" -gt 1000 ] && [ "$got" = "$want" ] && [ "$summed" = "$want" ] ||
                fail "$cap: the load was not recorded whole beside the stalled mount"
done
echo PASS
