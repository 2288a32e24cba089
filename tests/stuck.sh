#!/bin/bash
# Requests that do not end (#42 item 3): AIO polls on a pipe nobody writes, an io_uring read and poll on pipes
# nobody writes, and an io_uring read of a file whose FUSE server stops answering.  With stuck_after = 1, each is
# written once as stuck (its op, file and how long it has been in flight, at least a second), then ends as any
# other once the pipe is written or the server answers; while they are stuck, the metrics' gauge counts them.
# Both capture modes, and requests summed in the kernel (records = [ "summary" ]: no record of theirs but the
# stuck one, which a look at the capture's map finds).  As root.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
URING=$top_builddir/tests/uring-workload

# the gauge of a program in the metrics file (0 when it has none)
stuck_gauge() { # COMM
        sed -n "s/^aiotraced_requests_stuck{comm=\"$1\",[^}]*} \([0-9]*\)$/\1/p" "$T/m.prom" 2>/dev/null |
                head -1 | grep . || echo 0
}
# until the gauge says N (the look and the metrics' write are each a second apart: 6 s at most)
wait_gauge() { # COMM N
        for _ in $(seq 60); do
                [ "$(stuck_gauge "$1")" = "$2" ] && return 0
                sleep 0.1
        done
        cat "$T/m.prom"
        fail "$mode: the metrics count $(stuck_gauge "$1") requests of $1 stuck, not $2"
}

fuse=yes
[ -c /dev/fuse ] || fuse=no
cp "$WORKLOAD" "$T/backing"
truncate -s 2M "$T/backing"
mkdir -p "$T/fm"

for mode in bpf remote-read summed; do
        cap=$mode records=requests
        [ $mode = summed ] && cap=bpf records=summary
        echo "== capture = \"$cap\", records = [ \"$records\" ]"
        rm -f "$T"/release-* "$T/m.prom" "$T/go"
        write_config "$T/s.conf" "capture = \"$cap\";" "records = [ \"$records\" ];" 'stuck_after = 1;' \
                'summary_interval = 1;' 'drain_interval_ms = 20;' 'output = { format = "json"; };' \
                "metrics = { path = \"$T/m.prom\"; };" \
                'watch = ( { comm = "aio-stuck"; }, { comm = "uring-stuck"; } );'
        start_daemon_json "$T/s.conf" "$T/$mode.json"

        "$WORKLOAD" --comm aio-stuck --hold-until "$T/release-aio" --truth "$T/$mode.aio.truth" >"$T/aio.out" &
        aio=$!
        wait_for "$T/aio.out" '^holding$'
        uring=
        if [ $cap = bpf ]; then # io_uring's requests need the capture
                fuse_args=()
                if [ $fuse = yes ]; then
                        start_fuse "$T/fm" "$T/backing"
                        fuse_args=(--stuck-file "$T/fm/file" "$T/go")
                fi
                "$URING" --comm uring-stuck --stuck-until "$T/release-uring" "${fuse_args[@]}" >"$T/uring.out" &
                uring=$!
                if [ $fuse = yes ]; then
                        # opened while the server answers; read once it stalls (the submit may wait on it)
                        wait_for "$T/uring.out" '^opened$'
                        kill -USR1 "$FUSE_PID"
                        wait_for "$T/fuse.out" '^stalled$'
                        touch "$T/go"
                else
                        wait_for "$T/uring.out" '^holding$'
                fi
        fi
        # stuck after 1 s, looked at once a second, the metrics written every second
        wait_gauge aio-stuck 4
        want_uring=2
        [ $fuse = yes ] && want_uring=3
        [ $cap != bpf ] || wait_gauge uring-stuck $want_uring
        touch "$T/release-aio" "$T/release-uring"
        [ -z "$FUSE_PID" ] || kill -USR2 "$FUSE_PID" # it answers again: the read waiting on it ends
        wait "$aio" || fail "$mode: the AIO workload failed"
        [ -z "$uring" ] || wait "$uring" || { cat "$T/uring.out"; fail "$mode: the io_uring workload failed"; }
        stop_fuse
        wait_gauge aio-stuck 0 # written after they ended
        stop_daemon "$T/$mode.json"
        "$PYTHON3" - "$mode" "$T/$mode.json" "$T/uring.out" "$fuse" <<'PY' || fail "$mode: requests stuck are not told as they are"
import json, re, sys
mode, trace, uring_out, fuse = sys.argv[1:5]
entries = list(map(json.loads, open(trace)))
recs = [e for e in entries if e.get('kind') == 'request']
summed = mode == 'summed'
bad = []
def by(comm):
    return [r for r in recs if r['comm'] == comm]
def check(comm, want_stuck, key, want_op=None):
    mine = by(comm)
    stuck = [r for r in mine if r['request'] == 'stuck']
    ended = {r[key]: r for r in mine if r['request'] == 'completed'}
    told = [r[key] for r in stuck]
    if len(set(told)) != len(told):
        bad.append(f'{comm}: a request told stuck twice: {told}')
    if len(stuck) != want_stuck:
        bad.append(f'{comm}: {len(stuck)} stuck records, want {want_stuck}')
    for r in stuck:
        if not 1e9 <= r['inflight_nsec'] < 4e9:
            bad.append(f'{comm}: stuck after {r["inflight_nsec"]} ns, not within [1 s, 4 s)')
        if want_op and r['op'] != want_op:
            bad.append(f'{comm}: stuck request op {r["op"]}, want {want_op}')
        if summed:
            continue # its end is in the summaries
        e = ended.get(r[key])
        if not e:
            bad.append(f'{comm}: stuck request {r[key]} never ended')
        elif e['latency_nsec'] < r['inflight_nsec']:
            bad.append(f'{comm}: ended after {e["latency_nsec"]} ns, before it was told stuck')
    if summed:
        done = sum(e['completed'] for e in entries if e.get('kind') == 'summary' and e['comm'] == comm)
        if done != want_stuck or ended:
            bad.append(f'{comm}: summed, {done} completed in the summaries and {len(ended)} request records; '
                       f'want {want_stuck} and none')
        ended = {r[key]: {'res': None} for r in stuck}
    print(f'{comm}: {len(stuck)} told stuck, {len(ended)} ended')
    return stuck, ended
check('aio-stuck', 4, 'iocb', 'poll')
if mode != 'remote-read':
    stuck, ended = check('uring-stuck', 3 if fuse == 'yes' else 2, 'data')
    want = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r'^user_data=(\d+) res=(-?\d+)$', open(uring_out).read(), re.M)}
    for r in stuck:
        d = int(r['data'], 16)
        got = ended.get(r['data'], {}).get('res')
        if not summed and (d not in want or got != want[d]):
            bad.append(f'uring-stuck: {r["data"]} ended with {got}, the workload got {want.get(d)}')
    if sorted(r['op'] for r in stuck) != sorted(['pread', 'poll'] + (['pread'] if fuse == 'yes' else [])):
        bad.append(f'uring-stuck: stuck ops {sorted(r["op"] for r in stuck)}')
    on_fuse = [r for r in stuck if int(r['data'], 16) == 0x57000003]
    if fuse == 'yes' and (len(on_fuse) != 1 or not (summed or on_fuse[0].get('path', '').endswith('/fm/file'))):
        bad.append(f'uring-stuck: the read of the stalled FUSE file is not told stuck with its path: {on_fuse}')
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
done
echo PASS
