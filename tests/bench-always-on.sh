#!/bin/bash
# The always-on default at the highest request rates this machine reaches: the packaged config
# (etc/aiotraced.conf: every process watched, one summary per process a minute, summed in the kernel) against
# the peer that keeps its histogram in the kernel too (bpftrace), alternated, each paired against no tracer in
# the same round.  Three loads: fio reading /dev/zero with io_uring and with libaio (memory speed, where a
# tracepoint itself is dear), and fio's libaio O_DIRECT random 4 KiB reads of a file (disk speed).
#
# Prints per round, then the medians: the paired ratio (IOPS traced / untraced) of each tracer, the daemon's
# CPU per million requests, the capture's program time per request in the traced threads (its run time over
# the requests, with kernel.bpf_stats_enabled = 1 in aiotraced's runs), what it lost, how long it took to
# start tracing, and to load the rest of its programs after (each load runs once that is done).  Timings only:
# nothing is asserted.  As root, from a build directory, alone on the machine:
#   top_srcdir=SRC top_builddir=. bash SRC/tests/bench-always-on.sh [ROUNDS [SECONDS]]
set -eu
. "${top_srcdir:?}/tests/lib.sh"
need_tracing_alone
pgrep -x aiotraced >/dev/null && fail "another aiotraced is running: stop it first"
rounds=${1:-7}
secs=${2:-5}
command -v fio >/dev/null || apt-get install -y -q fio >/dev/null
command -v bpftrace >/dev/null || apt-get install -y -q bpftrace >/dev/null
BT_PID=
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo -)
trap '[ -n "$BT_PID" ] && kill -9 "$BT_PID" 2>/dev/null; [ "$stats_was" = - ] || sysctl -q -w kernel.bpf_stats_enabled="$stats_was"; cleanup' EXIT
(cd "$top_builddir" && make -s aiotraced)
file=/var/tmp/aiotraced-bench.dat
[ -s "$file" ] || fio --name=prep --filename="$file" --size=512m --rw=write --bs=1m --direct=1 >/dev/null

run_load() { # LOAD: prints "iops ios"
        local args
        case $1 in
        zero_uring) args="--filename=/dev/zero --size=1g --rw=read --ioengine=io_uring" ;;
        zero_libaio) args="--filename=/dev/zero --size=1g --rw=read --ioengine=libaio" ;;
        file_libaio) args="--filename=$file --size=512m --rw=randread --direct=1 --ioengine=libaio" ;;
        esac
        # shellcheck disable=SC2086
        fio --name=bench $args --bs=4k --iodepth=16 --time_based --runtime="$secs" --output-format=json |
                "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin)["jobs"][0]["read"]; print(round(r["iops"]), r["total_ios"])'
}

# bpftrace keeping a latency histogram in the kernel: io_uring's requests by request, libaio's io_submit calls
bt_script() { # LOAD
        case $1 in
        zero_uring) cat <<'BT' ;;
tracepoint:io_uring:io_uring_submit_req { @start[args->req] = nsecs; }
tracepoint:io_uring:io_uring_complete /@start[args->req]/ { @lat = hist(nsecs - @start[args->req]); delete(@start[args->req]); }
BT
        *) cat <<'BT' ;;
tracepoint:syscalls:sys_enter_io_submit { @start[tid] = nsecs; }
tracepoint:syscalls:sys_exit_io_submit /@start[tid]/ { @lat = hist(nsecs - @start[tid]); delete(@start[tid]); }
tracepoint:syscalls:sys_exit_io_getevents /args->ret > 0/ { @reaped = sum(args->ret); }
BT
        esac
}

# every thread's time on a CPU, in ns (the scheduler's count: ticks are too coarse for an idle daemon)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {print s}'; }

# The daemon started for summaries alone loads its programs with records in a thread once it traces (seconds of
# the kernel's verifier, once a start): the steady state is measured after it, and that load said apart.
settled() { # PID: waits until its CPU time stops growing; prints the seconds it took
        local t0 last now
        t0=$(date +%s%N)
        last=$(cpu_ns "$1")
        for _ in $(seq 150); do
                sleep 0.2
                now=$(cpu_ns "$1")
                [ $((now - last)) -lt 5000000 ] && break # under 2.5 % of a CPU: its drains alone
                last=$now
        done
        awk -v ns="$(($(date +%s%N) - t0))" 'BEGIN {printf "%.1f", ns / 1e9}'
}

