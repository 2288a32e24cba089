#!/bin/bash
# Programs nobody here wrote that reap their completions from the AIO ring themselves, never through
# io_getevents: qemu-img bench with -i native (QEMU's linux-aio), and fio with userspace_reap.  With the capture,
# every request they make is completed, reaped in user space, and the summaries count what the programs say
# they did.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
for tool in qemu-img fio; do
        command -v $tool >/dev/null || { echo "SKIP: $tool is not installed (tests/deps.sh --tests)"; exit 77; }
done

check_summary() { # OUT COMM REQUESTS: every request completed and reaped in user space, nothing else
        "$PYTHON3" - "$@" <<'PY' || fail "the summaries of $2 do not add up to its $3 requests"
import re, sys
out, comm, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
total = {}
lost = None
for line in open(out):
    if line.startswith('[stats] '):
        m = re.search(r' lost = (\d+),', line)
        lost = int(m.group(1)) if m else None
    if not line.startswith(f'[{comm} - ') or ' summary over ' not in line:
        continue
    for k in ('submitted', 'completed', 'abandoned', 'unknown', 'unmatched', 'reaped_in_user_space'):
        m = re.search(rf'\b{k} = (\d+)', line)
        total[k] = total.get(k, 0) + (int(m.group(1)) if m else 0)
print(f'{comm}: {total}, the program says {want} requests; records lost: {lost}')
ok = (lost == 0 and total.get('submitted') == want and total.get('completed') == want and
      total.get('reaped_in_user_space') == want and
      not any(total.get(k) for k in ('abandoned', 'unknown', 'unmatched')))
sys.exit(0 if ok else 1)
PY
        local not_user
        not_user=$(grep "^\[$2 - [0-9]*\] request " "$1" | grep -vc 'request completed: .*, reaped in user space$')
        [ "$not_user" = 0 ] || fail "$not_user request records of $2 are not completed in user space"
}

echo "== qemu-img bench -i native: QEMU's linux-aio, completions taken from the ring after an eventfd"
img=$T/bench.img
qemu-img create -q -f raw "$img" 64M || fail "qemu-img create"
# Rings that hold a whole run (16 MiB a CPU): what is compared here must not hang on the share of the CPU a
# sanitized daemon gets beside make -j's other tests (losses are tested in live-trace.sh and journal.sh).
write_config "$T/qemu.conf" 'capture = "bpf";' 'watch = ( { comm = "qemu-img"; } );' 'drain_interval_ms = 5;' \
        'ring_pages = 4096;' 'records = [ "requests", "summary" ];'
start_daemon "$T/qemu.conf" "$T/qemu.out"
n=20000
qemu-img bench -c $n -d 16 -f raw -n -i native -t none "$img" >"$T/qemu-bench.txt" || fail "qemu-img bench"
grep -q "^Sending $n read requests" "$T/qemu-bench.txt" || fail "qemu-img bench did not say it sent $n requests"
stop_daemon "$T/qemu.out"
check_summary "$T/qemu.out" qemu-img $n

echo "== fio, libaio with userspace_reap (iodepth_batch_complete_min=0): no io_getevents at all"
dd if=/dev/zero of="$T/fio.dat" bs=1M count=64 status=none
write_config "$T/fio.conf" 'capture = "bpf";' 'watch = ( { comm = "fio"; } );' 'drain_interval_ms = 5;' \
        'ring_pages = 4096;' 'records = [ "requests", "summary" ];'
start_daemon "$T/fio.conf" "$T/fio.out"
fio --name=ureap --filename="$T/fio.dat" --size=64m --ioengine=libaio --userspace_reap=1 \
        --iodepth_batch_complete_min=0 --iodepth=16 --rw=randrw --bs=4k --direct=1 --io_size=64m \
        --output-format=json >"$T/fio.json" || fail "fio"
stop_daemon "$T/fio.out"
ios=$("$PYTHON3" -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["total_ios"] + j["write"]["total_ios"])' "$T/fio.json")
check_summary "$T/fio.out" fio "$ios"
echo PASS
