#!/usr/bin/env python3
"""Compare aiotraced's request records and summaries with the ground truth the test workload wrote.

Every request the workload submitted (each accepted iocb) must have exactly one record, of the kind its life
gives it (completed, cancelled, abandoned at io_destroy, at process exit, evicted from a full table), with the
op, fd, path, offset, nbytes, data, res and res2 the workload used and got, the threads that submitted and
reaped it, and a latency no longer than the workload's own measure of it.  The summaries of each process add
up to what the workload did.  The trace may be text, JSON lines or journalctl -o json.
"""
import argparse
import json
import re
import statistics
import sys

from compare import OPS, Failure, Tally, hx, parse_truth, report

MESSAGE_ID_REQUEST = 'daf67091c6974a4084e966bba1b19746'
MESSAGE_ID_SUMMARY = 'adcec88b8d6f4f368b3ac88e7f33c99f'
MESSAGE_ID_FILE_SUMMARY = '9dd8944c10744439a8559486c73acdda'
READS, WRITES = {0, 7}, {1, 8}
# the tracer's interval (enter of io_submit to exit of the reaping call) lies inside the workload's (clock read
# before io_submit to clock read after it returned): never longer, give or take the clocks' reading
LATENCY_SLACK_NS = 20000
LATENCY_MEDIAN_GAP_NS = 200000
LATENCY_MEDIAN_MIN_SAMPLES = 10

REQ = re.compile(r'^\[(?P<comm>.*) - (?P<pid>\d+)(?: - (?P<unit>[^]]+))?\] request (?P<kind>\w+)(?: \((?P<end>[^)]*)\))?: (?P<rest>.*)$')
SUM = re.compile(r'^\[(?P<comm>.*) - (?P<pid>\d+)(?: - (?P<unit>[^]]+))?\] summary over (?P<secs>[\d.]+) s'
                 r'(?: \((?P<last>the last)?(?:; )?(?:incomplete: (?P<records_lost>\d+) records lost meanwhile)?\))?: '
                 r'(?P<rest>.*)$')
FILE_SUM = re.compile(r'^\[file (?:\(other: (?P<other_files>\d+) files, (?P<without_path>\d+) requests without a path\)|'
                      r'(?P<file>.*))\] summary over [\d.]+ s[^:]*: requests = (?P<requests>\d+)'
                      r'(?: \((?P<path_unverified>\d+) by a path not checked\))?, (?P<rest>.*)$')


def expected_requests(truth_path, ended_by, per_process_limit):
    """Every accepted iocb, in submit order, with how it must end."""
    process, calls, _ = parse_truth(truth_path)
    pid = process['pid']
    timeline = []  # (time, order, what, call)
    for n, c in enumerate(calls):
        sc, t0, t1 = c['call']['syscall'], int(c['call']['t0']), int(c['call']['t1'])
        if sc == 'io_submit':
            timeline.append((t0, n, 'submit', c))
        elif sc in ('io_getevents', 'io_pgetevents', 'io_cancel', 'user_reap'):
            timeline.append((t1, n, sc, c))
        elif sc == 'io_destroy':
            timeline.append((t0, n, 'destroy', c))
    timeline.sort(key=lambda x: (x[0], x[1]))
    live, done = [], []  # requests in flight (oldest first), and ended
    for _, _, what, c in timeline:
        call = c['call']
        ctx = int(call['ctx'], 16)
        if what == 'submit':
            ret = int(call['ret'])
            for t in c['iocbs'][:max(ret, 0)]:
                if per_process_limit and len(live) >= per_process_limit:
                    r = live.pop(0)
                    r.update(kind='abandoned', end='evicted')
                    done.append(r)
                live.append({'pid': pid, 'ctx': ctx, 'iocb': int(t['addr'], 16), 'truth': t, 'call': call,
                             'path': c['fds'].get(t['fd']), 'cancelled': False, 'submit_t0': int(call['t0'])})
        elif what == 'io_cancel':
            if int(call['ret']) in (0, -115):
                for r in live:
                    if r['ctx'] == ctx and r['iocb'] == int(call['iocb'], 16):
                        r['cancelled'] = True
        elif what == 'destroy':
            if int(call['ret']) == 0:
                for r in [r for r in live if r['ctx'] == ctx]:
                    live.remove(r)
                    r.update(kind='abandoned', end='io_destroy')
                    done.append(r)
        else:
            for e in c['events']:
                obj = int(e['obj'], 16)
                r = next((r for r in live if r['ctx'] == ctx and r['iocb'] == obj), None)
                if r is None:
                    raise Failure(f'truth: pid {pid} reaped {e["obj"]} it never submitted')
                live.remove(r)
                r.update(kind='cancelled' if r['cancelled'] else 'completed', event=e, reap=call,
                         latency=int(call['t1']) - r['submit_t0'])
                if what == 'user_reap':
                    # seen in the ring by the capture at the first call that began after this reap, at the
                    # latest: its latency is at most to that call's end
                    later = [int(x['call']['t1']) for x in calls
                             if x['call']['syscall'] != 'user_reap' and int(x['call']['t0']) >= int(call['t1'])]
                    r.update(user_space=True, latency=min(later, default=int(call['t1'])) - r['submit_t0'])
                done.append(r)
    for r in live:
        r.update(kind='abandoned', end=ended_by)
        done.append(r)
    return pid, process['comm'], done


