#!/usr/bin/env python3
"""Compare aiotraced's text output with the ground truth the test workload wrote.

Every call the workload made must appear once, in order per thread, with the same arguments and result;
every iocb, event, context and timeout value the tracer printed without a mark must equal the truth; a value
the tracer could not vouch for must carry a mark (stale / unreadable), never a wrong value printed as true.
"""
import argparse
import json
import re
import sys

HDR = re.compile(r'^\[(?P<comm>.*) - (?P<pid>\d+) - (?P<tid>\d+)(?: - (?P<unit>[^]]+))?\] (?P<sc>io_\w+)\((?P<args>[^)]*)\) '
                 r'\[retval = (?P<ret>-?\d+)(?: \((?P<errname>\w+)\))?\] \((?:(?P<dur>\d+) ns|enter not seen)\)$')
ITEM = re.compile(r'^    (?P<kind>iocb|event)\[ *(?P<i>\d+)\] = (?P<rest>.*)$')
UNREADABLE = re.compile(r'^<unreadable: (?P<why>[^>]+)>$')
OPS = {0: 'pread', 1: 'pwrite', 2: 'fsync', 3: 'fdsync', 5: 'poll', 6: 'noop', 7: 'preadv', 8: 'pwritev'}
RWF = {1: 'RWF_HIPRI', 2: 'RWF_DSYNC', 4: 'RWF_SYNC', 8: 'RWF_NOWAIT', 16: 'RWF_APPEND'}


class Failure(Exception):
    pass


def kv(line):
    return dict(p.split('=', 1) for p in line.split()[1:])


def parse_truth(path):
    """-> (process, calls in file order, migrations); each call has the paths its process's fds named then"""
    calls, process, migrations, fds = [], None, [], {}
    cur = None
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            kind = line.split(' ', 1)[0]
            d = kv(line)
            if kind == 'process':
                process = d
            elif kind == 'file':
                fds[d['fd']] = d['path']
            elif kind == 'close':
                fds.pop(d['fd'], None)
            elif kind == 'call':
                cur = {'call': d, 'iocbs': [], 'events': [], 'timeout': None, 'ctx': None, 'fds': dict(fds)}
                calls.append(cur)
            elif kind == 'iocb':
                cur['iocbs'].append(d)
            elif kind == 'event':
                cur['events'].append(d)
            elif kind == 'timeout':
                cur['timeout'] = d
            elif kind == 'ctx':
                cur['ctx'] = d
            elif kind == 'migrate':
                migrations.append(d)
    return process, calls, migrations


def split_fields(s):
    """'op = pread, fd = 3, ... [stale]' -> ({'op': 'pread', ...}, marked)"""
    marked = False
    if s.endswith(' [stale]'):
        s, marked = s[:-len(' [stale]')], True
    m = re.search(r' \[stale: submitted with data (0x[0-9a-f]+)\]$', s)
    if m:
        s, marked = s[:m.start()], True
    fields = {}
    for part in s.split(', '):
        k, _, v = part.partition(' = ')
        if v.endswith(' [stale]'):
            v, marked = v[:-len(' [stale]')], True
        fields[k] = v  # one field '<unreadable: ...>' marks that field alone
    return fields, marked


MESSAGE_ID_CALL = 'b0f6e50e82354737904d93ee3e91c53e'


def journal_lines(path):
    """journalctl -o json entries -> (the text layout's lines, the fields of each call entry in order)"""
    lines, fields = [], []
    with open(path) as f:
        for raw in f:
            e = json.loads(raw)
            if e.get('SYSLOG_IDENTIFIER') != 'aiotraced' or 'MESSAGE_ID' not in e:
                continue  # not the daemon's structured entries (its standard error, under systemd)
            msg = e['MESSAGE']
            if isinstance(msg, list):  # journalctl gives non-UTF-8 values as byte arrays
                msg = bytes(msg).decode('utf-8', 'replace')
            lines.extend(msg.split('\n'))
            if e.get('MESSAGE_ID') == MESSAGE_ID_CALL:
                fields.append(e)
    return lines, fields


