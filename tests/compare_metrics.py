#!/usr/bin/env python3
"""Compare aiotraced's Prometheus metrics with the ground truth of the workloads that ran under one program name.

The counters of comm=COMM (requests submitted and completed by op, errors, bytes read and written, cancelled,
abandoned) must equal the sums over the workloads' truth files; the latency histogram's _count the completed
requests; each bucket the exact latencies of the trace's own request records, up to the log-linear histogram's
error (a bucket of it is 1/64 of its lowest value wide); nothing in flight at the end; the records read what the
trace's [stats] line says.
"""
import argparse
import re
import sys

from compare import OPS, Failure, Tally, report
from compare_requests import READS, WRITES, expected_requests, parse_trace

SAMPLE = re.compile(r'^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
BUCKET_ERROR = 1 / 64


def parse_metrics(path):
    samples = []
    for line in open(path):
        line = line.rstrip('\n')
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise Failure(f'{path}: not a sample line: {line!r}')
        labels = dict(LABEL.findall(m.group('labels') or ''))
        samples.append((m.group('name'), labels, float(m.group('value'))))
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--metrics', required=True)
    ap.add_argument('--truth', required=True, action='append')
    ap.add_argument('--trace', action='append', default=[],
                    help='text traces with the request records: the buckets and records read checked against them')
    ap.add_argument('--comm', required=True)
    a = ap.parse_args()

    samples = parse_metrics(a.metrics)
    mine = [(n, l, v) for n, l, v in samples if l.get('comm') == a.comm]
    got = {}
    for name, labels, value in mine:
        key = name + (f'_{labels["op"]}' if 'op' in labels else '') + (f'@{labels["le"]}' if 'le' in labels else '')
        got[key] = got.get(key, 0) + value

    want = {}
    def add(k, v=1):
        want[k] = want.get(k, 0) + v
    for path in a.truth:
        _, _, done = expected_requests(path, None, 0)
        for r in done:
            op = OPS.get(int(r['truth']['opcode']), 'other')
            add('aiotraced_requests_submitted_total_' + op)
            if r['kind'] not in ('completed', 'cancelled'):
                add('aiotraced_requests_abandoned_total')
                continue
            add('aiotraced_requests_completed_total_' + op)
            res = int(r['event']['res'])
            if -4095 <= res < 0:
                add('aiotraced_request_errors_total')
            elif res > 0 and int(r['truth']['opcode']) in READS:
                add('aiotraced_read_bytes_total', res)
            elif res > 0 and int(r['truth']['opcode']) in WRITES:
                add('aiotraced_written_bytes_total', res)
            if r['kind'] == 'cancelled':
                add('aiotraced_requests_cancelled_total')
            else:
                add('aiotraced_request_latency_seconds_count')

    tally = Tally(True)
    for k, v in sorted(want.items()):
        if got.get(k, 0) == v:
            tally.correct += 1
        else:
            tally.errors.append(f'{k}: {got.get(k, 0):g} in the metrics, {v} by the workloads')
    for k in ('aiotraced_requests_in_flight', 'aiotraced_requests_unresolved_total'):
        if got.get(k, 0) != 0:
            tally.errors.append(f'{k} = {got[k]:g}, expected 0')

    # the buckets against the exact latencies the request records give
    latencies = []
    records = 0
    for path in a.trace:
        reqs, _, _ = parse_trace(path, 'text')
        latencies += [int(r['latency_nsec']) for r in reqs
                      if r.get('comm') == a.comm and r['request'] == 'completed' and 'latency_nsec' in r]
        for line in open(path):
            m = re.match(r'^\[stats\] records = (\d+),', line)
            if m:
                records += int(m.group(1))
    if not a.trace:
        latencies = None
    elif len(latencies) != want.get('aiotraced_request_latency_seconds_count', 0):
        tally.errors.append(f'{len(latencies)} completed request records, '
                            f'{want.get("aiotraced_request_latency_seconds_count", 0)} by the workloads')
    for k, v in got.items():
        if latencies is None or not k.startswith('aiotraced_request_latency_seconds_bucket@'):
            continue
        le = k.split('@')[1]
        if le == '+Inf':
            ok = v == len(latencies)
            low = high = len(latencies)
        else:
            bound = float(le) * 1e9
            low = sum(1 for x in latencies if x <= bound)
            high = sum(1 for x in latencies if x <= bound * (1 + BUCKET_ERROR))
            ok = low <= v <= high
        if ok:
            tally.correct += 1
        else:
            tally.errors.append(f'bucket le={le}: {v:g}, the exact latencies give {low} to {high}')
    if latencies is not None:
        total_sum = got.get('aiotraced_request_latency_seconds_sum', -1)
        if abs(total_sum - sum(latencies) / 1e9) > 1e-6:
            tally.errors.append(f'latency _sum {total_sum}, the records add up to {sum(latencies) / 1e9}')
        read = [v for n, _, v in samples if n == 'aiotraced_records_read_total']
        if read != [records]:
            tally.errors.append(f'aiotraced_records_read_total {read}, the traces read {records}')
    print(f'compare-metrics: {len(mine)} samples of comm="{a.comm}", {len(latencies or [])} latencies; '
          f'values: {tally.correct} correct, {len(tally.errors)} wrong')
    return report(tally)


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Failure as e:
        print(f'compare-metrics: FAIL: {e}')
        sys.exit(1)
