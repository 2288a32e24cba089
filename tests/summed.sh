#!/bin/bash
# Summaries made in the kernel (records = [ "summary" ], the packaged default) against the same workloads'
# summaries made from the records, by two daemons watching them at once, and against the workloads' own truth:
# every count equal, request for request (submitted and completed by op, bytes, errors, cancelled, abandoned,
# unmatched, reaped in user space), the latency percentiles within the histogram's error, the metrics' counters
# equal; and in the rings, no record per call or request.  As root, with the capture.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
URING=$top_builddir/tests/uring-workload

mkdir -p "$T/w"
watch='watch = ( { comm = "sum-*"; } );'
write_config "$T/rec.conf" 'capture = "bpf";' "$watch" 'records = [ "requests", "summary" ];' \
        'summary_interval = 2;' 'output = { format = "json"; };' "metrics = { path = \"$T/rec.prom\"; };"
write_config "$T/ker.conf" 'capture = "bpf";' "$watch" 'records = [ "summary" ];' 'summary_interval = 2;' \
        'output = { format = "json"; };' "metrics = { path = \"$T/ker.prom\"; };"
# and a third watching every process, as the packaged config does (no watch list: no name looked at)
write_config "$T/every.conf" 'capture = "bpf";' 'records = [ "summary" ];' 'summary_interval = 2;' \
        'output = { format = "json"; };'
start_daemon_json "$T/rec.conf" "$T/rec.json"
REC_PID=$DAEMON_PID
start_daemon_json "$T/ker.conf" "$T/ker.json"
KER_PID=$DAEMON_PID
start_daemon_json "$T/every.conf" "$T/every.json"
EVERY_PID=$DAEMON_PID
stop_both() {
        cp "$T/rec.prom" "$T/rec.last.prom" 2>/dev/null
        cp "$T/ker.prom" "$T/ker.last.prom" 2>/dev/null
        DAEMON_PID=$REC_PID stop_daemon "$T/rec.json"
        DAEMON_PID=$KER_PID stop_daemon "$T/ker.json"
        DAEMON_PID=$EVERY_PID stop_daemon "$T/every.json"
}

echo "== every kind of AIO call; a reaper thread reaping what others submit (completions before their submit"
echo "   returned); completions reaped from the AIO ring by the program itself; 2,000 reads in one io_submit"
"$WORKLOAD" --comm sum-all --truth "$T/all.truth" --dir "$T/w" --pause-us 2000 || fail "workload failed"
"$WORKLOAD" --comm sum-reaper --truth "$T/reaper.truth" --dir "$T/w" --reaper-thread 300 || fail "workload failed"
"$WORKLOAD" --comm sum-user --truth "$T/user.truth" --dir "$T/w" --user-reap 40 || fail "workload failed"
"$WORKLOAD" --comm sum-big --truth "$T/big.truth" --dir "$T/w" --big-submit 2000 || fail "workload failed"
if [ -x "$URING" ]; then
        echo "== io_uring: every request of the workload (multishot, linked, skipped completions, a CQ overflow)"
        "$URING" --comm sum-uring --dir "$T/w" --truth "$T/uring.truth" || fail "the io_uring workload failed"
fi
# every process has ended, its last summary made: each daemon's next metrics file holds all of it (the file is
# removed at the stop)
sleep 2.5
stop_both

for truth in all reaper user big; do
        "$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format json --trace "$T/ker.json" --truth "$T/$truth.truth" \
                --summary-only --strict || fail "summed in the kernel, $truth differs from the workload's truth"
        "$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format json --trace "$T/every.json" \
                --truth "$T/$truth.truth" --summary-only --strict ||
                fail "every process summed in the kernel, $truth differs from the workload's truth"
done
"$PYTHON3" - "$T/rec.json" "$T/ker.json" <<'PY' || fail "the summaries made in the kernel differ from those made from the records"
import json, sys
COUNTS = ('submitted', 'completed', 'bytes_read', 'bytes_written', 'errors', 'cancelled', 'abandoned', 'stale',
          'unmatched', 'unknown', 'reaped_in_user_space', 'submitted_io_uring', 'cq_overflows', 'lat_samples')
def load(path):
    procs, kinds = {}, {}
    for line in open(path):
        e = json.loads(line)
        kinds[e['kind']] = kinds.get(e['kind'], 0) + 1
        if e['kind'] != 'summary' or not e['comm'].startswith('sum-'):
            continue
        p = procs.setdefault((e['comm'], e['pid']), {'n': 0})
        p['n'] += 1
        for k, v in e.items():
            if k in COUNTS or k.startswith(('submitted_', 'completed_')):
                p[k] = p.get(k, 0) + v
            elif k.startswith('lat_') or k == 'inflight_max':
                p[k] = max(p.get(k, 0), v)
    return procs, kinds
