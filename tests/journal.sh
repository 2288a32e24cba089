#!/bin/bash
# The journal sink against a real, private journald (its own mount namespace: the host's journal sees nothing):
# entries compared with the workload's ground truth field by field, then journald stopped and killed under
# load: every entry the daemon made is either in the journal or counted in an AIO_DROPPED entry.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
private_journald "$@"
mkdir -p "$T/w1" "$T/w2"

journal_json() { # FILE: this run's entries (by the daemon's pid), as JSON lines
        journalctl --sync
        journalctl -D /run/log/journal _PID="$DAEMON_PID_SEEN" -o json >"$1"
}

for cap in bpf remote-read; do
        echo "== $cap 1. every call and request an entry, its fields equal to the ground truth"
        # with the capture, summaries by file too (read afterwards, some paths are not checked: compared in
        # requests.sh)
        files=
        [ "$cap" = bpf ] && files='summary_by = [ "process", "file" ]; summary_files = 2;'
        write_config "$T/j.conf" 'records = [ "syscalls", "requests", "summary" ];' "capture = \"$cap\";" \
                'watch = ( { comm = "aio-journal"; } );' \
                'drain_interval_ms = 5;' 'output = { sink = "journal"; };' "$files"
        start_daemon_bg "$T/j.conf"
        journal_started
        "$WORKLOAD" --comm aio-journal --truth "$T/$cap.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 300 || fail "workload failed"
        stop_daemon_bg
        journal_json "$T/$cap.json"
        "$PYTHON3" "$top_srcdir/tests/compare.py" --journal --trace "$T/$cap.json" --truth "$T/$cap.truth" --strict ||
                fail "journal entries differ from the ground truth"
        journalctl -D /run/log/journal -t aiotraced AIO_SYSCALL=io_submit AIO_COMM=aio-journal -o cat |
                grep -q '^\[aio-journal - [0-9]* - [0-9]*\] io_submit(' || fail "journalctl matches on AIO_ fields"
        exact=--complete
        [ "$cap" = bpf ] && exact="--strict --files 2"
        # shellcheck disable=SC2086
        "$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format journal --trace "$T/$cap.json" \
                --truth "$T/$cap.truth" $exact || fail "request entries differ from the ground truth"
        if [ "$cap" = bpf ]; then
                journalctl -D /run/log/journal -t aiotraced MESSAGE_ID=9dd8944c10744439a8559486c73acdda \
                        AIO_FILE="$T/w1/b.dat" -o json >"$T/b.json"
                "$PYTHON3" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert len(e) == 1 and e[0]["AIO_REQUESTS"] == "6" and e[0]["AIO_COMPLETED_PREAD"] == "3", e' "$T/b.json" ||
                        fail "journalctl AIO_FILE=... does not give the file's summary"
        fi
        # every write to that file, and how long each took
        journalctl -D /run/log/journal -t aiotraced _PID="$DAEMON_PID_SEEN" AIO_PATH="$T/w1/c.dat" AIO_OP=pwrite \
                -o json >"$T/c.json"
        "$PYTHON3" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert len(e) == 1 and int(e[0]["AIO_LATENCY_NSEC"]) > 0 and e[0]["AIO_REQUEST"] == "completed", e' "$T/c.json" ||
                fail "journalctl AIO_PATH=... AIO_OP=pwrite does not give the one write"
        grep -q '"MESSAGE_ID":"61b2eff4723e4dc08f4bf5aaaf9f5d30"' "$T/$cap.json" || fail "no started entry"
        grep -q '"MESSAGE_ID":"8c47d1cf7b484c958fac3d196e1b1bd7"' "$T/$cap.json" || fail "no stopped entry"
done

# made = the calls the workloads recorded + started + stopped + stats; the ring is large enough to lose nothing.
account() { # JSON TRUTH... : entries in the journal + AIO_DROPPED sums == entries made
        local json=$1
        shift
        "$PYTHON3" - "$json" "$@" <<'PY' || fail "entries made != entries in the journal + entries counted dropped"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1])]
dropped = sum(int(e['AIO_DROPPED']) for e in entries if 'AIO_DROPPED' in e)
kept = sum(1 for e in entries if 'AIO_DROPPED' not in e)
calls = sum(1 for t in sys.argv[2:] for l in open(t) if l.startswith('call '))
lost = [e for e in entries if 'AIO_LOST' in e]
made = calls + 3 + len(lost)
print(f'made {made} (calls {calls}), in the journal {kept}, counted dropped {dropped} '
      f'in {sum(1 for e in entries if "AIO_DROPPED" in e)} entries')
