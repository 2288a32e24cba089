#!/usr/bin/env python3
"""Compare aiotraced's JSON lines with strace's decoding of the same program, run at the same time.

With --uring-datadir, of a program on io_uring: strace sees only io_uring_enter, whose results add up to the
requests submitted; each must have one record, completed, with a path in that directory.

strace -ff -y -e abbrev=none -X raw writes one file per thread (PREFIX.TID); aiotraced's calls of that thread,
in order, must be the same calls, with the same arguments, iocbs, events and results.  Each request aiotraced
reports must have ended as completed, with the path strace gave its fd at submit; the summaries must add up
to the request records.
"""
import argparse
import glob
import json
import os
import re
import sys

AIO_CALLS = ('io_setup', 'io_submit', 'io_getevents', 'io_pgetevents', 'io_cancel', 'io_destroy', 'io_uring_setup',
             'io_uring_enter', 'io_uring_register')
OPCODES = {'pread': 0, 'pwrite': 1, 'fsync': 2, 'fdsync': 3, 'poll': 5, 'noop': 6, 'preadv': 7, 'pwritev': 8}


class Parser:
    """strace's values: numbers, strings, [lists], {k=v structs}, fds with their path (14</a/b>), names."""

    def __init__(self, s):
        self.s, self.i = s, 0

    def skip(self):
        while self.i < len(self.s) and self.s[self.i] == ' ':
            self.i += 1

    def value(self):
        self.skip()
        c = self.s[self.i]
        if c == '[':
            return self.seq('[', ']')
        if c == '{':
            return self.struct()
        if c == '"':
            j = self.i + 1
            while self.s[j] != '"':
                j += 2 if self.s[j] == '\\' else 1
            v = ('str', self.s[self.i + 1:j])
            self.i = j + 1
            if self.s.startswith('...', self.i):
                self.i += 3
            return v
        m = re.compile(r'-?(?:0x[0-9a-f]+|\d+)(?:<((?:[^>\\]|\\.)*)>)?|[A-Za-z_][\w|]*').match(self.s, self.i)
        if not m:
            raise ValueError(f'cannot parse at {self.s[self.i:self.i + 40]!r}')
        self.i = m.end()
        tok = m.group(0)
        if m.group(1) is not None:
            return ('fd', int(tok[:tok.index('<')]), m.group(1))
        if tok[0].isdigit() or tok[0] == '-':
            return int(tok, 0)
        return tok

    def items(self, close, item):
        """item() until the closing character, the commas between them skipped."""
        self.i += 1
        self.skip()
        while self.s[self.i] != close:
            item()
            self.skip()
            if self.s[self.i] == ',':
                self.i += 1
            self.skip()
        self.i += 1

    def seq(self, open_, close):
        assert self.s[self.i] == open_
        out = []
        self.items(close, lambda: out.append(self.value()))
        return out

    def struct(self):
        out = {}

        def member():
            m = re.compile(r'(\w+)=').match(self.s, self.i)
            self.i = m.end()
            out[m.group(1)] = self.value()
        self.items('}', member)
        return out


CALL = re.compile(r'^(?P<name>io_\w+)\((?P<args>.*)\)\s+= (?P<ret>-?\d+|0x[0-9a-f]+)(?: (?P<errno>E\w+))?')


def strace_calls(prefix):
    """{tid: [call]} from strace -ff's files."""
    out = {}
    for path in glob.glob(prefix + '.*'):
        tid = int(path.rsplit('.', 1)[1])
        calls = []
        for line in open(path, errors='replace'):
            m = CALL.match(line)
            if not m or m['name'] not in AIO_CALLS:
                if line.startswith('io_') and 'unfinished' in line:
                    calls.append({'name': line.split('(')[0], 'unfinished': True})
                continue
            p = Parser('[' + m['args'] + ']')
            ret = int(m['ret'], 0)
            calls.append({'name': m['name'], 'args': p.seq('[', ']'), 'ret': -errno_of(m['errno']) if ret == -1 else ret})
        out[tid] = calls
    return out