# LOAD TRACER: the load under the tracer (none, aiotraced, bpftrace); prints "iops ios cpu_s lost start_ms"
run_with() {
        local load=$1 tracer=$2 r iops ios before after
        case $tracer in
        none)
                read -r iops ios < <(run_load "$load")
                echo "$iops $ios 0 0 0 0" ;;
        aiotraced)
                local t0
                t0=$(date +%s%N)
                start_daemon "$top_srcdir/etc/aiotraced.conf" "$T/ao.out"
                local start_ms=$((($(date +%s%N) - t0) / 1000000)) loaded_s
                loaded_s=$(settled "$DAEMON_PID")
                before=$(cpu_ns "$DAEMON_PID")
                read -r iops ios < <(run_load "$load")
                after=$(cpu_ns "$DAEMON_PID")
                stop_daemon "$T/ao.out"
                echo "$iops $ios $(((after - before)))e-9 $(stat_of "$T/ao.out" lost) $start_ms $loaded_s" ;;
        bpftrace)
                bt_script "$load" >"$T/bt.bt"
                bpftrace "$T/bt.bt" >"$T/bt.out" 2>&1 &
                BT_PID=$!
                for _ in $(seq 500); do grep -q 'Attaching' "$T/bt.out" 2>/dev/null && break; sleep 0.01; done
                sleep 0.5
                read -r iops ios < <(run_load "$load")
                kill -INT "$BT_PID"
                wait "$BT_PID" 2>/dev/null || true
                BT_PID=
                echo "$iops $ios 0 0 0 0" ;;
        esac
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "-"}'; }

for load in ${BENCH_LOADS:-zero_uring zero_libaio file_libaio}; do
        echo "== $load: $rounds rounds of $secs s, the order turned every round"
        : >"$T/ao.r"; : >"$T/bt.r"; : >"$T/cpu.r"; : >"$T/lost.r"; : >"$T/start.r"; : >"$T/base.r"; : >"$T/loaded.r"
        for round in $(seq "$rounds"); do
                order="none aiotraced bpftrace"
                case $((round % 3)) in
                1) order="aiotraced bpftrace none" ;;
                2) order="bpftrace none aiotraced" ;;
                esac
                declare -A got=()
                for tracer in $order; do
                        got[$tracer]=$(run_with "$load" "$tracer")
                done
                read -r base _ _ _ _ _ <<<"${got[none]}"
                read -r ao ao_ios ao_cpu ao_lost ao_start ao_loaded <<<"${got[aiotraced]}"
                read -r bt _ _ _ _ _ <<<"${got[bpftrace]}"
                ao_ratio=$(awk -v a="$ao" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
                bt_ratio=$(awk -v a="$bt" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
                cpu_m=$(awk -v c="$ao_cpu" -v n="$ao_ios" 'BEGIN {printf "%.5f", c / (n / 1e6)}')
                echo "round $round: untraced $base IOPS; aiotraced $ao_ratio (daemon $cpu_m s a million requests, lost $ao_lost, started in $ao_start ms, the rest loaded in $ao_loaded s); bpftrace $bt_ratio"
                echo "$base" >>"$T/base.r"; echo "$ao_ratio" >>"$T/ao.r"; echo "$bt_ratio" >>"$T/bt.r"
                echo "$cpu_m" >>"$T/cpu.r"; echo "$ao_lost" >>"$T/lost.r"; echo "$ao_start" >>"$T/start.r"
                echo "$ao_loaded" >>"$T/loaded.r"
        done
        echo "$load: medians: untraced $(median <"$T/base.r") IOPS; aiotraced $(median <"$T/ao.r") (range $(sort -g "$T/ao.r" | head -1)-$(sort -g "$T/ao.r" | tail -1)), bpftrace $(median <"$T/bt.r") (range $(sort -g "$T/bt.r" | head -1)-$(sort -g "$T/bt.r" | tail -1)); daemon CPU $(median <"$T/cpu.r") s a million requests; lost $(sort -g "$T/lost.r" | tail -1) at most; start $(median <"$T/start.r") ms, the rest loaded in $(median <"$T/loaded.r") s"
done

if [ "$stats_was" != - ] && sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null; then
        echo "== in the traced threads: the capture's programs a request, one run of each load (kernel.bpf_stats_enabled = 1)"
        for load in ${BENCH_LOADS:-zero_uring zero_libaio file_libaio}; do
                start_daemon "$top_srcdir/etc/aiotraced.conf" "$T/ao.out"
                settled "$DAEMON_PID" >/dev/null
                read -r _ ios < <(run_load "$load")
                stop_daemon "$T/ao.out"
                read -r runs prog_s < <(sed -n 's/^aiotraced: the in-kernel capture: \([0-9]*\) program runs, \([0-9.]*\) s in the traced threads.*/\1 \2/p' \
                        "$T/ao.out.err") || true
                echo "$load: $ios requests; ${runs:-?} program runs, $(awk -v s="${prog_s:-0}" -v n="$ios" 'BEGIN {printf "%.0f", s * 1e9 / n}') ns of programs a request"
        done
        sysctl -q -w kernel.bpf_stats_enabled="$stats_was"
fi