sys.exit(0 if kept + dropped == made and not lost else 1)
PY
}

echo "== 2. journald stopped (SIGSTOP) under load: drops counted, reported once it reads again"
write_config "$T/slow.conf" "$CALLS" 'watch = ( { comm = "aio-journal"; } );' 'ring_pages = 1024;' \
        'output = { sink = "journal"; queue_kib = 64; };'
start_daemon_bg "$T/slow.conf"
journal_started
kill -STOP "$J"
"$WORKLOAD" --comm aio-journal --idiom 2 --rounds 500 --truth "$T/slow.truth" --dir "$T/w1" || fail "workload failed"
kill -CONT "$J"
stop_daemon_bg
journal_json "$T/slow.json"
grep -q '"AIO_DROPPED"' "$T/slow.json" || fail "no AIO_DROPPED entry although journald was stopped"
account "$T/slow.json" "$T/slow.truth"

echo "== 3. journald killed, then started again: what it missed is counted and reported"
write_config "$T/gone.conf" "$CALLS" 'watch = ( { comm = "aio-journal"; } );' 'drain_interval_ms = 5;' \
        'output = { sink = "journal"; };'
start_daemon_bg "$T/gone.conf"
journal_started
"$WORKLOAD" --comm aio-journal --truth "$T/gone1.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
sleep 0.2
stop_journald
"$WORKLOAD" --comm aio-journal --truth "$T/gone2.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
# said while it happens, not only at exit
wait_for "$T/daemon.err" '^aiotraced: the journal: .*; entries are counted as dropped until it takes them again$'
sleep 0.2
start_journald
"$WORKLOAD" --comm aio-journal --truth "$T/gone3.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
wait_for "$T/daemon.err" '^aiotraced: the journal takes entries again: [0-9]* were dropped meanwhile'
stop_daemon_bg
journal_json "$T/gone.json"
grep '"AIO_DROPPED"' "$T/gone.json" | "$PYTHON3" -c 'import json, sys; [print("  " + json.loads(l)["MESSAGE"]) for l in sys.stdin]'
grep -q '"AIO_DROPPED"' "$T/gone.json" || fail "no AIO_DROPPED entry after journald came back"
account "$T/gone.json" "$T/gone1.truth" "$T/gone2.truth" "$T/gone3.truth"
echo "== 4. a ring that overflows: loss entries, and read + lost = produced"
write_config "$T/lost.conf" "$CALLS" 'watch = ( { comm = "aio-journal"; } );' 'ring_pages = 1;' \
        'output = { sink = "journal"; };'
start_daemon_bg "$T/lost.conf"
journal_started
kill -STOP "$DAEMON_PID" # the kernel keeps writing into rings nobody reads
for i in 1 2 3 4 5; do
        "$WORKLOAD" --comm aio-journal --truth "$T/lost$i.truth" --dir "$T/w1" || fail "workload failed"
done
kill -CONT "$DAEMON_PID"
stop_daemon_bg
journal_json "$T/lost.json"
read -r low high < <(records_produced bpf "$T"/lost?.truth) # the capture is the default
"$PYTHON3" - "$T/lost.json" "$low" "$high" <<'PY' || fail "the loss entries do not account for what was produced"
import json, re, sys
entries = [json.loads(l) for l in open(sys.argv[1])]
losses = [e for e in entries if 'AIO_LOST' in e]
stats = next(e['MESSAGE'] for e in entries if str(e.get('MESSAGE', '')).startswith('[stats]'))
samples = int(re.search(r' samples = (\d+),', stats).group(1))
lost = int(re.search(r' lost = (\d+),', stats).group(1))
low, high = int(sys.argv[2]), int(sys.argv[3]) # records_produced in lib.sh
in_entries = sum(int(e['AIO_LOST']) for e in losses)
print(f'produced {low} (and up to {high - low} rings\' last completions), read {samples}, lost {lost} '
      f'(in {len(losses)} loss entries: {in_entries}, CPUs {sorted({e["AIO_CPU"] for e in losses})}, '
      f'priorities {sorted({e["PRIORITY"] for e in losses})})')
sys.exit(0 if lost > 0 and in_entries == lost and low <= samples + lost <= high
         and all(e['PRIORITY'] == '4' for e in losses) else 1)
PY
echo PASS
