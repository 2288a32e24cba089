#!/bin/bash
# How io_uring ran what it could not complete at once (#42 item 2): each request handed to an io-wq worker says
# async = io-wq, each armed for poll async = poll, and no other says anything; the summaries count them, by op,
# as do the metrics.  Ground truth: a workload that asks for IOSQE_ASYNC on every fourth read of /dev/zero
# (which never blocks: nothing else is punted) and reads two empty pipes; and fio with force_async=4, whose own
# count of reads says how many were punted (a quarter).  With records, and summed in the kernel.  As root.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
URING=$top_builddir/tests/uring-workload
command -v fio >/dev/null || { echo "SKIP: no fio (tests/deps.sh --tests installs it)"; exit 77; }

N=400
for records in requests summary; do
        echo "== records = [ \"$records\" ]"
        also=
        [ $records = requests ] && also=', "summary"' # summaries made from the records
        write_config "$T/p.conf" 'capture = "bpf";' "records = [ \"$records\"$also ];" 'summary_interval = 1;' \
                'drain_interval_ms = 20;' 'output = { format = "json"; };' "metrics = { path = \"$T/m.prom\"; };" \
                'watch = ( { comm = "uring-punts"; }, { comm = "fio"; } );'
        start_daemon_json "$T/p.conf" "$T/$records.json"
        "$URING" --comm uring-punts --async-mix $N >"$T/mix.truth" || fail "the workload failed"
        fio --name=punts --filename=/dev/zero --ioengine=io_uring --rw=read --bs=4k --size=8M --iodepth=8 \
                --force_async=4 --output-format=json >"$T/fio.json" || fail "fio failed"
        sleep 2.2 # the last summaries, and the metrics written after them
        cp "$T/m.prom" "$T/$records.prom"
        stop_daemon "$T/$records.json"
        "$PYTHON3" - "$records" "$T/$records.json" "$T/mix.truth" "$T/fio.json" "$T/$records.prom" <<'PY' ||
import json, re, sys
records, trace, truth, fio_out, prom = sys.argv[1:6]
entries = [json.loads(l) for l in open(trace)]
want = {int(m.group(1)): m.group(2) for m in re.finditer(r'^user_data=(\d+) async=(\S+)$', open(truth).read(), re.M)}
fio_ios = json.load(open(fio_out))['jobs'][0]['read']['total_ios']
bad = []
def summed(comm, field):
    return sum(e.get(field, 0) for e in entries if e.get('kind') == 'summary' and e['comm'] == comm)
if records == 'requests':
    got = {int(e['data'], 16): e.get('async', 'none') for e in entries
           if e.get('kind') == 'request' and e['comm'] == 'uring-punts'}
    wrong = [(hex(d), got.get(d), a) for d, a in want.items() if got.get(d) != a]
    if len(got) != len(want) or wrong:
        bad.append(f'uring-punts: {len(got)} records of {len(want)} requests; wrong: {wrong[:5]} ({len(wrong)})')
    fio_punted = sum(1 for e in entries if e.get('kind') == 'request' and e['comm'] == 'fio' and e.get('async') == 'io-wq')
    fio_reads = sum(1 for e in entries if e.get('kind') == 'request' and e['comm'] == 'fio' and e.get('op') == 'pread')
    print(f'fio: {fio_ios} reads by its count, {fio_reads} recorded, {fio_punted} of them async = io-wq')
    if fio_reads != fio_ios or fio_punted != fio_ios // 4:
        bad.append(f'fio: want {fio_ios} reads, {fio_ios // 4} punted')
# the summaries, both ways: made from the records, or summed in the kernel
mix_punted = sum(1 for a in want.values() if a == 'io-wq')
for comm, punted, polled in (('uring-punts', mix_punted, 2), ('fio', fio_ios // 4, 0)):
    got = (summed(comm, 'punted'), summed(comm, 'punted_pread'), summed(comm, 'polled'))
    print(f'{comm}: summaries say punted {got[0]} (pread {got[1]}), polled {got[2]}; want {punted}, {polled}')
    if got != (punted, punted, polled):
        bad.append(f'{comm}: summaries punted/pread/polled {got}, want {(punted, punted, polled)}')
metric = {m.group(1): int(m.group(2)) for m in
          re.finditer(r'^aiotraced_requests_punted_total\{comm="([^"]*)",unit="[^"]*",op="pread"\} (\d+)$',
                      open(prom).read(), re.M)}
if metric.get('uring-punts') != mix_punted or metric.get('fio') != fio_ios // 4:
    bad.append(f'metrics: punted {metric}, want uring-punts {mix_punted}, fio {fio_ios // 4}')
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
                fail "records = [ \"$records\" ]: the punts are not as the workloads made them"
done
echo PASS