def text_request(m):
    d = {'request': m.group('kind'), 'pid': m.group('pid'), 'comm': m.group('comm')}
    if m.group('end') and m.group('kind') in ('abandoned', 'unknown'):
        d['end'] = m.group('end')
    for part in m.group('rest').split(', '):
        if part.startswith('latency = '):
            d['latency_nsec'] = part.split()[2]
        elif part.startswith('latency at most '):
            d['latency_at_most_nsec'] = part.split()[3]
        elif part == 'reaped in user space':
            d['reaped'] = 'user-space'
        elif part.startswith('in flight for '):
            d['inflight_nsec'] = part.split()[3]
        elif part.startswith('submitted by '):
            d['submit_tid'] = part.split()[2]
        elif part.startswith('reaped by '):
            d['reap_tid'] = part.split()[2]
        else:
            k, _, v = part.partition(' = ')
            if k == 'path':
                if v.startswith('<unknown: '):
                    d['path_state'] = v[len('<unknown: '):-1]
                    continue
                if v.endswith(' [unverified]'):
                    v, d['path_state'] = v[:-len(' [unverified]')], 'unverified'
            if k == 'data' and ' [stale: completed with data ' in v:
                v, _, ev = v.partition(' [stale: completed with data ')
                d['event_data'] = ev.rstrip(']')
            if k in ('res',):
                v = v.split(' ')[0]
            d[k] = v
    return d


def text_summary(m):
    d = {'pid': m.group('pid'), 'last': bool(m.group('last'))}
    rest = m.group('rest')
    for key in ('submitted', 'completed'):
        mm = re.search(key + r' = (\d+)(?: \(([^)]*)\))?', rest)
        d[key] = int(mm.group(1))
        for pair in (mm.group(2) or '').split():
            op, _, n = pair.partition(':')
            d[f'{key}_{op}'] = int(n)
    for key in ('errors', 'bytes_read', 'bytes_written', 'cancelled', 'abandoned', 'in_flight_max'):
        d[key] = int(re.search(key + r' = (\d+)', rest).group(1))
    mm = re.search(r'reaped_in_user_space = (\d+)', rest)
    d['reaped_in_user_space'] = int(mm.group(1)) if mm else 0
    return d


def structured_request(f, prefix):
    """JSON members or journal fields -> the text parser's keys (all strings)."""
    d = {}
    for k, v in f.items():
        if not k.startswith(prefix):
            continue
        k = k[len(prefix):].lower()
        d[k] = str(v) if not isinstance(v, str) else v
    return d


def structured_summary(f, prefix):
    d = {}
    for k, v in f.items():
        if k.startswith(prefix):
            d[k[len(prefix):].lower()] = v
    out = {'pid': str(d['pid']), 'last': d.get('summary_last') == 'yes'}
    for k, v in d.items():
        if k.startswith(('submitted', 'completed', 'bytes_', 'errors', 'cancelled', 'abandoned', 'inflight_max',
                         'reaped_in_user_space')):
            out[k.replace('inflight_max', 'in_flight_max')] = int(v)
    return out


def text_file_summary(m):
    d = {'requests': int(m['requests'])}
    if m['path_unverified']:
        d['path_unverified'] = int(m['path_unverified'])
    if m['file'] is not None:
        d['file'] = m['file']
    else:
        d['other_files'], d['without_path'] = int(m['other_files']), int(m['without_path'])
    rest = m['rest']
    c = re.match(r'completed = (\d+)(?: \(([^)]*)\))?', rest)
    d['completed'] = int(c[1])
    for part in (c[2] or '').split():
        op, v = part.split(':')
        d[f'completed_{op}'] = int(v)
    for k in ('errors', 'bytes_read', 'bytes_written', 'cancelled', 'abandoned'):
        d[k] = int(re.search(rf'\b{k} = (\d+)', rest)[1])
    return d