rec, rec_kinds = load(sys.argv[1])
ker, ker_kinds = load(sys.argv[2])
bad = []
for key in sorted(set(rec) | set(ker)):
    r, k = rec.get(key), ker.get(key)
    if not r or not k:
        bad.append(f'{key}: summaries from the records {bool(r)}, from the kernel {bool(k)}')
        continue
    for f in sorted(set(r) | set(k)):
        a, b = r.get(f, 0), k.get(f, 0)
        if f.startswith('lat_p') or f == 'lat_max_nsec':
            # one histogram layout; the two daemons' programs read the clock each for itself, one after the
            # other at each tracepoint, so the one that writes a record (a file's path walked the first time)
            # holds the other's read back by microseconds; an interval's percentiles, where both made one
            # summary of the process.  (At a call of 2,000 items, each daemon's clock read comes after the
            # other's program has written or counted them all: not compared.)
            ok = r['n'] != 1 or k['n'] != 1 or key[0] == 'sum-big' or abs(a - b) <= 0.02 * max(a, b) + 20000
        elif f in ('n', 'inflight_max'):
            ok = True
        else:
            ok = a == b
        if not ok:
            bad.append(f'{key}: {f} {a} from the records, {b} summed in the kernel')
    print(f'{key[0]}: submitted {k.get("submitted")}, completed {k.get("completed")}, p50 {r.get("lat_p50_nsec")} '
          f'and {k.get("lat_p50_nsec")} ns, p99 {r.get("lat_p99_nsec")} and {k.get("lat_p99_nsec")} ns')
for b in bad:
    print('  ', b)
# in the rings, nothing of each call or request
print('entries from the records:', rec_kinds, '; summed in the kernel:', ker_kinds)
if ker_kinds.get('call') or ker_kinds.get('request'):
    bad.append('records of calls or requests written in kernel mode')
sys.exit(1 if bad or len(ker) < 4 else 0)
PY
"$PYTHON3" - "$T/rec.last.prom" "$T/ker.last.prom" <<'PY' || fail "the metrics differ"
import sys
def load(p):
    d = {}
    for line in open(p):
        if line.startswith('#') or 'comm="sum-' not in line:
            continue
        if '_bucket{' in line:  # a latency near a boundary may fall either side, by the two clocks' reads
            continue
        k, v = line.rsplit(' ', 1)
        d[k] = float(v)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
keys = [k for k in set(a) | set(b) if '_total' in k or '_count{' in k]
diff = [k for k in keys if a.get(k, 0) != b.get(k, 0)]
print(f'{len(keys)} counters of the workloads; {len(diff)} differ')
for k in sorted(diff)[:10]:
    print('  ', k, a.get(k), b.get(k))
sys.exit(1 if diff or not keys else 0)
PY
grep -q '"kind":"stats".*, calls = 0, ' "$T/ker.json" || fail "calls were written as records in kernel mode"

echo "== a reload that asks for records: the programs, loaded for summaries alone, loaded again and in force in"
echo "   their place (io_uring's calls too, which summaries alone do not load); every request counted once"
write_config "$T/sw.conf" 'capture = "bpf";' 'watch = ( { comm = "sw-*"; } );' 'records = [ "summary" ];' \
        'summary_interval = 60;' 'output = { format = "json"; };'
start_daemon_json "$T/sw.conf" "$T/sw.json"
"$WORKLOAD" --comm sw-before --truth "$T/before.truth" --dir "$T/w" --pause-us 2000 || fail "workload failed"
write_config "$T/sw.conf" 'capture = "bpf";' 'watch = ( { comm = "sw-*"; } );' \
        'records = [ "syscalls", "requests", "summary" ];' 'summary_interval = 60;' 'output = { format = "json"; };'
kill -HUP "$DAEMON_PID"
for _ in $(seq 3000); do grep -q '"message":"\[info\] reloaded' "$T/sw.json" && break; sleep 0.01; done
grep -q '"message":"\[info\] reloaded' "$T/sw.json" || fail "no reload within 30 s"
"$WORKLOAD" --comm sw-after --truth "$T/after.truth" --dir "$T/w" --pause-us 2000 || fail "workload failed"
[ -x "$URING" ] && { "$URING" --comm sw-uring --dir "$T/w" --truth "$T/sw-uring.truth" ||
        fail "the io_uring workload failed"; }
stop_daemon "$T/sw.json"
if [ -x "$URING" ]; then
        grep -q '"kind":"call".*"syscall":"io_uring_enter".*"comm":"sw-uring"' "$T/sw.json" ||
                fail "after the reload, io_uring_enter was not written"
fi
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format json --trace "$T/sw.json" --truth "$T/before.truth" \
        --summary-only --strict || fail "before the reload, the summary of sw-before differs from its truth"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format json --trace "$T/sw.json" --truth "$T/after.truth" \
        --strict || fail "after the reload, the requests or the summary of sw-after differ from the workload's"
grep -q '"kind":"request".*"comm":"sw-before"' "$T/sw.json" && fail "requests written before the reload asked for them"
echo PASS
