#!/bin/bash
# The service under a real systemd: PID 1 in a container (systemd-nspawn over an overlay of this machine's own
# root).  systemctl start reaches active only once the events are open (Type=notify); the calls are in
# journalctl -u aiotraced, field by field as the workload recorded them; systemctl reload changes what is
# traced; a broken config on reload leaves it active with the old selection; systemctl stop is clean.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
command -v systemd-nspawn >/dev/null || { echo "SKIP: systemd-nspawn missing (apt-get install systemd-container)"; exit 77; }
[ -d /sys/fs/cgroup/systemd ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || { echo "SKIP: no cgroup hierarchy for nspawn"; exit 77; }

unit_for() { # SBINDIR: the unit as the build generates it, with this daemon's path
        sed -e "s|@sbindir@|$1|g" -e 's|@sysconfdir@|/etc|g' -e 's|@docdir@|/usr/share/doc/aiotraced|g' \
                "$top_srcdir/systemd/aiotraced.service.in"
}

echo "== systemd-analyze verify: no complaint at all"
mkdir -p "$T/verify"
unit_for "$top_builddir" >"$T/verify/aiotraced.service"
unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run && exec systemd-analyze verify --man=no "$0"' \
        "$T/verify/aiotraced.service" 2>"$T/verify.err"
cat "$T/verify.err"
[ -s "$T/verify.err" ] && fail "systemd-analyze verify complained"

echo "== the man pages render without a warning"
for m in "$top_builddir/man/aiotraced.8" "$top_builddir/man/aiotraced.conf.5"; do
        if command -v groff >/dev/null; then
                w=$(groff -man -Tutf8 -ww -z "$m" 2>&1)
                [ -z "$w" ] || fail "$m: $w"
        fi
done

echo "== the journal catalog: every MESSAGE_ID the daemon writes is explained"
mkdir -p "$T/cat/usr/lib/systemd/catalog" "$T/cat/var/lib/systemd/catalog"
cp "$top_srcdir/systemd/aiotraced.catalog" "$T/cat/usr/lib/systemd/catalog/"
journalctl --root="$T/cat" --update-catalog || fail "the catalog does not parse"
journalctl --root="$T/cat" --list-catalog >"$T/catalog.list"
for id in $(sed -n 's/^#define MESSAGE_ID_[A-Z]* "\([0-9a-f]*\)"$/\1/p' "$top_srcdir/lib/format_journal.h"); do
        grep -q "^$id aiotraced: " "$T/catalog.list" || fail "MESSAGE_ID $id is not in the catalog"
done

echo "== boot systemd in a container"
container_boot /

$C mkdir -p /etc/aiotraced /usr/local/sbin /usr/local/bin /var/tmp/w
$C sh -c 'cat >/usr/local/sbin/aiotraced && chmod 755 /usr/local/sbin/aiotraced' <"$AIOTRACED"
$C sh -c 'cat >/usr/local/bin/aio-workload && chmod 755 /usr/local/bin/aio-workload' <"$WORKLOAD"
unit_for /usr/local/sbin | $C sh -c 'cat >/etc/systemd/system/aiotraced.service'
conf() { printf '%s\n' "$@" | $C sh -c 'cat >/etc/aiotraced/aiotraced.conf'; }
ALL='records = [ "syscalls", "requests", "summary" ];'
conf 'watch = ( { comm = "aio-unit"; } );' 'drain_interval_ms = 5;' "$ALL"
$C systemctl daemon-reload

echo "== systemctl start: active once the events are open"
$C systemctl start aiotraced || { $C journalctl -u aiotraced --no-pager | tail -20; fail "systemctl start failed"; }
[ "$($C systemctl is-active aiotraced)" = active ] || fail "not active after start"
$C systemctl show -p StatusText aiotraced
# priority_boost: under the unit's bounding set, every thread 4 below the nice value systemd started it at
main_pid=$($C systemctl show -p MainPID --value aiotraced)
nices=$($C ps -L -o ni= -p "$main_pid" | sort -u | tr -d ' ')
[ "$nices" = -4 ] || fail "the daemon's threads run at nice '$nices', not -4 (priority_boost)"
$C journalctl -u aiotraced --no-pager | grep -q 'priority_boost' && fail "priority_boost was refused under the unit"
run_workload() { # NAME COMM: in the container; its truth comes back to $T/NAME.truth
        $C aio-workload --comm "$2" --truth "/var/tmp/$1.truth" --dir /var/tmp/w --pause-us 20000 ||
                fail "workload failed"
        $C cat "/var/tmp/$1.truth" >"$T/$1.truth"
}
run_workload first aio-unit
$C systemd-analyze security aiotraced --no-pager 2>/dev/null | tail -1 | tee "$T/security"
score=$(sed -n 's/.*exposure level for aiotraced.service: \([0-9.]*\) .*/\1/p' "$T/security")
awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.7) }' || fail "systemd-analyze security: ${score:-no score}, above 2.7"

