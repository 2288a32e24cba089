#!/bin/bash
# The benchmark: what tracing at full detail costs the traced program, and what it costs the daemon.
#
# Three workloads, each untraced and traced, alternated (the order swapped every round) over ROUNDS rounds of
# SECONDS each: the tests' workload batched (16 in flight, up to 16 iocbs per io_submit), the same with one
# iocb per io_submit and one event per io_getevents, and fio (libaio randread 4k direct, iodepth 16), all on a
# file in /var/tmp; with BENCH_LOADS="uring1 uring16", fio on io_uring, one I/O a submit or 16 (a request
# counts as a call below, and perf records io_uring's submit and completion besides).  Traced means records = syscalls and requests (and summaries), to the file sink on tmpfs.
# It prints per round and then the medians: the paired ratio traced/untraced of IOPS, the daemon's CPU per
# million records (the records the output carries: a call's, a request's, a summary's; what the file sink
# says it wrote) and per million calls, its peak RSS beyond the rings, records lost and entries dropped,
# and whether every call was captured (the workload counts its own calls; fio does not).  In the same rounds,
# where perf is installed, the floor: a raw `perf record` of the same tracepoints, filtered on the same comm,
# to the same tmpfs, decoding nothing (its paired ratio, its CPU per million calls, and the daemon's CPU a
# call over perf's in the same round: the machine's state moves both alike); and the ceiling of any tracer on
# these tracepoints: the same tracepoints running a BPF program that does nothing (tests/tp-floor), and
# aiotraced's IOPS over the ceiling's (what its programs and its daemon cost beyond the tracepoints).
# Then what every process of the host pays while the tracepoints are enabled (an unwatched getppid loop).
# Then, in a run of each load apart, what the capture's programs cost the traced thread, and what they cost an
# unwatched process's life (fork, exec, exit) (kernel.bpf_stats_enabled).
# Then the replay benchmark (no root needed): the records of one fio run, recorded with --dump, decoded and
# formatted on one core as fast as they go, per output format, and over 2 to 256 rings.
#
# Timings only: nothing here is asserted (these machines are noisy).  As root, from a build directory:
#   top_srcdir=SRC top_builddir=. bash SRC/tests/bench.sh [ROUNDS [SECONDS]]
# BENCH_LOADS="batched fio" runs only those loads (more rounds of one, for a finer figure).
set -eu
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
# another tracer of the same loads would be measured with this one
pgrep -x aiotraced >/dev/null && fail "another aiotraced is running (pid $(pgrep -x aiotraced | tr '\n' ' ')): stop it first"
rounds=${1:-5}
secs=${2:-3}
command -v fio >/dev/null || apt-get install -y -q fio >/dev/null || { echo "SKIP: no fio (apt-get install fio)"; exit 77; }
# the floor: a raw `perf record` of the same tracepoints (optional: without perf it is not measured)
command -v perf >/dev/null || apt-get install -y -q linux-perf >/dev/null 2>&1 || true
have_perf=no
command -v perf >/dev/null && perf --version >/dev/null 2>&1 && have_perf=yes
PERF_PID=
stats_was=-
trap '[ -n "$PERF_PID" ] && kill -9 "$PERF_PID" 2>/dev/null; [ "$stats_was" = - ] || sysctl -q -w kernel.bpf_stats_enabled="$stats_was"; cleanup' EXIT
(cd "$top_builddir" && make -s aiotraced tests/aio-workload tests/bench-replay tests/tp-floor)
file=/var/tmp/aiotraced-bench.dat
[ -s "$file" ] || fio --name=prep --filename="$file" --size=512m --rw=write --bs=1m --direct=1 >/dev/null
out=/dev/shm/aiotraced-bench
mkdir -p "$out"