def json_lines(paths):
    """JSON lines files, oldest first -> (the text layout's lines, each call object in order)"""
    lines, objs = [], []
    for path in paths:
        with open(path, encoding='utf-8') as f:  # strict: the daemon must write valid UTF-8
            for raw in f:
                if not raw.endswith('\n'):
                    raise Failure(f'{path}: a line without its newline: {raw[:80]!r}')
                e = json.loads(raw)
                if e.get('schema') != 1:
                    raise Failure(f'{path}: schema {e.get("schema")!r}')
                if 'message' in e:
                    lines.extend(e['message'].split('\n'))
                elif e['kind'] == 'call':
                    lines.extend(render_call(e))  # json_message off: the members alone must tell everything
                elif e['kind'] not in ('request', 'summary'):
                    raise Failure(f'{path}: a {e["kind"]} object without its message')
                if e['kind'] == 'call':
                    objs.append(e)
    return lines, objs


def render_iocb(o):
    """A JSON iocb object -> what the text layout prints after 'iocb[   i] = '"""
    if 'iocb' not in o:
        return f'<unreadable: {o["state"]}>'
    if o['state'] not in ('ok', 'stale'):
        return f'{o["iocb"]}, <unreadable: {o["state"]}>'
    op = o['op'] if isinstance(o['op'], str) else f'{o["op"]} (unknown)'
    parts = [f'op = {op}', f'fd = {o["fd"]}', f'data = {o["data"]}', f'buf = {o["buf"]}',
             f'nbytes = {o["nbytes"]}', f'offset = {o["offset"]}']
    if 'iov_total' in o:
        parts.append(f'iov_total = {o["iov_total"]}')
    elif 'iov_state' in o:
        parts.append(f'iov_total = <unreadable: {o["iov_state"]}>')
    if 'rw_flags' in o:
        parts.append('rw_flags = ' + '|'.join(n for b, n in RWF.items() if int(o['rw_flags'], 16) & b))
    if 'reqprio' in o:
        parts.append(f'reqprio = {o["reqprio"]}')
    if 'flags' in o:
        parts.append('flags = ' + {1: 'IOCB_FLAG_RESFD', 2: 'IOCB_FLAG_IOPRIO',
                                    3: 'IOCB_FLAG_RESFD|IOCB_FLAG_IOPRIO'}.get(int(o['flags'], 16), o['flags']))
    for k in ('resfd', 'key'):
        if k in o:
            parts.append(f'{k} = {o[k]}')
    return f'{o["iocb"]}, ' + ', '.join(parts) + (' [stale]' if o['state'] == 'stale' else '')


def render_events(e):
    lines = []
    for o in e.get('events', []):
        head = f'    event[{o["i"]:4d}] = {o["addr"]}'
        if o['state'] not in ('ok', 'stale'):
            lines.append(f'{head}, <unreadable: {o["state"]}>')
            continue
        lines.append(head)
        res = f'{o["res"]}' + (f' ({o["errno"]})' if 'errno' in o else '')
        tail = f'      iocb = {o["obj"]}, fd = {o.get("fd", "?")}, data = {o["data"]}, res = {res}, res2 = {o["res2"]}'
        if 'submitted_data' in o:
            tail += f' [stale: submitted with data {o["submitted_data"]}]'
        elif o['state'] == 'stale':
            tail += ' [stale]'
        lines.append(tail)
    return lines