echo "== systemctl reload: a new selection, at once"
conf 'watch = ( { comm = "aio-unit2"; } );' 'drain_interval_ms = 5;' "$ALL"
$C systemctl reload aiotraced || fail "systemctl reload failed"
run_workload unwatched aio-unit
run_workload second aio-unit2

echo "== a broken config on reload: still active, the old selection in force"
conf 'watch = ( { comm = "aio-unit2" } ' # no closing parenthesis
$C systemctl reload aiotraced || fail "systemctl reload failed"
[ "$($C systemctl is-active aiotraced)" = active ] || fail "not active after a refused reload"
run_workload third aio-unit2

echo "== systemctl stop: clean"
$C systemctl stop aiotraced
[ "$($C systemctl show -p Result --value aiotraced)" = success ] || fail "stop was not clean"
$C journalctl --sync
$C journalctl -u aiotraced -o json >"$T/unit.json"
"$PYTHON3" - "$T/unit.json" <<'PY' || fail "the unit's entries are not what they should be"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1])]
ours = [e for e in entries if e.get('SYSLOG_IDENTIFIER') == 'aiotraced']
bad = [e for e in ours if e.get('_SYSTEMD_UNIT') != 'aiotraced.service']
ids = {e.get('MESSAGE_ID') for e in ours}
need = {'61b2eff4723e4dc08f4bf5aaaf9f5d30': 'started', '3cd7459aaa3647c88c228785cdac866c': 'reloaded',
        '8c47d1cf7b484c958fac3d196e1b1bd7': 'stopped'}
refused = [e for e in ours if 'reload refused' in str(e.get('MESSAGE')) and e.get('PRIORITY') == '3']
print(f'{len(ours)} entries of the unit; kinds seen: {sorted(need[i] for i in ids if i in need)}')
sys.exit(1 if bad or not refused or any(i not in ids for i in need) else 0)
PY
"$PYTHON3" "$top_srcdir/tests/compare.py" --journal --trace "$T/unit.json" --truth "$T/first.truth" \
        --truth "$T/second.truth" --truth "$T/third.truth" --unwatched "$T/unwatched.truth" --strict ||
        fail "the unit's journal differs from the ground truth"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format journal --trace "$T/unit.json" --truth "$T/first.truth" \
        --truth "$T/second.truth" --truth "$T/third.truth" --strict || fail "the unit's request entries differ"
$C journalctl -u aiotraced AIO_OP=pwrite AIO_PATH=/var/tmp/w/c.dat -o cat | grep -c 'request completed' |
        grep -qx 3 || fail "journalctl AIO_OP=pwrite AIO_PATH=... does not give the three writes to c.dat"

echo "== watch a unit: every call of it exact, in each of its runs (a new cgroup each); the same program in another"
echo "   unit absent; a unit not there yet said so, and traced from its start"
unit_file() { # NAME: a oneshot running the workload, its truth named for the run
        $C sh -c "cat >/etc/systemd/system/$1.service" <<EOF
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'exec /usr/local/bin/aio-workload --comm aio-sel --truth /var/tmp/$1-\$\$INVOCATION_ID.truth --dir /var/tmp/w --pause-us 20000'
EOF
}
unit_file aio-sel
unit_file aio-other
$C systemctl daemon-reload
for cap in bpf remote-read; do
        $C sh -c 'rm -f /var/tmp/aio-sel-*.truth /var/tmp/aio-other-*.truth'
        conf 'watch = ( { unit = "aio-sel.service"; } );' 'drain_interval_ms = 5;' "capture = \"$cap\";" \
                'records = [ "syscalls" ];'
        $C systemctl start aiotraced || fail "systemctl start failed"
        invocation=$($C systemctl show -p InvocationID --value aiotraced)
        $C systemctl start aio-sel.service || fail "aio-sel.service failed"
        $C systemctl restart aio-sel.service || fail "aio-sel.service failed at restart"
        $C systemctl start aio-other.service || fail "aio-other.service failed"
        $C systemctl stop aiotraced
        $C journalctl --sync
        $C journalctl -o json _SYSTEMD_INVOCATION_ID="$invocation" >"$T/sel-$cap.json"
        truths=()
        n=0
        for f in $($C sh -c 'ls /var/tmp/aio-sel-*.truth'); do
                $C cat "$f" >"$T/sel-$cap-$n.truth"
                truths+=(--truth "$T/sel-$cap-$n.truth")
                n=$((n + 1))
        done
        [ "$n" = 2 ] || fail "aio-sel.service did not run twice"
        $C sh -c 'cat /var/tmp/aio-other-*.truth' >"$T/sel-$cap-other.truth"
        exact=
        [ "$cap" = bpf ] && exact=--strict
        "$PYTHON3" "$top_srcdir/tests/compare.py" --journal --trace "$T/sel-$cap.json" "${truths[@]}" \
                --unwatched "$T/sel-$cap-other.truth" $exact || fail "the unit's calls differ from the truth ($cap)"
        grep -q 'watch unit aio-sel.service: the unit has no cgroup now: it is watched from its start' "$T/sel-$cap.json" ||
                fail "a unit not there yet was not said to be ($cap)"
