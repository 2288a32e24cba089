#!/usr/bin/env python3
"""Write the seed inputs of fuzz-engine and fuzz-capture: records laid out as the kernel and the in-kernel capture
write them (lib/ring.h, bpf/capture.h), with the tracepoint ids of tests/fixtures.  Run from the source tree:
    python3 tests/fuzz/make-seeds.py [DUMP]
With DUMP (aiotraced --dump of the tests' workload), also seeds-engine/recorded.bin: the first records as a
real trace held them, on the CPUs they came from.
"""
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, '..', 'fixtures', 'tracefs', 'events')
MAGIC, VERSION = 0x41494f43, 2
PID = 1234


def tp_id(system, name):
    with open(os.path.join(FIXTURES, system, name, 'format')) as f:
        return int(re.search(r'^ID: (\d+)', f.read(), re.M).group(1))


def pad8(b):
    return b + b'\0' * (-len(b) % 8)


def sample(raw, time, cpu=0, tid=PID, ident=1):
    """PERF_RECORD_SAMPLE: identifier, pid/tid, time, cpu/res, then the raw data (u32 size, padded to 8)."""
    body = struct.pack('<QIIQII', ident, PID, tid, time, cpu, 0)
    rawpart = pad8(struct.pack('<I', len(raw)) + raw)
    return struct.pack('<IHH', 9, 0, 8 + len(body) + len(rawpart)) + body + rawpart


def lost(n, time, cpu=0):
    trailer = struct.pack('<IIQIIQ', PID, PID, time, cpu, 0, 1)
    body = struct.pack('<QQ', 1, n) + trailer
    return struct.pack('<IHH', 2, 0, 8 + len(body)) + body


def common(type_id):
    return struct.pack('<HBBi', type_id, 0, 0, PID)


def enter(name, args):
    return common(tp_id('syscalls', 'sys_enter_' + name)) + struct.pack('<iI', 0, 0) + b''.join(
        struct.pack('<Q', a) for a in args)


def exit_capture(name, ret, segments, files=(), flags=0, enter=None):
    """The exit record, the capture header (with the enter's time and arguments when given: it then wrote no
    record of its own), its segments (addr, bytes, valid), then the file table."""
    raw = common(tp_id('syscalls', 'sys_exit_' + name)) + struct.pack('<iIq', 0, 0, ret)
    segs = b''
    for addr, data, valid in segments:
        segs += struct.pack('<QII', addr, len(data), valid) + pad8(data)
    table = b''.join(struct.pack('<IIQ', fd, mnt, ino) for fd, mnt, ino in files)
    size = 104 + len(segs) + len(table)
    time, args = enter if enter else (0, [])
    flags |= 4 if enter else 0
    args = list(args) + [0] * (6 - len(args))
    hdr = struct.pack('<IHHII16sIIIIQ6Q', MAGIC, VERSION, flags, len(segments), size, b'aio-workload',
                      len(files), len(segs) if files else 0, 0, 0, time, *args)
    return raw + hdr + segs + table


def iocb(data, op, fd, buf, nbytes, offset, rw_flags=0):
    return struct.pack('<QIiHhIQQqQII', data, 0, rw_flags, op, 0, fd, buf, nbytes, offset, 0, 0, 0)


def io_event(data, obj, res, res2=0):
    return struct.pack('<QQqq', data, obj, res, res2)


def uring_part(flags, fd=5, off=4096, length=512, file=(5, 24, 779), pid=PID):
    """struct capture_uring, after an io_uring record's fixed fields"""
    return struct.pack('<IIIIIIQQII', 0x4752554f, pid, pid, flags, fd, length, off, 0x90000, 0, 0) + \
        struct.pack('<IIQ', *file) + b'aio-workload'.ljust(16, b'\0')


def uring_submit(ring, req, user_data, opcode, flags=0):
    raw = common(tp_id('io_uring', 'io_uring_submit_req')) + struct.pack('<QQQB7xQB3xI', ring, req, user_data, opcode,
                                                                          flags, 0, 0)
    return raw + uring_part(0x1)


def uring_complete(ring, req, user_data, res, cflags=0):
    raw = common(tp_id('io_uring', 'io_uring_complete')) + struct.pack('<QQQiIQQ', ring, req, user_data, res, cflags,
                                                                        0, 0)
    return raw + uring_part(0x40)


def uring_async(ring, req, user_data, opcode):
    raw = common(tp_id('io_uring', 'io_uring_queue_async_work')) + struct.pack('<QQQB7xQQiI', ring, req, user_data,
                                                                                opcode, 0, 0, 0, 0)
    return raw + uring_part(0)


def uring_poll_arm(ring, req, user_data, opcode):
    raw = common(tp_id('io_uring', 'io_uring_poll_arm')) + struct.pack('<QQQB3xiiI', ring, req, user_data, opcode, 1, 1,
                                                                        0)
    return raw + uring_part(0)


def uring_overflow(ring, user_data, res):
    raw = common(tp_id('io_uring', 'io_uring_cqe_overflow')) + struct.pack('<QQiIQ', ring, user_data, res, 0, 0)
    return raw + uring_part(0)


def engine_seed(records0, records1):
    """fuzz-engine's input: a byte saying where it splits, then the two rings' bytes (half each)."""
    r0, r1 = b''.join(records0), b''.join(records1)
    half = max(len(r0) + 1, len(r1)) + 8
    half += -half % 8
    data = bytes([128]) + r0 + b'\0' * (half - 1 - len(r0)) + r1 + b'\0' * (half - len(r1))
    return data


