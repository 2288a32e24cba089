#!/bin/bash
# What each source of the traced memory costs the traced program: fio with libaio, untraced and traced by
# aiotraced (capture = "bpf", then "remote-read"), alternated in every round; medians of the paired ratios.
# Timings only: nothing is asserted.  Usage, as root, from a build directory:
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench-capture.sh [ROUNDS [SECONDS]]
set -eu
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
command -v fio >/dev/null || { echo "SKIP: fio is not installed (apt-get install fio)"; exit 77; }
rounds=${1:-5}
secs=${2:-3}
file=/var/tmp/aiotraced-bench.dat
[ -s "$file" ] || fio --name=prep --filename="$file" --size=512m --rw=write --bs=1m --direct=1 >/dev/null

fio_iops() { # extra fio options...
        fio --name=bench --filename="$file" --size=512m --ioengine=libaio --rw=randread --bs=4k --direct=1 \
                --iodepth=16 --time_based --runtime="$secs" --output-format=json "$@" |
                "$PYTHON3" -c 'import json, sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

traced() { # CAPTURE, then fio options: prints "iops daemon_cpu_s calls lost"
        local cap=$1
        shift
        write_config "$T/b.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { comm = "fio"; } );' 'ring_pages = 256;'
        start_daemon "$T/b.conf" /dev/shm/aiotraced-bench.out
        local iops
        iops=$(fio_iops "$@")
        local cpu
        cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$DAEMON_PID/stat")
        stop_daemon /dev/shm/aiotraced-bench.out
        local stats
        stats=$(grep '^\[stats\]' /dev/shm/aiotraced-bench.out)
        echo "$iops $cpu $(sed -n 's/.* calls = \([0-9]*\),.* lost = \([0-9]*\),.*/\1 \2/p' <<<"$stats")"
        rm -f /dev/shm/aiotraced-bench.out
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for shape in "one iocb per call:" "batched:--iodepth_batch_submit=16 --iodepth_batch_complete_max=16"; do
        name=${shape%%:*}
        opts=${shape#*:}
        : >"$T/bpf.r" >"$T/remote.r" >"$T/base"
        for r in $(seq "$rounds"); do
                # shellcheck disable=SC2086
                base=$(fio_iops $opts)
                read -r b_iops b_cpu b_calls b_lost < <(traced bpf $opts)
                read -r r_iops r_cpu r_calls r_lost < <(traced remote-read $opts)
                echo "  $name round $r: untraced $base IOPS; bpf $b_iops (cpu ${b_cpu}s, $b_calls calls, lost $b_lost);" \
                     "remote-read $r_iops (cpu ${r_cpu}s, $r_calls calls, lost $r_lost)"
                echo "$base" >>"$T/base"
                awk -v t="$b_iops" -v u="$base" 'BEGIN {print t / u}' >>"$T/bpf.r"
                awk -v t="$r_iops" -v u="$base" 'BEGIN {print t / u}' >>"$T/remote.r"
        done
        echo "$name: untraced median $(median <"$T/base") IOPS; paired ratio traced/untraced, median of $rounds:" \
             "bpf $(median <"$T/bpf.r"), remote-read $(median <"$T/remote.r")"
done
