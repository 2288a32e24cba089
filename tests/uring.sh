#!/bin/bash
# io_uring requests against the real kernel, compared with what tests/uring-workload (liburing) made: reads,
# writes, vectored, fsync and its datasync form, fixed buffers, a registered file, a linked write and fsync,
# poll on a pipe, a failing request, one that fails before its submit, ops with no AIO counterpart, more
# completions than the CQ ring holds (kept in the kernel's overflow list); then the same through an SQPOLL
# thread, which submits on behalf of its process, and a process killed with a request in flight.  Every
# request once, field by field, in the same schema as AIO's.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
URING=$top_builddir/tests/uring-workload
[ -x "$URING" ] || { echo "SKIP: tests/uring-workload was not built (liburing-dev: tests/deps.sh --tests)"; exit 77; }
[ -d /sys/kernel/tracing/events/io_uring ] || [ -d /sys/kernel/debug/tracing/events/io_uring ] ||
        { echo "SKIP: this kernel has no io_uring tracepoints"; exit 77; }

compare() { # TRACE TRUTH...
        local trace=$1
        shift
        "$PYTHON3" "$top_srcdir/tests/compare_uring.py" --trace "$trace" "${@/#/--truth=}" ||
                fail "io_uring requests differ from the workload's"
}
mkdir -p "$T/w"

for mode in plain sqpoll; do
        echo "== $mode: every request once, its fields the workload's"
        write_config "$T/$mode.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' \
                'drain_interval_ms = 5;' 'records = [ "requests", "summary" ];' 'output = { format = "json"; };'
        start_daemon_json "$T/$mode.conf" "$T/$mode.json"
        args=()
        [ $mode = sqpoll ] && args=(--sqpoll)
        "$URING" --comm uring-w --dir "$T/w" --truth "$T/$mode.truth" "${args[@]}" || fail "the workload failed"
        stop_daemon "$T/$mode.json"
        compare "$T/$mode.json" "$T/$mode.truth"
        if [ $mode = sqpoll ]; then
                # submitted by the ring's kernel thread, a thread of the process (the small ring of the overflow
                # has none: its requests are the process's own)
                "$PYTHON3" -c 'import json, sys
pid = json.loads(open(sys.argv[2]).readline())["pid"]
tids = {e["submit_tid"] for e in map(json.loads, open(sys.argv[1])) if e.get("interface") == "io_uring"}
assert tids - {pid}, tids' "$T/$mode.json" "$T/$mode.truth" || fail "the SQPOLL thread did not submit"
        fi
done

echo "== every opcode the kernel knows: named as the kernel's own tracepoints name it"
# a tracefs instance of our own: the kernel's io_uring_submit_req and io_uring_req_failed print op_str
INSTANCE=/sys/kernel/tracing/instances/aiotraced-test-$$
mkdir "$INSTANCE" || fail "no tracefs instance"
trap 'rmdir "$INSTANCE" 2>/dev/null; cleanup' EXIT
for e in io_uring_submit_req io_uring_req_failed; do
        echo 1 >"$INSTANCE/events/io_uring/$e/enable" || fail "io_uring/$e cannot be enabled"
done
write_config "$T/ops.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' \
        'drain_interval_ms = 5;' 'records = [ "requests" ];' 'output = { format = "json"; };'
start_daemon_json "$T/ops.conf" "$T/ops.json"
"$URING" --comm uring-w --every-op >"$T/ops.last" || fail "the workload failed"
stop_daemon "$T/ops.json"
cat "$INSTANCE/trace" >"$T/ops.kernel"
echo 0 >"$INSTANCE/tracing_on"
"$PYTHON3" - "$T/ops.kernel" "$T/ops.json" "$(cat "$T/ops.last")" <<'PY' || fail "op names differ from the kernel's"
import json, re, sys
kernel = {}
for m in re.finditer(r'user_data 0x(78[0-9a-f]{8}), opcode (\w+)', open(sys.argv[1]).read()):
    kernel[int(m.group(1), 16) - 0x7800000000] = m.group(2).lower()
ours, fds = {}, set()
for e in map(json.loads, open(sys.argv[2])):
    if e.get('kind') == 'request' and (int(e['data'], 16) >> 32) == 0x78:
        ours[int(e['data'], 16) - 0x7800000000] = e['op']
        if 'fd' in e:  # the SQE's fd, -1: said as it is, and as no file's (none looked up where it was refused)
            fds.add((e['fd'], e.get('path_state'), 'path' in e, e.get('submit_failed') == 'yes'))
# the ops with an AIO counterpart take its name (the same request, whichever interface made it)
aio = {0: 'noop', 1: 'preadv', 2: 'pwritev', 3: 'fsync', 4: 'pread', 5: 'pwrite', 6: 'poll', 22: 'pread', 23: 'pwrite'}
last = int(sys.argv[3])
bad = [(op, kernel.get(op), ours.get(op)) for op in range(last + 1)
       if kernel.get(op) is None or ours.get(op) != aio.get(op, kernel[op])]