def structured_file_summary(f, prefix):
    d = {k[len(prefix):].lower(): v for k, v in f.items() if k.startswith(prefix)}
    out = {k: int(v) for k, v in d.items()
           if k.startswith(('requests', 'completed', 'bytes_', 'errors', 'cancelled', 'abandoned', 'other_files',
                            'without_path', 'path_unverified'))}
    if 'file' in d:
        out['file'] = d['file']
    return out


def parse_trace(path, fmt):
    reqs, sums, lost = [], [], 0
    files = parse_trace.files = []
    with open(path, errors='replace') as f:
        for raw in f:
            raw = raw.rstrip('\n')
            if fmt == 'text':
                m = re.match(r'^\[lost\] cpu \d+: (\d+) records lost', raw)
                if m:
                    lost += int(m.group(1))
                m = REQ.match(raw)
                if m:
                    reqs.append(text_request(m))
                m = SUM.match(raw)
                if m:
                    sums.append(text_summary(m))
                m = FILE_SUM.match(raw)
                if m:
                    files.append(text_file_summary(m))
                continue
            e = json.loads(raw)
            lost += int(e.get('lost', 0) if fmt == 'json' else e.get('AIO_LOST', 0))
            if fmt == 'json':
                if e.get('kind') == 'request':
                    reqs.append(structured_request({'x' + k: v for k, v in e.items()}, 'x'))
                elif e.get('kind') == 'summary':
                    sums.append(structured_summary({'x' + k: v for k, v in e.items()}, 'x'))
                elif e.get('kind') == 'file_summary':
                    files.append(structured_file_summary({'x' + k: v for k, v in e.items()}, 'x'))
            else:
                if e.get('MESSAGE_ID') == MESSAGE_ID_REQUEST:
                    d = structured_request(e, 'AIO_')
                    d['object_pid'] = e.get('OBJECT_PID')
                    reqs.append(d)
                elif e.get('MESSAGE_ID') == MESSAGE_ID_SUMMARY:
                    sums.append(structured_summary(e, 'AIO_'))
                elif e.get('MESSAGE_ID') == MESSAGE_ID_FILE_SUMMARY:
                    files.append(structured_file_summary(e, 'AIO_'))
    return reqs, sums, lost


def align(gots, wants):
    """Pair each record with the request it is for: in order, by the data submitted where it is known (an iocb
    is reused for many requests; a record missing must not shift the rest onto the wrong requests)."""
    pairs, k = [], 0
    for g in gots:
        data = g.get('data') if g.get('request') not in ('unmatched', 'stale') else None
        j = k
        while data is not None and j < len(wants) and hx(wants[j]['truth']['data']) != data:
            j += 1
        if j == len(wants):
            j = k  # data not found: keep the order
        if j < len(wants):
            pairs.append((g, wants[j]))
            k = j + 1
    return pairs


def compare_one(tally, where, got, want, gaps, strict):
    if got['request'] in ('stale', 'unmatched', 'unknown'):
        tally.marked += 1
        if strict:
            tally.errors.append(f'{where}: {got["request"]}, the workload says {want["kind"]}')
        return
    if got['request'] != want['kind']:
        tally.errors.append(f'{where}: request {got["request"]}, the workload says {want["kind"]}')
        return
    if want['kind'] == 'abandoned' and want['end'] and got.get('end') != want['end']:
        tally.errors.append(f'{where}: abandoned ({got.get("end")}), expected ({want["end"]})')
    t = want['truth']
    op = int(t['opcode'])
    tally.value(f'{where}.op', got.get('op'), OPS.get(op, str(op)), False)
    tally.value(f'{where}.fd', got.get('fd'), t['fd'], False)
    tally.value(f'{where}.data', got.get('data'), hx(t['data']), False)
    tally.value(f'{where}.offset', got.get('offset'), t['offset'], False)
    tally.value(f'{where}.nbytes', got.get('nbytes'), t.get('iov_total', t['nbytes']), False)
    if COMPARE_TIDS:
        tally.value(f'{where}.submit_tid', got.get('submit_tid'), want['call']['tid'], False)
    state = got.get('path_state', 'ok')
    if state == 'ok':
        tally.value(f'{where}.path', got.get('path'), want['path'], False)
    elif state == 'unverified':
        tally.value(f'{where}.path', got.get('path'), want['path'], True)
    else:
        tally.unreadable(f'{where}.path', state, True)
    if want['kind'] in ('completed', 'cancelled'):
        e = want['event']
        tally.value(f'{where}.res', got.get('res'), e['res'], False)
        tally.value(f'{where}.res2', got.get('res2'), e['res2'], False)
        if want.get('user_space'):
            tally.value(f'{where}.reaped', got.get('reaped'), 'user-space', False)
            lat = int(got.get('latency_at_most_nsec', -1))
            if lat <= 0 or lat > want['latency'] + LATENCY_SLACK_NS:
                tally.errors.append(f'{where}: latency at most {lat} ns, beyond the {want["latency"]} ns to the call '
                                    f'that saw it')
            return
        if COMPARE_TIDS:
            tally.value(f'{where}.reap_tid', got.get('reap_tid'), want['reap']['tid'], False)
        lat = int(got.get('latency_nsec', -1))
        if lat <= 0 or lat > want['latency'] + LATENCY_SLACK_NS:
            tally.errors.append(f'{where}: latency {lat} ns, the workload measured {want["latency"]} ns around it')
        else:
            gaps.append(want['latency'] - lat)
    elif 'inflight_nsec' not in got or int(got['inflight_nsec']) < (0 if want.get('end') == 'evicted' else 1):
        tally.errors.append(f'{where}: no time in flight')  # evicted by the submit itself: 0