def render_call(e):
    """A call's JSON object -> the text layout's lines, from its members alone"""
    sc = e['syscall']
    if sc == 'io_setup':
        args = [e.get('nr_events'), e.get('ctxp')]
    elif sc == 'io_destroy':
        args = [e.get('ctx')]
    elif sc == 'io_submit':
        args = [e.get('ctx'), e.get('nr'), e.get('iocbpp')]
    elif sc == 'io_cancel':
        args = [e.get('ctx'), e.get('iocb'), e.get('result_addr')]
    else:
        args = [e.get('ctx'), e.get('min_nr'), e.get('nr'), e.get('events_addr'), e.get('timeout_addr')]
        if sc == 'io_pgetevents':
            args.append(e.get('usig_addr'))
    ret = f'{e["ret"]}' + (f' ({e["errno"]})' if 'errno' in e else '')
    if e.get('enter') == 'not seen':
        return [f'[{e["comm"]} - {e["pid"]} - {e["tid"]}] {sc}(?) [retval = {ret}] (enter not seen)']
    lines = [f'[{e["comm"]} - {e["pid"]} - {e["tid"]}] {sc}({", ".join(str(a) for a in args)}) '
             f'[retval = {ret}] ({e["duration_nsec"]} ns)']
    if sc == 'io_setup':
        if 'ctx' in e:
            lines.append(f'    ctx = {e["ctx"]}')
        elif e.get('ctx_state', 'not read') != 'not read':
            lines.append(f'    ctx = <unreadable: {e["ctx_state"]}>')
    elif sc == 'io_submit':
        lines += [f'    iocb[{o["i"]:4d}] = {render_iocb(o)}' for o in e['iocbs']]
        if 'not_read' in e:
            lines.append(f'    ... {e["not_read"]} more iocbs not read')
    elif sc == 'io_cancel':
        if e['cancelled']['state'] != 'not read':
            lines.append(f'    iocb = {render_iocb(e["cancelled"])}')
        lines += render_events(e)
    elif sc in ('io_getevents', 'io_pgetevents'):
        if int(e['timeout_addr'], 16):
            if 'timeout_nsec' in e:
                lines.append('    timeout = %d.%09d' % divmod(e['timeout_nsec'], 1000000000))
            else:
                lines.append(f'    timeout = <unreadable: {e["timeout_state"]}>')
        lines += render_events(e)
        if 'not_read' in e:
            lines.append(f'    ... {e["not_read"]} more events not read')
    return lines


def parse_trace(path, journal=False, json_files=None):
    calls, other = [], []
    cur = None
    pending_event = None
    if json_files:
        lines, call_fields = json_lines(json_files)
    elif journal:
        lines, call_fields = journal_lines(path)
    else:
        with open(path, errors='replace') as f:
            lines, call_fields = [l.rstrip('\n') for l in f], None
    for line in lines:
        m = HDR.match(line)
        if m:
            cur = {'hdr': m.groupdict(), 'iocbs': {}, 'events': {}, 'ctx': None, 'timeout': None,
                   'cancel_iocb': None, 'more': None,
                   'journal': call_fields[len(calls)] if call_fields is not None else None}
            cur['hdr']['args'] = m.group('args').split(', ')
            calls.append(cur)
            continue
        if line.startswith('['):
            other.append(line)
            cur = None
            continue
        if cur is None:
            raise Failure(f'line outside any call: {line!r}')
        m = ITEM.match(line)
        if m:
            i, rest = int(m.group('i')), m.group('rest')
            if m.group('kind') == 'iocb':
                cur['iocbs'][i] = parse_iocb(rest)
            else:
                addr, _, tail = rest.partition(', ')
                ev = {'addr': addr, 'state': 'ok', 'fields': None}
                if tail:
                    ev['state'] = UNREADABLE.match(tail).group('why')
                cur['events'][i] = ev
                pending_event = ev
            continue
        if line.startswith('      iocb = '):
            fields, marked = split_fields('iocb = ' + line[len('      iocb = '):])
            pending_event['fields'] = fields
            if marked:
                pending_event['state'] = 'stale'
            continue
        if line.startswith('    iocb = '):
            cur['cancel_iocb'] = parse_iocb(line[len('    iocb = '):])
        elif line.startswith('    ctx = '):
            cur['ctx'] = line[len('    ctx = '):]
        elif line.startswith('    timeout = '):
            cur['timeout'] = line[len('    timeout = '):]
        elif line.startswith('    ... '):
            cur['more'] = int(line.split()[1])
        else:
            raise Failure(f'unrecognised line: {line!r}')
    if call_fields is not None and len(call_fields) != len(calls):
        raise Failure(f'{len(call_fields)} call entries in the journal, {len(calls)} call headers in their messages')
    return calls, other