print(f'{last + 1} opcodes; the kernel named {len(kernel)}, aiotraced recorded {len(ours)}; differing: {bad}; '
      f'fds: {fds}')
sys.exit(1 if bad or not fds <= {(-1, 'not an fd', False, False), (-1, None, False, True)} else 0)
PY
rmdir "$INSTANCE"
trap cleanup EXIT

echo "== an fd another thread points at another file every millisecond: every request the path of the file read"
write_config "$T/reuse.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' \
        'drain_interval_ms = 5;' 'records = [ "requests" ];' 'output = { format = "json"; };'
start_daemon_json "$T/reuse.conf" "$T/reuse.json"
"$URING" --comm uring-w --dir "$T/w" --truth "$T/reuse.truth" --fd-reuse 3000 || fail "the workload failed"
stop_daemon "$T/reuse.json"
"$PYTHON3" - "$T/reuse.truth" "$T/reuse.json" <<'PY' || fail "requests without the path of the file the kernel read"
import json, sys
truth = {w['user_data']: w['path'] for w in map(json.loads, open(sys.argv[1]))}
recs = [e for e in map(json.loads, open(sys.argv[2])) if e.get('kind') == 'request' and int(e['data'], 16) >> 32 == 0x79]
right = [r for r in recs if r.get('path') == truth[int(r['data'], 16)] and 'path_state' not in r]
print(f'{len(truth)} reads, {len(recs)} records, {len(right)} with the path of the file the kernel read')
sys.exit(0 if len(right) == len(recs) == len(truth) else 1)
PY
grep -q '^aiotraced: file paths: [1-9][0-9]* walked in the kernel' "$T/reuse.json.err" ||
        fail "no path walked in the kernel"

echo "== records = \"syscalls\" added and taken away by reload: io_uring_enter written only while asked for"
rl_conf() { write_config "$T/rl.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' \
        'drain_interval_ms = 5;' "records = [ $1 ];"; }
rl_reload() { # N: the Nth reload, done
        kill -HUP "$DAEMON_PID"
        for _ in $(seq 500); do
                [ "$(grep -c '^\[info\] reloaded' "$T/rl.out")" -ge "$1" ] && return 0
                sleep 0.01
        done
        fail "reload $1 not done within 5 s"
}
rl_conf '"requests"'
start_daemon "$T/rl.conf" "$T/rl.out"
"$URING" --comm uring-w --dir "$T/w" || fail "the workload failed"
rl_conf '"syscalls", "requests"'
rl_reload 1
"$URING" --comm uring-w --dir "$T/w" || fail "the workload failed"
rl_conf '"requests"'
rl_reload 2
"$URING" --comm uring-w --dir "$T/w" || fail "the workload failed"
stop_daemon "$T/rl.out"
"$PYTHON3" - "$T/rl.out" <<'PY' || fail "io_uring's calls written while not asked for, or not while asked for"
import re, sys
part, calls, requests = 0, [0, 0, 0], [0, 0, 0]
for line in open(sys.argv[1]):
    if line.startswith('[info] reloaded'):
        part += 1
    elif re.search(r'\] io_uring_(setup|enter|register)\(', line):
        calls[part] += 1
    elif re.search(r'\] request (completed|cancelled)', line):
        requests[part] += 1
print(f'io_uring calls before, while and after "syscalls": {calls}; requests: {requests}')
sys.exit(0 if calls[0] == calls[2] == 0 and calls[1] > 0 and min(requests) > 0 else 1)
PY

echo "== killed with a request in flight: it ends with the process, and nothing comes after"
write_config "$T/kill.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' \
        'drain_interval_ms = 5;' 'records = [ "requests", "summary" ];' 'output = { format = "json"; };'
start_daemon_json "$T/kill.conf" "$T/kill.json"
hold_and_kill uring-w "$T/kill.truth" "$URING" "$T/w"
stop_daemon "$T/kill.json"
compare "$T/kill.json" "$T/kill.truth"

if command -v strace >/dev/null; then
        echo "== records = \"syscalls\": io_uring_setup, _enter and _register decoded, as strace -f decodes them"
        write_config "$T/calls.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' 'drain_interval_ms = 5;' \
                'records = [ "syscalls", "requests", "summary" ];' 'output = { format = "json"; };'
        start_daemon_json "$T/calls.conf" "$T/calls.json"
        strace -f -ff -X raw -e trace=io_uring_setup,io_uring_enter,io_uring_register -o "$T/calls.st" \
                "$URING" --comm uring-w --dir "$T/w" --truth "$T/calls.truth" || fail "the workload failed"
        stop_daemon "$T/calls.json"
        "$PYTHON3" "$top_srcdir/tests/compare_strace.py" --trace "$T/calls.json" --strace "$T/calls.st" --calls-only ||
                fail "io_uring's calls differ from strace's"
        compare "$T/calls.json" "$T/calls.truth"
        # without "syscalls", none is written
        if grep -q '"syscall":"io_uring_enter"' "$T/plain.json"; then
                fail "io_uring_enter traced without records = \"syscalls\""
        fi
fi

if command -v fio >/dev/null; then
        dd if=/dev/zero of="$T/fio.dat" bs=1M count=32 status=none
        for sq in 0 1; do
                echo "== fio, ioengine = io_uring, sqthread_poll = $sq: one record per I/O, the summaries' count fio's"
                write_config "$T/fio.conf" 'capture = "bpf";' 'watch = ( { comm = "fio"; } );' 'drain_interval_ms = 5;' \
                        'records = [ "requests", "summary" ];' 'output = { format = "json"; };'
                start_daemon_json "$T/fio.conf" "$T/fio$sq.json"
                fio --name=uring --filename="$T/fio.dat" --size=32m --ioengine=io_uring --sqthread_poll=$sq \
                        --iodepth=16 --rw=randrw --bs=4k --direct=1 --io_size=32m --output-format=json \
                        >"$T/fio$sq.out" || fail "fio"
                stop_daemon "$T/fio$sq.json"
                "$PYTHON3" - "$T/fio$sq.out" "$T/fio$sq.json" "$T/fio.dat" <<'PY' || fail "fio's I/Os and the records differ"
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
ios = j['read']['total_ios'] + j['write']['total_ios']
reqs, sums = [], []
for line in open(sys.argv[2]):
    e = json.loads(line)
    if e['kind'] == 'request':
        reqs.append(e)
    elif e['kind'] == 'summary':
        sums.append(e)
bad = [r for r in reqs if r['request'] != 'completed' or r.get('interface') != 'io_uring' or
       r.get('op') not in ('pread', 'pwrite') or r.get('res') != 4096 or
       r.get('path') != sys.argv[3]]
total = {k: sum(s.get(k, 0) for s in sums) for k in ('submitted', 'submitted_io_uring', 'completed')}
print(f'fio: {ios} I/Os; {len(reqs)} request records, {len(bad)} not completed 4 KiB of its file; summaries {total}')
sys.exit(0 if len(reqs) == ios and not bad and total == dict.fromkeys(total, ios) else 1)
PY
        done
fi

echo "== io_uring = false: the process's first request is said, once, and none is traced"
write_config "$T/off.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-w"; } );' 'io_uring = false;' \
        'records = [ "requests", "summary" ];'
