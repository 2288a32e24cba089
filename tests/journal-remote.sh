#!/bin/bash
# The journal shipped to a collector, as a fleet does: systemd-journal-upload sends a private journald's entries
# to a private systemd-journal-remote on loopback (plain HTTP), and on the collector's files every AIO entry is
# there with all its fields, MESSAGE_ID and _HOSTNAME, equal to the workload's ground truth, and queries by
# host, file and op work there after the traced process is gone.  As root.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
remote=/lib/systemd/systemd-journal-remote
upload=/lib/systemd/systemd-journal-upload
[ -x "$remote" ] && [ -x "$upload" ] ||
        fail "systemd-journal-remote and -upload are missing: tests/deps.sh --tests installs them"
private_journald "$@"
mkdir -p "$T/w1" "$T/remote"

echo "== the daemon writes to the host's journal while the workload runs"
write_config "$T/j.conf" 'records = [ "syscalls", "requests", "summary" ];' 'watch = ( { comm = "aio-shipped"; } );' \
        'drain_interval_ms = 5;' 'output = { sink = "journal"; };'
start_daemon_bg "$T/j.conf"
journal_started
"$WORKLOAD" --comm aio-shipped --truth "$T/w.truth" --dir "$T/w1" --pause-us 20000 || fail "workload failed"
stop_daemon_bg
journalctl --sync
local_count=$(journalctl -D /run/log/journal _PID="$DAEMON_PID_SEEN" -o export | grep -c '^__CURSOR=')

echo "== systemd-journal-upload to systemd-journal-remote on 127.0.0.1"
port=$((20000 + RANDOM % 20000))
"$remote" --listen-http="127.0.0.1:$port" --output="$T/remote/" --split-mode=host >"$T/remote.log" 2>&1 &
remote_pid=$!
for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.02
done
"$upload" --url="http://127.0.0.1:$port" -D /run/log/journal --follow=no --save-state="$T/upload.state" \
        >"$T/upload.log" 2>&1 || { cat "$T/upload.log"; fail "systemd-journal-upload failed"; }
kill "$remote_pid"
wait "$remote_pid" 2>/dev/null
ls "$T/remote"/*.journal >/dev/null 2>&1 || { cat "$T/remote.log"; fail "the collector wrote no journal file"; }

echo "== on the collector: every entry, its fields equal to the ground truth"
journalctl -D "$T/remote" _PID="$DAEMON_PID_SEEN" -o json >"$T/remote.json"
[ "$(wc -l <"$T/remote.json")" = "$local_count" ] ||
        fail "$(wc -l <"$T/remote.json") entries on the collector, $local_count in the host's journal"
"$PYTHON3" "$top_srcdir/tests/compare.py" --journal --trace "$T/remote.json" --truth "$T/w.truth" --strict ||
        fail "the collector's entries differ from the ground truth"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format journal --trace "$T/remote.json" --truth "$T/w.truth" \
        --strict || fail "the collector's request entries differ from the ground truth"
host=$(hostname)
"$PYTHON3" - "$T/remote.json" "$host" <<'EOF' || fail "an entry lacks MESSAGE_ID or _HOSTNAME"
import json, sys
entries = [json.loads(line) for line in open(sys.argv[1])]
bad = [e for e in entries if not e.get('MESSAGE_ID') or e.get('_HOSTNAME') != sys.argv[2]]
aio = [e for e in entries if any(k.startswith('AIO_') for k in e)]
print(f'{len(entries)} entries on the collector, {len(aio)} with AIO_ fields, {len(bad)} without MESSAGE_ID or _HOSTNAME')
sys.exit(1 if bad or not aio else 0)
EOF

echo "== queries on the collector, the traced process long gone"
journalctl -D "$T/remote" _HOSTNAME="$host" AIO_PATH="$T/w1/c.dat" AIO_OP=pwrite -o json >"$T/c.json"
"$PYTHON3" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert len(e) == 1 and e[0]["AIO_REQUEST"] == "completed" and int(e[0]["AIO_LATENCY_NSEC"]) > 0, e
assert e[0]["AIO_COMM"] == "aio-shipped", e' "$T/c.json" ||
        fail "journalctl -D _HOSTNAME= AIO_PATH= AIO_OP=pwrite does not give the one write"
[ "$(journalctl -D "$T/remote" _HOSTNAME="$host" AIO_COMM=aio-shipped AIO_SYSCALL=io_submit -q | wc -l)" -gt 0 ] ||
        fail "no io_submit of the workload by host and comm"
echo PASS