def errno_of(name):
    import errno
    return getattr(errno, name, 0)


def num(v):
    return int(v, 16) if isinstance(v, str) else v


class Tally:
    def __init__(self):
        self.fields = 0
        self.errors = []

    def eq(self, where, got, want):
        self.fields += 1
        if got != want:
            self.errors.append(f'{where}: aiotraced {got!r}, strace {want!r}')


def compare_call(t, where, a, s, paths):
    """One call: aiotraced's JSON object a, strace's s.  Records each iocb's path by (ctx, iocb, enter)."""
    t.eq(f'{where} syscall', a['syscall'], s['name'])
    t.eq(f'{where} ret', a['ret'], s['ret'])
    args = s['args']
    name = s['name']
    if name == 'io_setup':
        t.eq(f'{where} nr_events', a['nr_events'], args[0])
        if a['ret'] == 0:
            t.eq(f'{where} ctx', num(a['ctx']), args[1][0])
    elif name == 'io_destroy':
        t.eq(f'{where} ctx', num(a['ctx']), args[0])
    elif name == 'io_submit':
        t.eq(f'{where} ctx', num(a['ctx']), args[0])
        t.eq(f'{where} nr', a['nr'], args[1])
        iocbs = a.get('iocbs', [])
        t.eq(f'{where} iocbs', len(iocbs), len(args[2]))
        enter = a['mono_ns'] - a['duration_nsec']
        for k, (x, y) in enumerate(zip(iocbs, args[2])):
            w = f'{where} iocb[{k}]'
            t.eq(f'{w} state', x.get('state'), 'ok')
            t.eq(f'{w} data', num(x['data']), y['aio_data'])
            t.eq(f'{w} op', OPCODES.get(x['op'], x['op']), y['aio_lio_opcode'])
            fd = y['aio_fildes']
            t.eq(f'{w} fd', x['fd'], fd[1] if isinstance(fd, tuple) else fd)
            t.eq(f'{w} nbytes', x['nbytes'], y['aio_nbytes'])
            t.eq(f'{w} offset', x['offset'], y['aio_offset'])
            if isinstance(y['aio_buf'], int):  # a write's buffer is shown as its bytes
                t.eq(f'{w} buf', num(x['buf']), y['aio_buf'])
            for key, skey in (('rw_flags', 'aio_rw_flags'), ('reqprio', 'aio_reqprio'), ('flags', 'aio_flags')):
                if skey in y or key in x:
                    t.eq(f'{w} {key}', num(x.get(key, 0)), y.get(skey, 0) if isinstance(y.get(skey, 0), int) else -1)
            if isinstance(fd, tuple) and k < max(a['ret'], 0):
                paths[(num(a['ctx']), num(x['iocb']), enter)] = fd[2]
    elif name in ('io_getevents', 'io_pgetevents'):
        t.eq(f'{where} ctx', num(a['ctx']), args[0])
        t.eq(f'{where} min_nr', a['min_nr'], args[1])
        t.eq(f'{where} nr', a['nr'], args[2])
        events = a.get('events', [])
        want = args[3] if isinstance(args[3], list) else []
        t.eq(f'{where} events', len(events), len(want) if a['ret'] > 0 else 0)
        for k, (x, y) in enumerate(zip(events, want)):
            w = f'{where} event[{k}]'
            t.eq(f'{w} state', x.get('state'), 'ok')
            for key in ('data', 'obj', 'res', 'res2'):
                t.eq(f'{w} {key}', num(x[key]), y[key])
    elif name == 'io_cancel':
        t.eq(f'{where} ctx', num(a['ctx']), args[0])
    elif name == 'io_uring_setup':
        t.eq(f'{where} entries', a['entries'], args[0])
    elif name == 'io_uring_enter':
        fd = args[0]
        t.eq(f'{where} ring_fd', a['ring_fd'], fd[1] if isinstance(fd, tuple) else fd)
        t.eq(f'{where} to_submit', a['to_submit'], args[1])
        t.eq(f'{where} min_complete', a['min_complete'], args[2])
        t.eq(f'{where} enter_flags', num(a['enter_flags']), args[3])
    elif name == 'io_uring_register':
        fd = args[0]
        t.eq(f'{where} ring_fd', a['ring_fd'], fd[1] if isinstance(fd, tuple) else fd)
        t.eq(f'{where} register_op', a['register_op'], args[1])
        t.eq(f'{where} nr_args', a['nr_args'], args[3])