run_load() { # LOAD: prints "iops calls" (calls: - when the load does not count them)
        case $1 in
        batched) "$WORKLOAD" --comm aio-bench --bench "$secs" --file "$file" --depth 16 --batch 16 |
                sed -n 's/^calls=\([0-9]*\) .* iops=\([0-9]*\)$/\2 \1/p' ;;
        single) "$WORKLOAD" --comm aio-bench --bench "$secs" --file "$file" --depth 16 --batch 1 |
                sed -n 's/^calls=\([0-9]*\) .* iops=\([0-9]*\)$/\2 \1/p' ;;
        fio) fio --name=bench --filename="$file" --size=512m --ioengine=libaio --rw=randread --bs=4k --direct=1 \
                --iodepth=16 --time_based --runtime="$secs" --output-format=json |
                "$PYTHON3" -c 'import json, sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]), "-")' ;;
        # io_uring, one I/O a submit, or 16 (and reaped 16 at a time)
        uring1 | uring16) fio --name=bench --filename="$file" --size=512m --ioengine=io_uring --rw=randread --bs=4k \
                --direct=1 --iodepth=16 --iodepth_batch_submit=${1#uring} --iodepth_batch_complete_min=${1#uring} \
                --time_based --runtime="$secs" --output-format=json |
                "$PYTHON3" -c 'import json, sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]), "-")' ;;
        esac
}

load_comm() { # LOAD: the name its process runs under, which the tracers select
        case $1 in
        fio | uring*) echo fio ;;
        *) echo aio-bench ;;
        esac
}

# LOAD: runs it traced; prints "iops calls daemon_calls records lost dropped cpu_s user_s system_s peak_rss_kib
# rings_kib"
run_traced() {
        local comm
        comm=$(load_comm "$1")
        rm -f "$out"/trace.log*
        write_config "$T/bench.conf" "watch = ( { comm = \"$comm\"; } );" \
                'records = [ "syscalls", "requests", "summary" ];' \
                "output = { sink = \"file\"; path = \"$out/trace.log\"; max_size = \"4G\"; keep = 1; };"
        start_daemon_to_file "$T/bench.conf" "$out/trace.log" "$T/bench.err"
        local load
        load=$(run_load "$1")
        kill -INT "$DAEMON_PID"
        wait "$DAEMON_PID" || fail "aiotraced exited with $?"
        DAEMON_PID=
        local calls records lost dropped cpu user system rss rings
        calls=$(stat_of "$out/trace.log" calls)
        case $1 in uring*) calls=$(stat_of "$out/trace.log" uring_submits) ;; esac # a request for a call
        records=$(sed -n 's/^aiotraced: \([0-9]*\) entries written to .*/\1/p' "$T/bench.err")
        lost=$(stat_of "$out/trace.log" lost)
        dropped=$(sed -n 's/^aiotraced: \([0-9]*\) entries could not be written.*/\1/p' "$T/bench.err")
        # the CPU while tracing: loading the programs (BTF relocations) is a cost of starting, paid once
        read -r cpu user system rss rings < <(sed -n 's/^aiotraced: cpu .* system, \([0-9.]*\) s of them while tracing (\([0-9.]*\) s user, \([0-9.]*\) s system); peak RSS \([0-9]*\) KiB (the rings: \([0-9]*\) KiB)$/\1 \2 \3 \4 \5/p' \
                "$T/bench.err")
        local bytes
        bytes=$(cat "$out"/trace.log* | wc -c)
        echo "$load $calls $records $lost ${dropped:-0} $cpu $user $system $rss $rings $bytes"
}

# LOAD: sets PERF_EVENTS to perf's arguments for the four tracepoints the daemon traces for it, each filtered
# in the kernel on the load's comm
perf_events() {
        local f
        f="comm == \"$(load_comm "$1")\""
        PERF_EVENTS=()
        for call in io_submit io_getevents; do
                PERF_EVENTS+=(-e "syscalls:sys_enter_$call" --filter "$f" -e "syscalls:sys_exit_$call" --filter "$f")
        done
        # io_uring's requests: their submit and completion (two samples a request, as two a call above), and
        # io_uring_enter's enter and exit, which the daemon writes as calls (records = "syscalls")
        case $1 in
        uring*) PERF_EVENTS+=(-e io_uring:io_uring_submit_req --filter "$f" -e io_uring:io_uring_complete --filter "$f"
                        -e syscalls:sys_enter_io_uring_enter --filter "$f" -e syscalls:sys_exit_io_uring_enter --filter "$f") ;;
        esac
}