def parse_iocb(rest):
    m = UNREADABLE.match(rest)
    if m:
        return {'addr': None, 'state': m.group('why'), 'fields': None}
    addr, _, tail = rest.partition(', ')
    m = UNREADABLE.match(tail)
    if m:
        return {'addr': addr, 'state': m.group('why'), 'fields': None}
    fields, marked = split_fields(tail)
    return {'addr': addr, 'state': 'stale' if marked else 'ok', 'fields': fields}


def hx(v):
    return '0x%016x' % int(v, 16)


class Tally:
    def __init__(self, strict):
        self.strict, self.correct, self.marked, self.wrong, self.errors = strict, 0, 0, 0, []
        self.journal_fields = 0

    def value(self, where, got, want, marked):
        if got == want:
            if marked:
                self.marked += 1
                if self.strict:
                    self.errors.append(f'{where}: marked although the workload left it untouched: {got}')
            else:
                self.correct += 1
        elif marked:
            self.marked += 1
            if self.strict:
                self.errors.append(f'{where}: marked and different: got {got}, truth {want}')
        else:
            self.wrong += 1
            self.errors.append(f'{where}: WRONG value printed as true: got {got}, truth {want}')

    def unreadable(self, where, reason, truth_readable):
        self.marked += 1
        if truth_readable and self.strict:
            self.errors.append(f'{where}: unreadable ({reason}) although the workload could read it')


def expect_iocb_fields(t):
    op = int(t['opcode'])
    want = {'op': OPS.get(op, f'{op} (unknown)'), 'fd': t['fd'], 'data': hx(t['data']), 'buf': hx(t['buf']),
            'nbytes': t['nbytes'], 'offset': t['offset']}
    if 'iov_total' in t:
        want['iov_total'] = t['iov_total']
    if int(t['rw_flags']):
        want['rw_flags'] = '|'.join(n for b, n in RWF.items() if int(t['rw_flags']) & b)
    if int(t['reqprio']):
        want['reqprio'] = t['reqprio']
    if int(t['flags']):
        want['flags'] = {1: 'IOCB_FLAG_RESFD', 2: 'IOCB_FLAG_IOPRIO', 3: 'IOCB_FLAG_RESFD|IOCB_FLAG_IOPRIO'}[int(t['flags'])]
    if int(t['flags']) & 1:
        want['resfd'] = t['resfd']
    if int(t['key']):
        want['key'] = t['key']
    return want


def compare_iocb(tally, where, got, want):
    if want is None:
        if got['state'] == 'ok':
            tally.errors.append(f'{where}: printed as read, but the workload had nothing readable there')
        else:
            tally.unreadable(where, got['state'], False)
        return
    if got['addr'] is None or got['fields'] is None:
        tally.unreadable(where, got['state'], True)
        return
    marked = got['state'] != 'ok'
    tally.value(f'{where}.addr', got['addr'], hx(want['addr']), marked)
    exp = expect_iocb_fields(want)
    unread = {k: v for k, v in got['fields'].items() if v.startswith('<unreadable')}
    if set(got['fields']) - set(unread) != set(exp) - set(unread) and not marked:
        tally.errors.append(f'{where}: fields {sorted(got["fields"])} != {sorted(exp)}')
    for k, v in unread.items():
        tally.unreadable(f'{where}.{k}', v, k in exp)
    for k, v in exp.items():
        if k not in unread:
            tally.value(f'{where}.{k}', got['fields'].get(k), v, marked)


def expected_args(c):
    sc = c['syscall']
    if sc == 'io_setup':
        return [c['nr_events'], hx(c['ctxp'])]
    if sc == 'io_destroy':
        return [hx(c['ctx'])]
    if sc == 'io_submit':
        return [hx(c['ctx']), c['nr'], hx(c['iocbpp'])]
    if sc == 'io_cancel':
        return [hx(c['ctx']), hx(c['iocb']), hx(c['result'])]
    args = [hx(c['ctx']), c['min_nr'], c['nr'], hx(c['events']), hx(c['timeout'])]
    if sc == 'io_pgetevents':
        args.append(hx(c['usig']))
    return args