def end_counts(rs):
    """What a summary says of requests that ended: counts, per op, bytes."""
    want = {'requests': len(rs), 'completed': 0, 'bytes_read': 0, 'bytes_written': 0, 'errors': 0, 'cancelled': 0,
            'abandoned': 0}
    for r in rs:
        op = OPS.get(int(r['truth']['opcode']), 'other')
        if r['kind'] in ('completed', 'cancelled'):
            want['completed'] += 1
            want[f'completed_{op}'] = want.get(f'completed_{op}', 0) + 1
            res = int(r['event']['res'])
            if -4095 <= res < 0:
                want['errors'] += 1
            elif res > 0 and int(r['truth']['opcode']) in READS:
                want['bytes_read'] += res
            elif res > 0 and int(r['truth']['opcode']) in WRITES:
                want['bytes_written'] += res
            if r['kind'] == 'cancelled':
                want['cancelled'] += 1
        else:
            want['abandoned'] += 1
    return want


def compare_summaries(tally, pid, sums, done, strict):
    mine = [s for s in sums if s['pid'] == pid]
    if not mine:
        tally.errors.append(f'pid {pid}: no summary')
        return
    total = {}
    for s in mine:
        for k, v in s.items():
            if isinstance(v, int) and not isinstance(v, bool):
                total[k] = total.get(k, 0) + v
    want = end_counts(done)
    want['submitted'] = want.pop('requests')
    want['reaped_in_user_space'] = sum(1 for r in done if r['kind'] in ('completed', 'cancelled') and r.get('user_space'))
    for r in done:
        op = OPS.get(int(r['truth']['opcode']), 'other')
        want[f'submitted_{op}'] = want.get(f'submitted_{op}', 0) + 1
    for k, v in want.items():
        if total.get(k, 0) == v:
            tally.correct += 1
        elif strict:
            tally.errors.append(f'pid {pid}: summaries add up to {k} = {total.get(k, 0)}, the workload made {v}')
        else:
            tally.marked += 1  # read afterwards, an op may be unknown: counted as "other"


def compare_file_summaries(tally, files, done, top):
    """One interval's file summaries: the `top` files with the most requests named (ties by path), each with
    its counts, and the rest in one other line."""
    by_path = {}
    for r in done:
        by_path.setdefault(r['path'], []).append(r)
    named = sorted((p for p in by_path if p is not None), key=lambda p: (-len(by_path[p]), p.encode()))
    want_lines = [dict(end_counts(by_path[p]), file=p) for p in named[:top]]
    rest = [r for p in named[top:] for r in by_path[p]] + by_path.get(None, [])
    if rest:
        want_lines.append(dict(end_counts(rest), other_files=len(named[top:]), without_path=len(by_path.get(None, []))))
    if len(files) != len(want_lines):
        tally.errors.append(f'{len(files)} file summaries, want {len(want_lines)}: {files}')
    for k, (got, want) in enumerate(zip(files, want_lines)):
        where = f'file summary {k} ({want.get("file", "other")})'
        for key, v in want.items():
            tally.value(f'{where}.{key}', got.get(key, 0), v, False)
        for key, v in got.items():
            if key not in want and v:
                tally.errors.append(f'{where}: {key} = {v}, the workload made none')