def compare_uring(trace, straced, datadir):
    """io_uring: the requests io_uring_enter says were submitted, each once, completed, with its path."""
    submitted = sum(c['ret'] for calls in straced.values() for c in calls
                    if c.get('name') == 'io_uring_enter' and c.get('ret', 0) > 0)
    reqs, sums, errors = [], [], []
    for line in open(trace):
        e = json.loads(line)
        if e['kind'] == 'request':
            reqs.append(e)
        elif e['kind'] == 'summary':
            sums.append(e)
        elif e['kind'] == 'stats' and not re.search(r'\blost = 0\b', e.get('message', '')):
            errors.append(f'records lost: {e["message"]}')
    uring = [r for r in reqs if r.get('interface') == 'io_uring']
    kinds = {}
    for r in uring:
        kinds[r['request']] = kinds.get(r['request'], 0) + 1
    on_files = [r for r in uring if 'fd' in r]  # not a nop (MariaDB wakes its reaper with one at shutdown)
    with_path = sum(1 for r in on_files if r.get('path', '').startswith(datadir + '/') and 'path_state' not in r)
    # reads and writes (plain or vectored) say their bytes: what the kernel took, which a write's result is
    rw = [r for r in uring if r.get('op') in ('pread', 'pwrite', 'preadv', 'pwritev')]
    no_bytes = [r for r in rw if not isinstance(r.get('nbytes'), int)]
    wrong = [r for r in rw if isinstance(r.get('nbytes'), int) and r.get('res', -1) >= 0 and
             (r['res'] > r['nbytes'] or (r['op'].startswith('pwrite') and r['res'] != r['nbytes']))]
    # the README's "slowest writes": writes (plain or vectored) with a latency and a path
    slowest = [r for r in rw if r['op'].startswith('pwrite') and 'latency_nsec' in r and 'path' in r]
    if not slowest:
        errors.append("no write with a latency and a path: the README's slowest writes would find none")
    if no_bytes or wrong:
        errors.append(f'{len(no_bytes)} reads and writes without nbytes, {len(wrong)} whose result is not theirs: '
                      f'{(no_bytes + wrong)[:2]}')
    if len(uring) != submitted:
        errors.append(f'{len(uring)} io_uring request records, io_uring_enter submitted {submitted}')
    if kinds.get('completed', 0) != len(uring):
        errors.append(f'not all completed: {kinds}')
    if with_path != len(on_files):
        errors.append(f'{len(on_files) - with_path} requests on files without a path in {datadir}')
    if len(uring) != len(reqs):
        errors.append(f'{len(reqs) - len(uring)} native AIO requests where there should be none')
    for k in ('completed', 'submitted_io_uring'):
        if sum(s.get(k, 0) for s in sums) != len(uring):
            errors.append(f'the summaries count {sum(s.get(k, 0) for s in sums)} {k}, the records {len(uring)}')
    print(f'compare-strace: io_uring_enter submitted {submitted}; {len(uring)} io_uring request records {kinds}, '
          f'{with_path} of {len(on_files)} on files with their path; {len(rw)} reads and writes, '
          f'{len(rw) - len(no_bytes)} with their bytes')
    for err in errors:
        print('  ' + err)
    return 1 if errors or not uring else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', required=True, help="aiotraced's JSON lines")
    ap.add_argument('--strace', required=True, help="strace -ff's output prefix")
    ap.add_argument('--uring-datadir', help='the program uses io_uring, on files in this directory')
    ap.add_argument('--calls-only', action='store_true', help='compare the calls, not the requests')
    a = ap.parse_args()
    if a.uring_datadir:
        return compare_uring(a.trace, strace_calls(a.strace), a.uring_datadir)

    calls, reqs, sums, files, stats = {}, [], [], [], None
    for line in open(a.trace):
        e = json.loads(line)
        if e['kind'] == 'call':
            calls.setdefault(e['tid'], []).append(e)
        elif e['kind'] == 'request':
            reqs.append(e)
        elif e['kind'] == 'summary':
            sums.append(e)
        elif e['kind'] == 'file_summary':
            files.append(e)
        elif e['kind'] == 'stats':
            stats = e.get('message', '')
    straced = strace_calls(a.strace)
    t = Tally()
    paths = {}
    n_calls = 0
    for tid in sorted(set(calls) | {k for k, v in straced.items() if v}):
        mine = sorted(calls.get(tid, []), key=lambda e: e['mono_ns'])
        theirs = [c for c in straced.get(tid, []) if not c.get('unfinished')]
        if len(mine) != len(theirs):
            t.errors.append(f'tid {tid}: aiotraced has {len(mine)} calls, strace {len(theirs)}')
        for k, (x, y) in enumerate(zip(mine, theirs)):
            compare_call(t, f'tid {tid} call {k} ({y["name"]})', x, y, paths)
        n_calls += min(len(mine), len(theirs))

    kinds = {}
    path_equal = path_missing = 0
    for r in reqs:
        kinds[r['request']] = kinds.get(r['request'], 0) + 1
        key = (num(r['ctx']), num(r['iocb']), r.get('submit_nsec'))
        want = paths.get(key)
        if want is None:
            continue
        if r.get('path') == want and 'path_state' not in r:
            path_equal += 1
        else:
            path_missing += 1
            if path_missing <= 5:
                t.errors.append(f'request {key}: path {r.get("path")!r} ({r.get("path_state", "ok")}), strace {want!r}')
    if a.calls_only:
        print(f'compare-strace: {n_calls} calls paired ({sum(map(len, calls.values()))} aiotraced, '
              f'{sum(len(v) for v in straced.values())} strace), {t.fields} fields compared')
        for err in t.errors[:20]:
            print('  ' + err)
        return 1 if t.errors or not n_calls else 0
    for k, v in kinds.items():
        if k != 'completed':
            t.errors.append(f'{v} requests {k}')
    completed = kinds.get('completed', 0)
    if sum(s.get('completed', 0) for s in sums) != completed:
        t.errors.append(f'the summaries count {sum(s.get("completed", 0) for s in sums)} completed, the records '
                        f'{completed}')
    if files and sum(f['requests'] for f in files) != len(reqs):
        t.errors.append(f'the file summaries count {sum(f["requests"] for f in files)} requests, the records {len(reqs)}')
    if stats and not re.search(r'\blost = 0\b', stats):
        t.errors.append(f'records lost: {stats}')
    n_paths = path_equal + path_missing
    print(f'compare-strace: {n_calls} calls paired ({sum(map(len, calls.values()))} aiotraced, '
          f'{sum(len(v) for v in straced.values())} strace), {t.fields} fields compared; {len(reqs)} requests '
          f'{kinds}; paths equal to strace: {path_equal} of {n_paths}; {len(files)} file summaries')
    for err in t.errors[:20]:
        print('  ' + err)
    if len(t.errors) > 20:
        print(f'  ... {len(t.errors) - 20} more')
    return 1 if t.errors or n_paths != len(reqs) else 0


if __name__ == '__main__':
    sys.exit(main())