def expected_journal_fields(c, want):
    sc = c['syscall']
    f = {'SYSLOG_IDENTIFIER': 'aiotraced', 'AIO_SYSCALL': sc, 'AIO_TID': c['tid'], 'AIO_RET': c['ret']}
    if int(c['ret']) < 0:
        f['AIO_ERRNO'] = None  # present; its name is checked against the header's
    if sc == 'io_setup':
        f['AIO_NR_EVENTS'] = c['nr_events']
        if want['ctx']:
            f['AIO_CTX'] = hx(want['ctx']['value'])
    elif sc == 'io_submit':
        f.update(AIO_CTX=hx(c['ctx']), AIO_NR=c['nr'], AIO_IOCBPP=hx(c['iocbpp']))
    elif sc == 'io_cancel':
        f.update(AIO_CTX=hx(c['ctx']), AIO_IOCB=hx(c['iocb']))
    elif sc == 'io_destroy':
        f['AIO_CTX'] = hx(c['ctx'])
    else:
        f.update(AIO_CTX=hx(c['ctx']), AIO_MIN_NR=c['min_nr'], AIO_NR=c['nr'], AIO_EVENTS=hx(c['events']))
        if want['timeout']:
            t = want['timeout']
            f['AIO_TIMEOUT_NSEC'] = str(int(t['sec']) * 1000000000 + int(t['nsec']))
    return f


def compare_journal(tally, where, got, want, pid, comm):
    j = got['journal']
    exp = expected_journal_fields(want['call'], want)
    exp.update(AIO_PID=pid, OBJECT_PID=pid, AIO_COMM=comm)
    for k, v in exp.items():
        if k not in j:
            tally.errors.append(f'{where}: journal field {k} missing')
        elif v is None:
            if j[k] != got['hdr']['errname']:
                tally.errors.append(f'{where}: journal {k}={j[k]}, the message says {got["hdr"]["errname"]}')
        elif j[k] != v:
            tally.errors.append(f'{where}: journal {k}={j[k]}, truth {v}')
    if 'AIO_DURATION_NSEC' not in j or j['AIO_DURATION_NSEC'] != got['hdr']['dur']:
        tally.errors.append(f'{where}: journal AIO_DURATION_NSEC={j.get("AIO_DURATION_NSEC")}, '
                            f'the message says {got["hdr"]["dur"]}')
    tally.journal_fields += len(exp) + 1


def compare_json(tally, where, got, want, pid, comm):
    """The JSON object's own members against the truth: what a consumer reads without parsing the message."""
    j, c = got['journal'], want['call']
    def check(name, value, truth):
        tally.journal_fields += 1
        if value != truth:
            tally.errors.append(f'{where}: json {name}={value!r}, truth {truth!r}')
    check('syscall', j.get('syscall'), c['syscall'])
    check('pid', j.get('pid'), int(pid))
    check('tid', j.get('tid'), int(c['tid']))
    check('comm', j.get('comm'), comm)
    check('ret', j.get('ret'), int(c['ret']))
    if c['syscall'] == 'io_submit':
        check('iocbpp', j.get('iocbpp'), hx(c['iocbpp']))
        for t, o in zip(want['iocbs'], j.get('iocbs', [])):
            if o.get('state') != 'ok':
                continue
            check('iocb', o.get('iocb'), hx(t['addr']))
            check('fd', o.get('fd'), int(t['fd']))
            check('data', o.get('data'), hx(t['data']))
            check('nbytes', o.get('nbytes'), int(t['nbytes']))
            check('offset', o.get('offset'), int(t['offset']))
    if c['syscall'] in ('io_getevents', 'io_pgetevents'):
        for t, o in zip(want['events'], j.get('events', [])):
            if o.get('state') != 'ok':
                continue
            check('event.obj', o.get('obj'), hx(t['obj']))
            check('event.data', o.get('data'), hx(t['data']))
            check('event.res', o.get('res'), int(t['res']))