def main():
    ctx, pp, ev = 0x7f0000000000, 0x10000, 0x20000
    cbs = [0x30000, 0x30040]
    submit_segments = [
        (pp, struct.pack('<QQ', *cbs), 16),
        (cbs[0], iocb(0x11, 0, 3, 0x40000, 4096, 8192), 64),
        (cbs[1], iocb(0x22, 8, 4, 0x50000, 2, 0), 64),
        (0x50000, struct.pack('<QQQQ', 0x60000, 512, 0x61000, 1024), 32),
    ]
    files = [(3, 24, 777), (4, 24, 778)]
    t = 1000
    ring0 = [
        sample(enter('io_setup', [128, 0x9000]), t),
        sample(exit_capture('io_setup', 0, [(0x9000, struct.pack('<Q', ctx), 8)]), t + 10),
        sample(exit_capture('io_submit', 2, submit_segments, files, enter=(t + 20, [ctx, 2, pp])), t + 30),
        lost(3, t + 35),
        sample(enter('io_cancel', [ctx, cbs[1], 0x70000]), t + 36),
        sample(exit_capture('io_cancel', -115, [(cbs[1], iocb(0x22, 8, 4, 0x50000, 2, 0), 64)]), t + 37),
    ]
    ring1 = [
        sample(enter('io_getevents', [ctx, 1, 2, ev, 0x80000]), t + 40, cpu=1),
        sample(exit_capture('io_getevents', 2, [(0x80000, struct.pack('<qq', 1, 5), 16),
                                                (ev, io_event(0x11, cbs[0], 4096) + io_event(0x99, cbs[1], -5), 64)]),
               t + 50, cpu=1),
        sample(exit_capture('io_destroy', 0, [], enter=(t + 60, [ctx])), t + 70, cpu=1),
        sample(common(tp_id('sched', 'sched_process_exec')) + struct.pack('<Iii', 24, PID, PID) + b'\0' * 4,
               t + 80, cpu=1),
        sample(common(tp_id('sched', 'sched_process_exit')) + b'aio-workload\0\0\0\0' +
               struct.pack('<iiQ', PID, 120, 1), t + 90, cpu=1),
    ]
    with open(os.path.join(HERE, 'seeds-engine', 'submit.bin'), 'wb') as f:
        f.write(engine_seed(ring0, ring1))
    # the same calls, reaped before they were submitted: unmatched, and the resubmission of a live iocb
    with open(os.path.join(HERE, 'seeds-engine', 'out-of-order.bin'), 'wb') as f:
        f.write(engine_seed(ring1 + ring0, ring0))
    # io_uring: a read punted to a worker, a poll armed, a multishot's completions, one overflowed
    ring, t = 0xffff888000100000, 2000
    uring0 = [
        sample(uring_submit(ring, 0xa000, 0x71, 22), t),
        sample(uring_async(ring, 0xa000, 0x71, 22), t + 1),
        sample(uring_submit(ring, 0xa100, 0x72, 6), t + 2),
        sample(uring_poll_arm(ring, 0xa100, 0x72, 6), t + 3),
        sample(uring_submit(ring, 0xa200, 0x73, 27, flags=1 << 6), t + 4),
    ]
    uring1 = [
        sample(uring_complete(ring, 0xa000, 0x71, 4096), t + 10, cpu=1),
        sample(uring_complete(ring, 0, 0x72, 1, cflags=2), t + 11, cpu=1),
        sample(uring_complete(ring, 0xa100, 0x72, 1), t + 12, cpu=1),
        sample(uring_overflow(ring, 0x73, -11), t + 13, cpu=1),
        sample(uring_complete(ring, 0xa300, 0x74, 0), t + 14, cpu=1),
    ]
    with open(os.path.join(HERE, 'seeds-engine', 'uring.bin'), 'wb') as f:
        f.write(engine_seed(uring0, uring1))
    # fuzz-capture: 8 bytes choosing the regions asked for, then one captured record
    with open(os.path.join(HERE, 'seeds-capture', 'submit.bin'), 'wb') as f:
        f.write(struct.pack('<Q', pp) + exit_capture('io_submit', 2, submit_segments, files))
    with open(os.path.join(HERE, 'seeds-capture', 'bounded.bin'), 'wb') as f:
        f.write(struct.pack('<Q', cbs[0]) + exit_capture('io_submit', 1, submit_segments[:2], files[:1], flags=2))


def from_dump(path, limit=24000):
    """A real trace: the dump's first records (up to limit bytes per ring), their ids mapped to the fixtures'."""
    with open(path, 'rb') as f:
        data = f.read()
    header, _, records = data.partition(b'records\n')
    remap = {}
    for line in header.decode().splitlines()[1:]:
        _, system, name, ident = line.split()
        remap[int(ident)] = tp_id(system, name)
    rings, off = ([], []), 0
    sizes = [0, 0]
    while off + 8 <= len(records):
        rtype, _, size = struct.unpack_from('<IHH', records, off)
        rec = bytearray(records[off:off + size])
        off += size
        cpu = 0
        if rtype == 9:
            cpu = struct.unpack_from('<I', rec, 32)[0] & 1
            ident = struct.unpack_from('<H', rec, 44)[0]
            struct.pack_into('<H', rec, 44, remap.get(ident, ident))
        if sizes[cpu] + size > limit:
            break
        rings[cpu].append(bytes(rec))
        sizes[cpu] += size
    with open(os.path.join(HERE, 'seeds-engine', 'recorded.bin'), 'wb') as f:
        f.write(engine_seed(rings[0], rings[1]))


if __name__ == '__main__':
    main()
    if len(sys.argv) > 1:
        from_dump(sys.argv[1])