start_daemon "$T/off.conf" "$T/off.out"
"$URING" --comm uring-w --dir "$T/w" || fail "the workload failed"
stop_daemon "$T/off.out"
[ "$(grep -c '^\[info\] uring-w (pid [0-9]*) submits io_uring requests: not traced (io_uring = false)$' "$T/off.out")" = 1 ] ||
        fail "not said exactly once"
if grep -q 'io_uring ring = ' "$T/off.out"; then
        fail "an io_uring request traced with io_uring = false"
fi

echo "== a watched process's ring torn down while it lives on, its memory given to another user's rings (their polls"
echo "   cancelled at teardown by a kernel worker): none of their requests written as the watched process's"
chmod 755 "$T"
write_config "$T/reuse-ring.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-keep"; } );' \
        'drain_interval_ms = 5;' 'records = [ "requests" ];' 'output = { format = "json"; };'
start_daemon_json "$T/reuse-ring.conf" "$T/reuse-ring.json"
for round in $(seq 10); do
        # on one CPU, so that a ring freed is the next one the allocator hands out
        coproc KEEP { exec taskset -c 0 "$URING" --comm uring-keep --ring-once 300; }
        keep=$KEEP_PID
        read -r line <&"${KEEP[0]}"
        [ "$line" = "torn down" ] || fail "the watched ring was not torn down"
        sleep 0.05 # the teardown's work, in a kernel worker, frees the ring
        as_nobody taskset -c 0 "$URING" --comm uring-other --ring-churn 40 || fail "the other user's rings failed"
        wait "$keep"
done
stop_daemon "$T/reuse-ring.json"
"$PYTHON3" - "$T/reuse-ring.json" <<'PY' || fail "another user's io_uring requests were written as the watched process's"
import json, sys
reqs = [e for e in map(json.loads, open(sys.argv[1])) if e.get('kind') == 'request']
foreign = [r for r in reqs if int(r['data'], 16) >> 16 == 0x0bad]
own = [r for r in reqs if r['data'] == '0x0000007a00000001' and r['request'] == 'completed']
print(f'{len(reqs)} request records: {len(own)} the watched rings\' own nops of 10, {len(foreign)} another user\'s')
for r in foreign[:3]:
    print('  foreign:', r)
sys.exit(0 if len(own) == 10 == len(reqs) and not foreign else 1)
PY

echo "== remote-read: io_uring is not traced, and the daemon says so"
write_config "$T/rr.conf" 'capture = "remote-read";' 'watch = ( { comm = "uring-w"; } );'
start_daemon "$T/rr.conf" "$T/rr.out"
"$URING" --comm uring-w --dir "$T/w" || fail "the workload failed"
stop_daemon "$T/rr.out"
grep -q '^\[info\] io_uring requests are not traced: they need the in-kernel capture' "$T/rr.out" ||
        fail "no word of io_uring going untraced"
echo PASS