done

echo "== metrics of a program run as a unit: labelled with it, written where the unit may write"
$C mkdir -p /var/lib/prometheus/node-exporter
conf 'watch = ( { comm = "aio-unit3"; } );' 'drain_interval_ms = 5;' "$ALL" 'summary_interval = 1;' \
        'metrics = { path = "/var/lib/prometheus/node-exporter/aiotraced.prom"; };'
$C systemctl start aiotraced || fail "systemctl start failed"
$C systemd-run --quiet --wait --collect --unit=aio-metrics-test.service /usr/local/bin/aio-workload --comm aio-unit3 \
        --truth /var/tmp/unit3.truth --dir /var/tmp/w --pause-us 20000 || fail "the workload's unit failed"
$C cat /var/tmp/unit3.truth >"$T/unit3.truth"
sleep 1.5 # an interval after the workload's end: its last summary is in the file
$C cat /var/lib/prometheus/node-exporter/aiotraced.prom >"$T/unit.prom" || fail "no metrics file"
$C systemctl stop aiotraced
$C test ! -e /var/lib/prometheus/node-exporter/aiotraced.prom || fail "the metrics file outlived the daemon"
grep '^aiotraced_requests_completed_total' "$T/unit.prom"
grep -q '^aiotraced_requests_completed_total{comm="aio-unit3",unit="aio-metrics-test.service",op="pwrite"} ' \
        "$T/unit.prom" || fail "the metrics do not name the program's unit"
"$PYTHON3" "$top_srcdir/tests/compare_metrics.py" --metrics "$T/unit.prom" --truth "$T/unit3.truth" --comm aio-unit3 ||
        fail "the unit's metrics differ from the truth"
# its entries name the unit and the cgroup themselves: queried by unit after it is gone
$C journalctl -u aiotraced AIO_COMM=aio-unit3 -o json >"$T/unit3.json"
"$PYTHON3" - "$T/unit3.json" <<'PY' || fail "the entries do not carry the program's unit and cgroup"
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
kinds = {x.get('MESSAGE_ID') for x in e}
bad = [x for x in e if x.get('AIO_UNIT') != 'aio-metrics-test.service'
       or not x.get('AIO_CGROUP', '').endswith('/aio-metrics-test.service')]
print(f'{len(e)} entries of aio-unit3, {len(bad)} without its unit and cgroup, {len(kinds)} kinds')
sys.exit(1 if bad or len(e) < 20 or len(kinds) < 3 else 0)
PY
[ "$($C journalctl -u aiotraced AIO_UNIT=aio-metrics-test.service AIO_SYSCALL=io_submit -q | grep -c 'io_submit(')" -gt 0 ] ||
        fail "journalctl AIO_UNIT= finds no call of the unit"
echo "== a container without tracefs: the unit exits 5 at once, saying how to make it available, and is not restarted"
container_poweroff
CT_TRACEFS=no container_boot /
$C grep -q tracefs /proc/self/mounts && fail "the container has tracefs"
$C mkdir -p /etc/aiotraced /usr/local/sbin
$C sh -c 'cat >/usr/local/sbin/aiotraced && chmod 755 /usr/local/sbin/aiotraced' <"$AIOTRACED"
unit_for /usr/local/sbin | $C sh -c 'cat >/etc/systemd/system/aiotraced.service'
conf 'watch = ( { comm = "aio-unit"; } );'
$C systemctl daemon-reload
$C systemctl start aiotraced && fail "the unit started without tracefs"
sleep 1 # what a Restart= would do, it would have begun
$C systemctl show -p ExecMainCode -p ExecMainStatus -p NRestarts -p ActiveState aiotraced | tee "$T/notracefs.show"
grep -qx 'ExecMainCode=1' "$T/notracefs.show" && grep -qx 'ExecMainStatus=5' "$T/notracefs.show" ||
        fail "the unit did not exit 5 (a signal, such as SIGSYS, is code 2)"
grep -qx 'NRestarts=0' "$T/notracefs.show" || fail "the unit was restarted"
$C journalctl --sync
$C journalctl -u aiotraced --no-pager >"$T/notracefs.log"
grep -q 'tracefs is not mounted, and under a seccomp filter .* the daemon does not mount it: make it available (mount -t tracefs nodev /sys/kernel/tracing; in a container, the host.s bound in, as systemd-nspawn --bind-ro=/sys/kernel/tracing does)' \
        "$T/notracefs.log" || { cat "$T/notracefs.log"; fail "the missing tracefs was not said"; }
echo PASS
