#!/usr/bin/env python3
"""Compare aiotraced's io_uring request records (JSON lines) with the truth tests/uring-workload wrote.

Every request the workload made must have exactly one record, completed, with the op, fd (or registered
file index), path, offset, bytes and result the workload used and got, and a latency; the summaries of the
process must count them, through io_uring.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', required=True)
    ap.add_argument('--truth', required=True, action='append')
    a = ap.parse_args()
    reqs, sums = {}, []
    for line in open(a.trace):
        e = json.loads(line)
        if e['kind'] == 'request' and e.get('interface') == 'io_uring':
            reqs.setdefault((e['pid'], int(e['data'], 16)), []).append(e)
        elif e['kind'] == 'summary':
            sums.append(e)
    errors, fields, n = [], 0, 0

    def eq(where, got, want):
        nonlocal fields
        fields += 1
        if got != want:
            errors.append(f'{where}: aiotraced {got!r}, the workload {want!r}')

    pids, overflows, made = set(), {}, {}
    for path in a.truth:
        for line in open(path):
            w = json.loads(line)
            if 'cq_overflows' in w:
                overflows[w['pid']] = overflows.get(w['pid'], 0) + w['cq_overflows']
                continue
            n += 1
            made[w['pid']] = made.get(w['pid'], 0) + 1
            pids.add(w['pid'])
            key = (w['pid'], w['user_data'])
            got = sorted(reqs.pop(key, []), key=lambda e: e['mono_ns'])
            where = f'pid {w["pid"]} user_data {w["user_data"]:#x} ({w["op"]})'
            more = w.get('more', [])
            if len(got) != 1 + len(more):
                errors.append(f'{where}: {len(got)} records, {1 + len(more)} completions')
                continue
            # a multishot request: a record for each completion while it went on, then its last
            for k, res in enumerate(more):
                eq(f'{where} completion {k}', (got[k]['request'], got[k].get('res')), ('completed', res))
            g = got[-1]
            eq(f'{where} op', g.get('op'), w['op'])
            if not w['done']:  # in flight when the process was killed
                eq(f'{where} request', (g['request'], g.get('end')), ('abandoned', 'process exit'))
                continue
            if w.get('no_cqe'):  # IOSQE_CQE_SKIP_SUCCESS: completed, said once the next of its link chain completed
                eq(f'{where} request', (g['request'], g.get('end'), 'res' in g, 'latency_nsec' in g),
                   ('completed', 'no CQE asked', False, False))
            else:
                eq(f'{where} request', g['request'], 'completed')
                eq(f'{where} res', g.get('res'), w['res'])
            eq(f'{where} submit_failed', g.get('submit_failed'), 'yes' if w['failed'] else None)
            if 'fd' in g:
                eq(f'{where} fd', g['fd'], w['fd'])
            elif w['op'] not in ('noop', 'openat', 'poll_remove'):
                errors.append(f'{where}: no fd')
            eq(f'{where} fixed_file', g.get('fixed_file') == 'yes', w['fixed'])
            if w.get('path'):
                eq(f'{where} path', (g.get('path'), g.get('path_state', 'ok')), (w['path'], 'ok'))
            elif 'path' in g:
                errors.append(f'{where}: a path {g["path"]!r} where the workload used none')
            if 'offset' in g:
                eq(f'{where} offset', g['offset'], w['off'])
            elif w['op'] not in ('noop', 'openat', 'poll', 'poll_remove'):
                errors.append(f'{where}: no offset')
            if 'nbytes' in g:
                eq(f'{where} nbytes', g['nbytes'], w['nbytes'])
            elif w['nbytes'] >= 0 and w['op'] not in ('noop', 'openat', 'poll', 'poll_remove'):
                errors.append(f'{where}: no nbytes')
            if not w.get('no_cqe') and (not isinstance(g.get('latency_nsec'), int) or g['latency_nsec'] <= 0):
                errors.append(f'{where}: no latency')
    for key, got in reqs.items():
        if key[0] in pids:
            errors.append(f'a record of no request of the workload: {got}')
    kept = {}
    for path in [a.trace]:
        for line in open(path):
            e = json.loads(line)
            if e['kind'] == 'request' and e.get('cq_overflow'):
                eq(f'pid {e["pid"]} user_data {e["data"]}: cq_overflow', e['cq_overflow'], 'kept')
                kept[e['pid']] = kept.get(e['pid'], 0) + 1
    for pid in pids:
        mine = [s for s in sums if s['pid'] == pid]
        done = sum(1 + len(json.loads(line).get('more', [])) for path in a.truth for line in open(path)
                   if json.loads(line).get('pid') == pid and json.loads(line).get('done'))
        eq(f'pid {pid} summaries submitted_io_uring', sum(s.get('submitted_io_uring', 0) for s in mine), made[pid])
        eq(f'pid {pid} summaries completed', sum(s.get('completed', 0) for s in mine), done)
        # the kernel's overflow list: each completion it kept there is said to be one, and counted
        eq(f'pid {pid} requests through the CQ overflow list', kept.get(pid, 0), overflows.get(pid, 0))
        eq(f'pid {pid} summaries cq_overflows', sum(s.get('cq_overflows', 0) for s in mine), overflows.get(pid, 0))
    print(f'compare-uring: {n} requests, {fields} fields compared, {len(errors)} differ')
    for e in errors[:20]:
        print('  ' + e)
    return 1 if errors or n == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