def compare_call(tally, where, got, want, max_iocbs, submitted_fd):
    c = want['call']
    h = got['hdr']
    if h['sc'] != c['syscall']:
        raise Failure(f'{where}: syscall {h["sc"]} where the workload made {c["syscall"]}')
    if h['dur'] is None:
        tally.errors.append(f'{where}: enter not seen')
        return
    if h['args'] != expected_args(c):
        tally.errors.append(f'{where}: args {h["args"]} != {expected_args(c)}')
    if h['ret'] != c['ret']:
        tally.errors.append(f'{where}: retval {h["ret"]} != {c["ret"]}')
    sc = c['syscall']
    if sc == 'io_setup' and int(c['ret']) == 0:
        v = got['ctx'] or '<missing>'
        marked = v.endswith(' [stale]') or v.startswith('<')
        tally.value(f'{where}.ctx', v.replace(' [stale]', ''), hx(want['ctx']['value']), marked)
    if sc == 'io_submit':
        ret, nr = int(c['ret']), int(c['nr'])
        wanted = ret if ret > 0 else max(nr, 0)
        shown = min(wanted, max_iocbs)
        if sorted(got['iocbs']) != list(range(shown)):
            tally.errors.append(f'{where}: iocb lines {sorted(got["iocbs"])}, expected 0..{shown - 1}')
        if wanted > shown and got['more'] != wanted - shown:
            tally.errors.append(f'{where}: truncation line says {got["more"]}, expected {wanted - shown}')
        truth = {int(t['i']): t for t in want['iocbs']}
        for i, g in got['iocbs'].items():
            compare_iocb(tally, f'{where}.iocb[{i}]', g, truth.get(i))
        if ret > 0:
            for t in want['iocbs'][:ret]:
                submitted_fd[int(t['addr'], 16)] = t['fd']
    if sc == 'io_cancel':
        compare_iocb(tally, f'{where}.iocb', got['cancel_iocb'], want['iocbs'][0])
    if sc in ('io_getevents', 'io_pgetevents'):
        if want['timeout']:
            t = want['timeout']
            v = got['timeout'] or '<missing>'
            marked = v.endswith(' [stale]') or v.startswith('<')
            tally.value(f'{where}.timeout', v.replace(' [stale]', ''), '%s.%09d' % (t['sec'], int(t['nsec'])), marked)
        n = max(int(c['ret']), 0)
        if sorted(got['events']) != list(range(min(n, max_iocbs))):
            tally.errors.append(f'{where}: event lines {sorted(got["events"])}, expected {min(n, max_iocbs)}')
        for t in want['events']:
            i = int(t['i'])
            g = got['events'].get(i)
            if g is None:
                continue
            w = f'{where}.event[{i}]'
            tally.value(f'{w}.addr', g['addr'], hx(t['addr']), False)
            if g['fields'] is None:
                tally.unreadable(w, g['state'], True)
                continue
            marked = g['state'] != 'ok'
            f = g['fields']
            tally.value(f'{w}.obj', f.get('iocb'), hx(t['obj']), marked)
            tally.value(f'{w}.data', f.get('data'), hx(t['data']), marked)
            res = f.get('res', '').split(' ')[0]
            tally.value(f'{w}.res', res, t['res'], marked)
            tally.value(f'{w}.res2', f.get('res2'), t['res2'], marked)
            want_fd = submitted_fd.pop(int(t['obj'], 16), None)
            if f.get('fd') == '?':
                tally.unreadable(f'{w}.fd', 'not matched to its submit', want_fd is not None)
            else:
                tally.value(f'{w}.fd', f.get('fd'), want_fd, marked)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--truth', required=True, action='append')
    ap.add_argument('--unwatched', action='append', default=[], help='truth of a process that must not appear')
    ap.add_argument('--max-iocbs', type=int, default=256)
    ap.add_argument('--strict', action='store_true', help='no value may be marked where the truth is readable')
    ap.add_argument('--expect-migration', action='store_true')
    ap.add_argument('--journal', action='store_true', help='the trace is journalctl -o json output')
    ap.add_argument('--json', nargs='+', help='the trace is these JSON lines files, oldest first')
    ap.add_argument('--trace')
    a = ap.parse_args()

    calls, other = parse_trace(a.trace, a.journal, a.json)
    tally = Tally(a.strict)
    n_calls = 0
    for path in a.truth:
        process, truth_calls, migrations = parse_truth(path)
        # reaped from the ring by the program itself: no system call to trace
        truth_calls = [c for c in truth_calls if c['call']['syscall'] != 'user_reap']
        pid = process['pid']
        mine = [c for c in calls if c['hdr']['pid'] == pid]
        by_tid = {}
        for c in mine:
            by_tid.setdefault(c['hdr']['tid'], []).append(c)
        want_by_tid = {}
        for c in truth_calls:
            want_by_tid.setdefault(c['call']['tid'], []).append(c)
        if set(by_tid) != set(want_by_tid):
            raise Failure(f'pid {pid}: threads traced {sorted(by_tid)} != threads that made calls {sorted(want_by_tid)}')
        for tid, wants in want_by_tid.items():
            gots = by_tid[tid]
            if len(gots) != len(wants):
                first = next((k for k, (g, w) in enumerate(zip(gots, wants))
                              if g['hdr']['sc'] != w['call']['syscall']), min(len(gots), len(wants)))
                raise Failure(f'tid {tid}: {len(gots)} calls traced, the workload made {len(wants)}; first '
                              f'difference at call {first}: traced {[g["hdr"]["sc"] for g in gots[first:first + 3]]}, '
                              f'made {[w["call"]["syscall"] for w in wants[first:first + 3]]}')
            submitted_fd = {}
            for k, (g, w) in enumerate(zip(gots, wants)):
                if g['hdr']['comm'] == '?':
                    # the thread was gone before its name could be read (afterwards, at full speed): said so
                    tally.unreadable(f'tid {tid} call {k}.comm', 'thread gone', True)
                elif g['hdr']['comm'] != process['comm']:
                    tally.errors.append(f'tid {tid} call {k}: comm {g["hdr"]["comm"]!r} != {process["comm"]!r}')
                where = f'tid {tid} call {k} ({w["call"]["syscall"]})'
                compare_call(tally, where, g, w, a.max_iocbs, submitted_fd)
                if g['journal'] is not None and g['hdr']['dur'] is not None:
                    if a.json:
                        compare_json(tally, where, g, w, pid, process['comm'])
                    else:
                        compare_journal(tally, where, g, w, pid, process['comm'])
            n_calls += len(wants)
        if a.expect_migration:
            if not migrations:
                raise Failure('the workload recorded no migration')
            for m in migrations:
                if m['cpu_before'] == m['cpu_after']:
                    raise Failure(f'thread {m["tid"]} did not change CPU ({m}): the test did not test migration')
    for path in a.unwatched:
        process, _, _ = parse_truth(path)
        seen = [c for c in calls if c['hdr']['pid'] == process['pid']]
        if seen:
            raise Failure(f'unwatched pid {process["pid"]} appears in the trace {len(seen)} times')
    for line in other:
        if line.startswith('[lost]'):
            tally.errors.append(f'records lost: {line}')

    print(f'compare: {n_calls} calls matched; values: {tally.correct} correct, {tally.marked} marked '
          f'(stale/unreadable), {tally.wrong} wrong but printed as true'
          + (f'; {tally.journal_fields} {"JSON" if a.json else "journal"} fields checked'
             if a.journal or a.json else ''))
    return report(tally)


def report(tally):
    """The first 40 errors; the exit status."""
    for e in tally.errors[:40]:
        print('  ' + e)
    if len(tally.errors) > 40:
        print(f'  ... {len(tally.errors) - 40} more')
    return 1 if tally.errors else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Failure as e:
        print(f'compare: FAIL: {e}')
        sys.exit(1)
