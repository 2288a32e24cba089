#!/bin/bash
# What the io_uring punt and poll-arm programs (io_uring_queue_async_work, io_uring_poll_arm) cost a process
# the daemon does not watch: fio reading /dev/zero with io_uring and force_async=1 (every request handed to an
# io-wq worker, so the punt program runs once a request), alternated rounds, the daemon (packaged config but
# watching one name no process has) against no tracer, paired in each round.  Prints per round, then the
# median of the paired IOPS ratio, and the punt program's time per run (kernel.bpf_stats_enabled = 1 in a
# run of its own).  FORCE_ASYNC=0: the same with no punts, what the other io_uring programs (submit, complete)
# cost alone.  Timings only: nothing is asserted.  As root, from a build directory, alone on the machine:
#   top_srcdir=SRC top_builddir=. bash SRC/tests/bench-punts.sh [ROUNDS [SECONDS]]
set -eu
. "${top_srcdir:?}/tests/lib.sh"
need_tracing_alone
pgrep -x aiotraced >/dev/null && fail "another aiotraced is running: stop it first"
rounds=${1:-7}
secs=${2:-5}
force=${FORCE_ASYNC:-1} # 0: no punts, for the cost of the other io_uring programs alone
command -v fio >/dev/null || apt-get install -y -q fio >/dev/null
command -v bpftool >/dev/null || fail "no bpftool"
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo -)
trap '[ "$stats_was" = - ] || sysctl -q -w kernel.bpf_stats_enabled="$stats_was"; cleanup' EXIT
(cd "$top_builddir" && make -s aiotraced)

run_fio() { # prints the IOPS
        fio --name=punts --filename=/dev/zero --size=1g --rw=read --ioengine=io_uring --force_async="$force" --bs=4k \
                --iodepth=16 --time_based --runtime="$secs" --output-format=json |
                "$PYTHON3" -c 'import json, sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

# run_time_ns run_cnt of the loaded program named uring_punted
prog_stats() {
        bpftool prog show --json | "$PYTHON3" -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name") == "uring_punted":
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0)); break
else:
    print(0, 0)'
}

sed -e 's/^# *watch = .*//' "$top_srcdir/etc/aiotraced.conf" >"$T/b.conf"
echo 'watch = ( { comm = "nobody-has-it"; } );' >>"$T/b.conf"
: >"$T/rounds"
for r in $(seq "$rounds"); do
        base=$(run_fio)
        start_daemon "$T/b.conf" "$T/d.out"
        sleep 3 # its programs loaded
        traced=$(run_fio)
        stop_daemon "$T/d.out"
        echo "round $r: untraced $base IOPS, traced $traced IOPS"
        echo "$base $traced" >>"$T/rounds"
done
# the program's own time, apart: counting it costs each run of every program two clock reads
sysctl -q -w kernel.bpf_stats_enabled=1
start_daemon "$T/b.conf" "$T/d.out"
sleep 3
read -r ns0 n0 < <(prog_stats)
run_fio >/dev/null
read -r ns1 n1 < <(prog_stats)
stop_daemon "$T/d.out"
sysctl -q -w kernel.bpf_stats_enabled=0
echo "punt program: $("$PYTHON3" -c "print(round(($ns1 - $ns0) / max($n1 - $n0, 1), 1))") ns a run ($((n1 - n0)) runs)"
"$PYTHON3" - "$T/rounds" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
print(f'median over {len(rows)} rounds: paired IOPS ratio {statistics.median(t / b for b, t in rows):.3f}')
PY