# NAME ERRFILE: stops the tool running as PERF_PID, perf or tp-floor (SIGINT, as a user would)
stop_perf() {
        kill -INT "$PERF_PID"
        local rc=0
        wait "$PERF_PID" || rc=$?
        PERF_PID=
        [ $rc = 0 ] || [ $rc = 130 ] || fail "$1 exited with $rc ($(cat "$2"))"
}

# LOAD: runs it traced by a raw `perf record` of the same tracepoints, kernel-filtered on the same comm, to a
# file on the same tmpfs, without any decoding: the floor the issue names.  Prints "iops samples cpu_s user_s
# system_s bytes", the CPU from perf's start to just before it is stopped (its exit processing is not tracing).
run_perf() {
        rm -f "$out/perf.data"
        perf_events "$1"
        perf record -q -a -B "${PERF_EVENTS[@]}" -o "$out/perf.data" 2>"$T/perf.err" &
        PERF_PID=$!
        for _ in $(seq 500); do
                [ -s "$out/perf.data" ] && break
                sleep 0.01
        done
        sleep 0.2 # the events are enabled after the file is begun
        # on CPU in ns, every thread (schedstat), and user and system in ticks (stat) to split it
        cpu_now() { cat "/proc/$PERF_PID"/task/*/schedstat | awk -v stat="$(cat "/proc/$PERF_PID/stat")" \
                '{ns += $1} END {split(stat, f, " "); print ns, f[14], f[15]}'; }
        local t0 t1 load
        t0=$(cpu_now)
        load=$(run_load "$1")
        t1=$(cpu_now)
        stop_perf "perf record" "$T/perf.err"
        local samples bytes
        samples=$(perf report -i "$out/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
        bytes=$(stat -c %s "$out/perf.data")
        rm -f "$out/perf.data"
        awk -v l="${load%% *}" -v n="${samples:-0}" -v t0="$t0" -v t1="$t1" -v b="$bytes" 'BEGIN {
                split(t0, a, " "); split(t1, z, " ")
                cpu = (z[1] - a[1]) / 1e9; u = z[2] - a[2]; s = z[3] - a[3]
                user = u + s ? cpu * u / (u + s) : 0
                print l, n, cpu, user, cpu - user, b }'
}

# LOAD: runs it with the same tracepoints enabled, each running a BPF program that does nothing (so no record is
# written): what any tracer of them pays before its programs do anything (the syscalls' slower path, the
# tracepoint, its record built, the program called).  aiotraced's syscall programs cannot be cheaper than
# this; how far this is above perf record is the most they could gain on it.  (io_uring's programs are tp_btf,
# for which the kernel builds no record: there this is a ceiling for classic tracepoint programs only.)
# Prints "iops".
run_tp_floor() {
        local events=() i
        perf_events "$1"
        for i in "${!PERF_EVENTS[@]}"; do # each -e's event, as tracefs names it
                [ "${PERF_EVENTS[$i]}" = -e ] && events+=("${PERF_EVENTS[$((i + 1))]/://}")
        done
        coproc FLOOR { exec "$top_builddir/tests/tp-floor" "${events[@]}" 2>"$T/floor.err"; }
        PERF_PID=$FLOOR_PID
        local line
        read -r line <&"${FLOOR[0]}" || true
        case $line in attached*) ;; *) fail "tp-floor did not attach ($(cat "$T/floor.err"))" ;; esac
        local load
        load=$(run_load "$1")
        stop_perf tp-floor "$T/floor.err"
        echo "${load%% *}"
}

# What writing a file on this tmpfs costs any process, now: the system time of 256 MiB written in 256 KiB
# writes, in ns a byte.  On a VM it moves with the host (a page the guest gave back faults in the host when
# it is written again), and the daemon's system time is mostly this.
tmpfs_write_cost() {
        "$PYTHON3" - "$out/calibrate.dat" <<'PY'
import os, resource, sys
chunk = b"x" * 262144
before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
for _ in range(1024):
    os.write(fd, chunk)
os.close(fd)
after = resource.getrusage(resource.RUSAGE_SELF).ru_stime
os.unlink(sys.argv[1])
print("%.2f" % ((after - before) * 1e9 / (1024 * len(chunk))))
PY
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# the rounds' lowest and highest: how far one round is from the median, the resolution of the figure
spread() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "rounds %.3f to %.3f", lo, hi}'; }

echo "== $(nproc) CPUs, $(uname -r), $rounds rounds of $secs s; traced = records syscalls + requests + summary, to a file on tmpfs"
echo "== writing a file on this tmpfs costs $(tmpfs_write_cost) ns a byte of system time (256 MiB in 256 KiB writes)"
for load in ${BENCH_LOADS:-batched single fio}; do
        : >"$T/ratio" >"$T/base" >"$T/cpu_rec" >"$T/cpu_call" >"$T/user_call" >"$T/sys_call" >"$T/rss" >"$T/bpr"
        : >"$T/p_ratio" >"$T/c_ratio" >"$T/p_cpu_call" >"$T/p_user_call" >"$T/p_sys_call" >"$T/p_bpc" >"$T/p_cpu_vs"
        : >"$T/vs_perf" >"$T/c_vs_perf" >"$T/vs_ceiling"
        all_captured=yes
        lost_total=0 dropped_total=0
        for r in $(seq "$rounds"); do
                p_iops=-
                if [ $((r % 2)) = 1 ]; then
                        read -r u_iops u_calls < <(run_load "$load")
                        read -r t_iops t_calls d_calls records lost dropped cpu user system rss rings bytes < <(run_traced "$load")
                        [ $have_perf = no ] || read -r p_iops p_samples p_cpu p_user p_system p_bytes < <(run_perf "$load")
                        read -r c_iops < <(run_tp_floor "$load")
                else
                        read -r c_iops < <(run_tp_floor "$load")
                        [ $have_perf = no ] || read -r p_iops p_samples p_cpu p_user p_system p_bytes < <(run_perf "$load")
                        read -r t_iops t_calls d_calls records lost dropped cpu user system rss rings bytes < <(run_traced "$load")
                        read -r u_iops u_calls < <(run_load "$load")
                fi
                awk -v t="$c_iops" -v u="$u_iops" 'BEGIN {print t / u}' >>"$T/c_ratio"
                # what aiotraced adds beyond the tracepoints themselves: its programs' work and its daemon
                awk -v t="$t_iops" -v c="$c_iops" 'BEGIN {print t / c}' >>"$T/vs_ceiling"
                echo "  $load round $r: the tracepoints running a program that does nothing: $c_iops IOPS"
                [ "$t_calls" = - ] || [ "$t_calls" = "$d_calls" ] || all_captured=no
                lost_total=$((lost_total + lost))
                dropped_total=$((dropped_total + dropped))
                echo "$u_iops" >>"$T/base"
                awk -v t="$t_iops" -v u="$u_iops" 'BEGIN {print t / u}' >>"$T/ratio"
                awk -v c="$cpu" -v n="$records" 'BEGIN {print c / n * 1e6}' >>"$T/cpu_rec"
                awk -v c="$cpu" -v n="$d_calls" 'BEGIN {print c / n * 1e6}' >>"$T/cpu_call"
                awk -v c="$user" -v n="$d_calls" 'BEGIN {print c / n * 1e6}' >>"$T/user_call"
                awk -v c="$system" -v n="$d_calls" 'BEGIN {print c / n * 1e6}' >>"$T/sys_call"
                echo $((rss - rings)) >>"$T/rss"
                echo $((bytes / records)) >>"$T/bpr"
                if [ "$p_iops" != - ] && [ "$p_samples" -ge 2 ]; then
                        # perf writes a sample at each enter and each exit: half as many calls; on io_uring,
                        # where the samples a request vary with the batching, the requests the daemon counted in
                        # the same round, at perf's IOPS
                        case $load in
                        uring*) p_calls=$(awk -v n="$d_calls" -v p="$p_iops" -v t="$t_iops" 'BEGIN {printf "%d", n * p / t}') ;;
                        *) p_calls=$((p_samples / 2)) ;;
                        esac
                        awk -v t="$p_iops" -v u="$u_iops" 'BEGIN {print t / u}' >>"$T/p_ratio"
                        # the goal: aiotraced's IOPS over perf record's, run next to each other in the round
                        awk -v t="$t_iops" -v p="$p_iops" 'BEGIN {print t / p}' >>"$T/vs_perf"
                        # the ceiling of that on these tracepoints
                        awk -v c="$c_iops" -v p="$p_iops" 'BEGIN {print c / p}' >>"$T/c_vs_perf"
                        awk -v c="$p_cpu" -v n="$p_calls" 'BEGIN {print c / n * 1e6}' >>"$T/p_cpu_call"
                        awk -v c="$p_user" -v n="$p_calls" 'BEGIN {print c / n * 1e6}' >>"$T/p_user_call"
                        awk -v c="$p_system" -v n="$p_calls" 'BEGIN {print c / n * 1e6}' >>"$T/p_sys_call"
                        echo $((p_bytes / p_calls)) >>"$T/p_bpc"
                        # the daemon's CPU a call over perf's, in the same round
                        awk -v c="$cpu" -v n="$d_calls" -v pc="$p_cpu" -v pn="$p_calls" \
                                'BEGIN {print (c / n) / (pc / pn)}' >>"$T/p_cpu_vs"
                        echo "  $load round $r: raw perf record $p_iops IOPS, $p_samples samples, $p_bytes bytes," \
                             "CPU $p_cpu s (user $p_user, system $p_system)"
                fi
                echo "  $load round $r: untraced $u_iops IOPS, traced $t_iops IOPS; the workload made $t_calls calls," \
                     "the daemon decoded $d_calls and wrote $records records, $bytes bytes ($lost lost, $dropped dropped);" \
                     "CPU ${cpu} s" \
                     "(user $user, system $system)," \
                     "peak RSS $rss KiB of which rings $rings KiB"
        done
        echo "$load: untraced $(median <"$T/base") IOPS; paired ratio traced/untraced $(median <"$T/ratio")" \
             "($(spread <"$T/ratio"));" \
             "daemon CPU $(median <"$T/cpu_rec") s per million records, $(median <"$T/cpu_call") s per million calls" \
             "(user $(median <"$T/user_call"), system $(median <"$T/sys_call")); $(median <"$T/bpr") bytes a record;" \
             "peak RSS beyond the rings $(median <"$T/rss") KiB; lost $lost_total, dropped $dropped_total;" \
             "every call captured: $all_captured"
        [ ! -s "$T/p_ratio" ] ||
                echo "$load, raw perf record (no decoding): paired ratio $(median <"$T/p_ratio")" \
                     "($(spread <"$T/p_ratio"));" \
                     "CPU $(median <"$T/p_cpu_call") s per million calls (user $(median <"$T/p_user_call")," \
                     "system $(median <"$T/p_sys_call")); $(median <"$T/p_bpc") bytes a call;" \
                     "aiotraced's CPU a call over perf record's, paired: $(median <"$T/p_cpu_vs")"
        [ ! -s "$T/vs_perf" ] ||
                echo "$load, aiotraced's IOPS over raw perf record's, paired: $(median <"$T/vs_perf")" \
                     "($(spread <"$T/vs_perf"))"
        echo "$load, the same tracepoints running a program that does nothing: paired ratio" \
             "$(median <"$T/c_ratio") ($(spread <"$T/c_ratio"))"
        echo "$load, aiotraced's IOPS over the ceiling's (what its programs and its daemon cost), paired:" \
             "$(median <"$T/vs_ceiling") ($(spread <"$T/vs_ceiling"))"
        [ ! -s "$T/c_vs_perf" ] ||
                echo "$load, the ceiling: a program that does nothing over raw perf record, paired:" \
                     "$(median <"$T/c_vs_perf") ($(spread <"$T/c_vs_perf"))"
done
[ $have_perf = yes ] || echo "== no perf (apt-get install linux-perf): the raw perf record floor is not measured"

echo "== after the loads, writing a file on this tmpfs costs $(tmpfs_write_cost) ns a byte of system time"

# What every process of the host pays, watched or not: an enabled syscall tracepoint sends every thread's
# syscalls through the slow path.  A getppid loop under a comm nobody watches, alone, then beside the daemon
# in each capture mode and beside a raw perf record of the same tracepoints (the order turned every round);
# paired ratios of ns a call.
getppid_ns() { "$WORKLOAD" --comm aio-unwatched --getppid 2000000 | sed -n 's/^ns_per_call=//p'; }
host_beside() { # WHAT: the loop's ns a call while WHAT traces the loads' comm
        case $1 in
        perf)
                perf_events batched
                perf record -q -a -B "${PERF_EVENTS[@]}" -o "$out/perf.data" 2>"$T/perf.err" &
                PERF_PID=$!
                sleep 0.5
                getppid_ns
                stop_perf "perf record" "$T/perf.err"
                rm -f "$out/perf.data" ;;
        *)
                write_config "$T/host.conf" "capture = \"$1\";" 'watch = ( { comm = "aio-bench"; } );' \
                        "output = { sink = \"file\"; path = \"$out/host.log\"; };"
                start_daemon_to_file "$T/host.conf" "$out/host.log" "$T/host.err"
                getppid_ns
                kill -INT "$DAEMON_PID"
                wait "$DAEMON_PID" || fail "aiotraced exited with $?"
                DAEMON_PID=
                rm -f "$out"/host.log* ;;
        esac
}
host_tracers="bpf remote-read"
[ $have_perf = no ] || host_tracers="$host_tracers perf"
: >"$T/host_base"
for h in $host_tracers; do : >"$T/host_$h"; done
for r in $(seq "$rounds"); do
        order="base $host_tracers"
        [ $((r % 2)) = 1 ] || order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
        declare -A ns=()
        for h in $order; do
                if [ "$h" = base ]; then ns[base]=$(getppid_ns); else ns[$h]=$(host_beside "$h"); fi
        done
        echo "${ns[base]}" >>"$T/host_base"
        line="  host round $r: getppid ${ns[base]} ns alone"
        for h in $host_tracers; do
                awk -v t="${ns[$h]}" -v u="${ns[base]}" 'BEGIN {print t / u}' >>"$T/host_$h"
                line="$line, ${ns[$h]} beside $h"
        done
        echo "$line"
done
line="host: an unwatched getppid, $(median <"$T/host_base") ns a call alone; paired ratio beside"
for h in $host_tracers; do
        line="$line $h $(median <"$T/host_$h") ($(spread <"$T/host_$h"))"
done
echo "$line"

# The capture's programs run in the traced threads, not in the daemon: what they cost there, as the kernel
# measures it (kernel.bpf_stats_enabled, which itself adds a clock read or two a run: so in runs of their own,
# not in the paired rounds).
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo -)
program_runs() { # ERRFILE: "name runs ns_a_run", a line a program, from what the daemon said at exit
        sed -n "s/^aiotraced: the in-kernel capture's program \([a-z_0-9]*\): \([0-9]*\) runs, \([0-9]*\) ns a run$/\1 \2 \3/p" "$1"
}
if [ "$stats_was" != - ] && sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null; then
        echo "== in the traced threads: the capture's programs, one run of each load with kernel.bpf_stats_enabled = 1"
        for load in ${BENCH_LOADS:-batched single fio}; do
                read -r _ _ d_calls _ _ _ cpu _ _ _ _ _ < <(run_traced "$load")
                runs=
                read -r runs prog_s per_run < <(sed -n 's/^aiotraced: the in-kernel capture: \([0-9]*\) program runs, \([0-9.]*\) s in the traced threads (\([0-9]*\) ns a run).*/\1 \2 \3/p' \
                        "$T/bench.err") || true # no line: no capture
                if [ -z "$runs" ]; then
                        echo "$load: no capture: $(cat "$out"/trace.log* "$T/bench.err" | grep -m1 'no in-kernel capture')"
                        continue
                fi
                awk -v l="$load" -v r="$runs" -v p="$prog_s" -v pr="$per_run" -v n="$d_calls" -v c="$cpu" 'BEGIN {
                        printf "%s: %d program runs, %s ns a run; a call: %.2f us in the traced thread, %.2f us in the daemon\n",
                               l, r, pr, p / n * 1e6, c / n * 1e6 }'
                # program by program, those run at least once a hundred calls
                program_runs "$T/bench.err" | awk -v n="$d_calls" '$2 * 100 >= n {
                        printf "  %-22s %.2f runs a call, %s ns a run\n", $1, $2 / n, $3 }'
        done
        # What an unwatched process's life runs of the capture (its fork, exec, exit_group and end): 2,000 of
        # /bin/true beside the daemon watching the loads' comm.
        write_config "$T/life.conf" 'watch = ( { comm = "aio-bench"; } );' \
                "output = { sink = \"file\"; path = \"$out/life.log\"; };"
        start_daemon_to_file "$T/life.conf" "$out/life.log" "$T/life.err"
        for _ in $(seq 2000); do /bin/true; done
        kill -INT "$DAEMON_PID"
        wait "$DAEMON_PID" || fail "aiotraced exited with $?"
        DAEMON_PID=
        rm -f "$out"/life.log*
        program_runs "$T/life.err" | awk '$2 >= 2000 { ns += $2 * $3; line = line sprintf("  %-22s %.2f runs a process, %s ns a run\n", $1, $2 / 2000, $3) }
                        END { printf "an unwatched process (/bin/true): %.2f us of the capture'"'"'s programs in its life\n%s", ns / 2000 / 1000, line }'
        sysctl -q -w kernel.bpf_stats_enabled="$stats_was"
fi

echo "== replay: the records of ${secs} s of fio, decoded and formatted on one core (no kernel, no root)"
rm -f "$out"/trace.log*
write_config "$T/dump.conf" 'watch = ( { comm = "fio"; } );' 'records = [ "syscalls", "requests", "summary" ];' \
        'ring_pages = 1024;' "output = { sink = \"file\"; path = \"$out/trace.log\"; max_size = \"4G\"; };"
start_daemon_to_file "$T/dump.conf" "$out/trace.log" "$T/dump.err" --dump "$out/fio.dump"
run_load fio >/dev/null
kill -INT "$DAEMON_PID"
wait "$DAEMON_PID" || fail "aiotraced --dump exited with $?"
DAEMON_PID=
# fio's file as the live run named it, behind a link standing for /proc/PID/fd/N: the replay's requests then
# carry their path, as the daemon's did.  Without the capture (memory read after each call, at fio's pace
# mostly reused by then) no request may have been followed: the replay then runs without paths.
if read -r fio_pid fio_fd fio_path < <(sed -n 's/^\[fio - \([0-9]*\)\] request completed: op = [a-z]*, fd = \([0-9]*\), path = \([^,]*\),.*/\1 \2 \3/p' \
        "$out/trace.log" | head -n 1); then
        mkdir -p "$out/proc/$fio_pid/fd"
        ln -s "$fio_path" "$out/proc/$fio_pid/fd/$fio_fd"
        REPLAY_PROC_ROOT="$out/proc" "$top_builddir/tests/bench-replay" "$out/fio.dump" 2
else
        echo "== the dump run followed no request (no capture?): replayed without paths"
        "$top_builddir/tests/bench-replay" "$out/fio.dump" 2
fi
# The merge on a large host: the same records dealt over N rings (threads moving at every call, its worst case)
echo "== replay over N rings: ring records a second, the engine alone, then as JSON"
for n in 2 16 64 256; do
        for fmt in "engine only" json; do
                REPLAY_RINGS=$n REPLAY_FORMAT=$fmt "$top_builddir/tests/bench-replay" "$out/fio.dump" 2 |
                        sed -n "s/^ *$fmt .* \([0-9]*\) ring records\/s .*/  $n rings, $fmt: \1 ring records\/s/p"
        done
done
rm -rf "$out"