COMPARE_TIDS = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--truth', required=True, action='append')
    ap.add_argument('--trace', required=True)
    ap.add_argument('--format', choices=('text', 'json', 'journal'), default='text')
    ap.add_argument('--strict', action='store_true', help='every request exact, nothing marked')
    ap.add_argument('--complete', action='store_true', help='every request has its record, if marked')
    ap.add_argument('--killed', action='store_const', dest='ended_by', const='process exit',
                    help='the workload was killed: what is left ends with it')
    ap.add_argument('--exec', action='store_const', dest='ended_by', const='exec',
                    help='the workload exec\'d: what is left ends then')
    ap.add_argument('--per-process', type=int, default=0, help='max_inflight_per_process of the daemon')
    ap.add_argument('--no-summary', action='store_true')
    ap.add_argument('--summary-only', action='store_true', help='records = [ "summary" ]: no request records')
    ap.add_argument('--files', type=int, default=0,
                    help='summary_files of the daemon, whose file summaries cover one interval')
    ap.add_argument('--median-gap-ns', type=int, default=LATENCY_MEDIAN_GAP_NS,
                    help='how much shorter than the workload measured the latencies may be, at the median')
    ap.add_argument('--tids-elsewhere', action='store_true',
                    help='the workload ran in another pid namespace than the daemon: its thread ids are not compared')
    a = ap.parse_args()
    global COMPARE_TIDS
    COMPARE_TIDS = not a.tids_elsewhere

    reqs, sums, lost = parse_trace(a.trace, a.format)
    tally = Tally(a.strict)
    gaps, n = [], 0
    all_done = []
    for path in a.truth:
        pid, comm, done = expected_requests(path, a.ended_by, a.per_process)
        all_done += done
        got_by_key = {}
        for g in reqs:
            if g.get('pid') == pid:
                got_by_key.setdefault((int(g['ctx'], 16), int(g['iocb'], 16)), []).append(g)
        want_by_key = {}
        for r in done:
            want_by_key.setdefault((r['ctx'], r['iocb']), []).append(r)
        for key, wants in want_by_key.items():
            if a.summary_only:  # and any request record left in got_by_key is an error below
                n += len(wants)
                continue
            gots = got_by_key.pop(key, [])
            where = f'pid {pid} ctx {key[0]:#x} iocb {key[1]:#x}'
            if len(gots) != len(wants):
                if a.strict or a.complete or len(gots) > len(wants):
                    tally.errors.append(f'{where}: {len(gots)} records, the workload made {len(wants)} requests')
                else:
                    tally.marked += len(wants) - len(gots)
            for k, (g, w) in enumerate(align(gots, wants)):
                if g.get('comm') == '?' and not a.strict:
                    tally.marked += 1  # read afterwards, the thread was gone before its name could be read
                elif g.get('comm') != comm:
                    tally.errors.append(f'{where}: comm {g.get("comm")!r} != {comm!r}')
                if a.format == 'journal' and g.get('object_pid') != pid:
                    tally.errors.append(f'{where}: OBJECT_PID {g.get("object_pid")}')
                compare_one(tally, f'{where} #{k}', g, w, gaps, a.strict)
            n += len(wants)
        for key, gots in got_by_key.items():
            for g in gots:
                if g['request'] == 'unmatched' and not a.strict:
                    continue
                tally.errors.append(f'pid {pid}: a record for a request never made: {g}')
        if not a.no_summary:
            compare_summaries(tally, pid, sums, done, a.strict)
    if a.files:
        compare_file_summaries(tally, parse_trace.files, all_done, a.files)
    elif parse_trace.files:
        tally.errors.append(f'{len(parse_trace.files)} file summaries where none were asked for')
    if lost:
        tally.errors.insert(0, f'{lost} records lost: the trace cannot hold every request (ring_pages too small '
                               f'for this machine now?)')
    median_gap = statistics.median(gaps) if gaps else 0
    print(f'compare-requests: {n} requests, {len(gaps)} latencies (median {median_gap / 1000:.1f} us shorter than '
          f'the workload measured); values: {tally.correct} correct, {tally.marked} marked, {tally.wrong} wrong')
    # a median of a few is one preempted workload thread away from anything: only where there are enough
    if len(gaps) >= LATENCY_MEDIAN_MIN_SAMPLES and median_gap > a.median_gap_ns:
        tally.errors.append(f'latencies are {median_gap} ns shorter than the workload measured, at the median')
    return report(tally)


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Failure as e:
        print(f'compare-requests: FAIL: {e}')
        sys.exit(1)
