#!/bin/bash
# Pid namespaces, one rule for every source (AIO and io_uring): the pids a record carries are the ones the
# daemon's own namespace sees, and a process in another namespace also has its own pid there as ns_pid
# (AIO_NS_PID).  The daemon on the host with workloads in a pid namespace of their own; then the daemon in a
# container (systemd as PID 1 in systemd-nspawn) under its unit, with the workloads and MariaDB (its default,
# io_uring) run as units there: every record with the container's pid, its unit and its file's path, one
# process in the summaries.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
URING=$top_builddir/tests/uring-workload
[ -x "$URING" ] || { echo "SKIP: tests/uring-workload was not built (liburing-dev: tests/deps.sh --tests)"; exit 77; }
command -v systemd-nspawn >/dev/null || { echo "SKIP: systemd-nspawn missing (apt-get install systemd-container)"; exit 77; }
[ -d /sys/fs/cgroup/systemd ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || { echo "SKIP: no cgroup hierarchy for nspawn"; exit 77; }

# as_own_pid JSON COMM OUT: COMM's records with ns_pid as their pid (what the workload, in its namespace,
# recorded), after checking that each carries one pid, the host's, and its own as ns_pid
as_own_pid() {
        "$PYTHON3" - "$@" <<'PY' || fail "the records of $2 do not carry the host's pid and their own as ns_pid"
import json, sys
out = open(sys.argv[3], 'w')
seen = set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get('kind') not in ('request', 'summary'):
        out.write(line)
    elif e.get('comm') == sys.argv[2]:
        if 'ns_pid' not in e or e['ns_pid'] == e['pid']:
            sys.exit(f'{e["kind"]} of {e["comm"]} pid {e["pid"]}: ns_pid {e.get("ns_pid")}')
        seen.add((e['pid'], e['ns_pid']))
        e['pid'] = e.pop('ns_pid')
        out.write(json.dumps(e) + '\n')
print(f'{sys.argv[2]}: (pid the daemon sees, its own):', sorted(seen))
sys.exit(0 if len(seen) == 1 else 1)
PY
}

echo "== the daemon on the host, each workload in a pid namespace of its own: the host's pid, and ns_pid"
mkdir -p "$T/w"
write_config "$T/host.conf" 'capture = "bpf";' 'watch = ( { comm = "uring-ns"; }, { comm = "aio-ns"; } );' \
        'drain_interval_ms = 5;' 'records = [ "requests", "summary" ];' 'output = { format = "json"; };'
start_daemon_json "$T/host.conf" "$T/host.json"
unshare -p -f --mount-proc "$URING" --comm uring-ns --dir "$T/w" --truth "$T/uring.truth" || fail "the workload failed"
unshare -p -f --mount-proc "$WORKLOAD" --comm aio-ns --dir "$T/w" --truth "$T/aio.truth" --pause-us 20000 ||
        fail "the workload failed"
stop_daemon "$T/host.json"
as_own_pid "$T/host.json" uring-ns "$T/uring-own.json"
as_own_pid "$T/host.json" aio-ns "$T/aio-own.json"
"$PYTHON3" "$top_srcdir/tests/compare_uring.py" --trace "$T/uring-own.json" --truth "$T/uring.truth" ||
        fail "io_uring requests in a pid namespace differ from the workload's"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format json --trace "$T/aio-own.json" --truth "$T/aio.truth" \
        --strict --tids-elsewhere || fail "AIO requests in a pid namespace differ from the workload's"

echo "== the daemon in a container, under its unit: the workloads run as units there"
container_boot /
$C mkdir -p /etc/aiotraced /usr/local/sbin /usr/local/bin /var/tmp/w
$C sh -c 'cat >/usr/local/sbin/aiotraced && chmod 755 /usr/local/sbin/aiotraced' <"$AIOTRACED"
$C sh -c 'cat >/usr/local/bin/aio-workload && chmod 755 /usr/local/bin/aio-workload' <"$WORKLOAD"
$C sh -c 'cat >/usr/local/bin/uring-workload && chmod 755 /usr/local/bin/uring-workload' <"$URING"
sed -e "s|@sbindir@|/usr/local/sbin|g" -e 's|@sysconfdir@|/etc|g' -e 's|@docdir@|/usr/share/doc/aiotraced|g' \
        "$top_srcdir/systemd/aiotraced.service.in" | $C sh -c 'cat >/etc/systemd/system/aiotraced.service'
printf '%s\n' 'capture = "bpf";' 'watch = ( { comm = "uring-ct"; }, { comm = "aio-ct"; }, { exe = "/usr/sbin/mariadbd"; } );' \
        'drain_interval_ms = 5;' 'records = [ "requests", "summary" ];' \
        'output = { sink = "file"; path = "/var/log/aiotraced/trace.json"; format = "json"; };' |
        $C sh -c 'cat >/etc/aiotraced/aiotraced.conf'
$C systemctl daemon-reload
# its bootstrap runs a mariadbd too: before the daemon, which would trace it as the process it is
$C sh -c 'mkdir -p /var/tmp/db && mariadb-install-db --no-defaults --datadir=/var/tmp/db/data --user=root \
        --auth-root-authentication-method=normal --skip-test-db >/var/tmp/db/install.log 2>&1' ||
        fail "mariadb-install-db in the container"
$C systemctl start aiotraced || { $C journalctl -u aiotraced --no-pager | tail; fail "systemctl start failed"; }
$C systemd-run --quiet --wait --collect --unit=uring-ct.service /usr/local/bin/uring-workload --comm uring-ct \
        --dir /var/tmp/w --truth /var/tmp/uring.truth || fail "the io_uring workload's unit failed"
$C systemd-run --quiet --wait --collect --unit=aio-ct.service /usr/local/bin/aio-workload --comm aio-ct \
        --dir /var/tmp/w --truth /var/tmp/aio.truth --pause-us 20000 || fail "the AIO workload's unit failed"

echo "== MariaDB in the container, its default (io_uring), as a unit; sysbench against it"
$C systemd-run --quiet --unit=mdb-ct.service /usr/sbin/mariadbd --no-defaults --datadir=/var/tmp/db/data \
        --socket=/var/tmp/db/sock --skip-networking --user=root --skip-log-bin --innodb-flush-method=O_DIRECT \
        --innodb-buffer-pool-size=16M --innodb-open-files=10 --table-open-cache=10 --log-error=/var/tmp/db/err.log ||
        fail "mariadbd's unit"
for _ in $(seq 600); do $C test -S /var/tmp/db/sock && break; sleep 0.1; done
$C test -S /var/tmp/db/sock || fail "mariadbd did not start in the container"
$C cat /var/tmp/db/err.log | grep -q 'InnoDB: Using io_uring' ||
        fail "InnoDB in the container does not use io_uring"
mdb_pid=$($C systemctl show -p MainPID --value mdb-ct.service)
sb=(--mysql-socket=/var/tmp/db/sock --mysql-user=root --tables=4 --table-size=1000)
$C mariadb --socket=/var/tmp/db/sock -uroot -e 'create database sbtest' || fail "create database"
$C sysbench oltp_read_write "${sb[@]}" prepare >/dev/null || fail "sysbench prepare"
$C sysbench oltp_read_write "${sb[@]}" --threads=2 --time=5 run >/dev/null || fail "sysbench run"
sleep 5 # STATUS= is said every 5 s
$C systemctl show -p StatusText --value aiotraced | tee "$T/status"
grep -qE ': [0-9]+ calls, [1-9][0-9]* requests ended, ' "$T/status" || fail "STATUS= does not count io_uring's requests"
$C mariadb-admin --socket=/var/tmp/db/sock -uroot shutdown || fail "mariadb-admin shutdown"
for _ in $(seq 100); do [ "$($C systemctl is-active mdb-ct.service)" = active ] || break; sleep 0.1; done
$C systemctl stop aiotraced
# the unit's sandbox leaves openat2 to it: paths are checked without waiting on a file system
! $C journalctl -q -u aiotraced --no-pager | grep 'openat2 cannot be had' || fail "the unit's sandbox denies openat2"
$C cat /var/log/aiotraced/trace.json >"$T/ct.json"
$C cat /var/tmp/uring.truth >"$T/ct-uring.truth"
$C cat /var/tmp/aio.truth >"$T/ct-aio.truth"
container_poweroff
trap cleanup EXIT

"$PYTHON3" "$top_srcdir/tests/compare_uring.py" --trace "$T/ct.json" --truth "$T/ct-uring.truth" ||
        fail "io_uring requests in the container differ from the workload's"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format json --trace "$T/ct.json" --truth "$T/ct-aio.truth" \
        --strict || fail "AIO requests in the container differ from the workload's"
"$PYTHON3" - "$T/ct.json" "$mdb_pid" <<'PY' || fail "MariaDB's records in the container are not its own"
import json, sys
pid = int(sys.argv[2])
e = [json.loads(l) for l in open(sys.argv[1])]
mdb = [x for x in e if x.get('comm') == 'mariadbd']
reqs = [x for x in mdb if x['kind'] == 'request' and x['interface'] == 'io_uring']
bad_pid = [x for x in mdb if x.get('pid') != pid or 'ns_pid' in x]
no_unit = [x for x in mdb if x.get('unit') != 'mdb-ct.service']
no_path = [x for x in reqs if x.get('fd') is not None and not x.get('path', '').startswith('/var/tmp/db/data/')]
summaries = {x['pid'] for x in mdb if x['kind'] == 'summary'}
print(f'{len(reqs)} io_uring requests of mariadbd (pid {pid} in the container): {len(bad_pid)} with another pid, '
      f'{len(no_unit)} without its unit, {len(no_path)} on an fd without its path; summaries of pids {sorted(summaries)}')
for x in (bad_pid + no_unit + no_path)[:5]:
    print('  ', x)
sys.exit(0 if len(reqs) > 100 and not bad_pid and not no_unit and not no_path and summaries == {pid} else 1)
PY
echo PASS
