#!/bin/bash
# The Debian package as an operator gets it: built with dpkg-buildpackage (lintian: no error, no warning),
# installed with apt on a minimal Debian 12 without build tools (debootstrap), where systemd is PID 1 in a
# container.  The install starts the unit with the packaged config (every process, summaries only): the
# workload's summary is in the journal, and nothing else of it.  A config asking for requests, applied with
# systemctl reload: every request equal to the workload's truth.  apt remove stops it and keeps the conffiles;
# apt purge leaves the system as it was before the install.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
for tool in dpkg-buildpackage lintian debootstrap systemd-nspawn; do
        command -v "$tool" >/dev/null || fail "$tool is missing: tests/deps.sh installs it"
done
[ -d /sys/fs/cgroup/systemd ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || { echo "SKIP: no cgroup hierarchy for nspawn"; exit 77; }

echo "== dpkg-buildpackage -us -uc -b, from a copy of the source"
copy_source "$T/src"
# the unit tests ran in the suite already
(cd "$T/src" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 ||
        { tail -40 "$T/build.log"; fail "dpkg-buildpackage failed"; }
deb=$(ls "$T"/aiotraced_*_*.deb)
echo "built $(basename "$deb")"
lintian --fail-on error,warning "$T"/aiotraced_*.changes 2>&1 | grep -v 'running with root privileges'
[ "${PIPESTATUS[0]}" = 0 ] || fail "lintian found errors or warnings"

echo "== a minimal Debian 12 (debootstrap --variant=minbase, with systemd), cached"
base=/var/cache/aiotraced-tests/bookworm-minbase
if [ ! -x "$base/bin/systemctl" ]; then
        rm -rf "$base.tmp"
        mkdir -p "$(dirname "$base")"
        debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$base.tmp" \
                http://deb.debian.org/debian >"$T/debootstrap.log" 2>&1 || { tail -20 "$T/debootstrap.log"; fail "debootstrap failed"; }
        mv "$base.tmp" "$base"
fi
for tool in gcc cc make python3; do
        [ ! -e "$base/usr/bin/$tool" ] || fail "the minimal system has $tool"
done

echo "== boot it, systemd as PID 1"
container_boot "$base"
inventory() { # what the system holds outside the package managers' own state
        $C find /etc /usr /var -xdev \( -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/cache -o \
                -path /var/log/journal -o -path /var/lib/systemd -o -path /var/log/apt -o -path /var/tmp \) -prune -o \
                ! -path /var/log/dpkg.log ! -path /var/log/alternatives.log ! -path /etc/ld.so.cache -print | sort
}
$C sh -c 'cat >/var/tmp/aiotraced.deb' <"$deb"
$C sh -c 'cat >/usr/local/bin/aio-workload && chmod 755 /usr/local/bin/aio-workload' <"$WORKLOAD"
$C mkdir -p /var/tmp/w
$C sh -c 'echo "Acquire::Retries \"3\";" >/etc/apt/apt.conf.d/80retries'
inventory >"$T/before"
[ "$(wc -l <"$T/before")" -gt 1000 ] || fail "the inventory of the system is too short to mean anything"
$C env DEBIAN_FRONTEND=noninteractive apt-get -q update >"$T/apt.log" 2>&1 || { cat "$T/apt.log"; fail "apt-get update failed"; }

echo "== apt install ./aiotraced.deb: its dependencies from the archive, the unit started"
$C env DEBIAN_FRONTEND=noninteractive apt-get -q -y install /var/tmp/aiotraced.deb >>"$T/apt.log" 2>&1 ||
        { tail -30 "$T/apt.log"; fail "apt install failed"; }
grep -E '^(Setting up|Unpacking) ' "$T/apt.log" | sed 's/^/  /'
for _ in $(seq 100); do [ "$($C systemctl is-active aiotraced)" = active ] && break; sleep 0.05; done
[ "$($C systemctl is-active aiotraced)" = active ] ||
        { $C journalctl -u aiotraced --no-pager | tail; fail "the install did not start aiotraced"; }
[ "$($C systemctl is-enabled aiotraced)" = enabled ] || fail "the install did not enable aiotraced"
$C systemctl show -p StatusText aiotraced
conffiles=$($C dpkg-query -W -f='${Conffiles}' aiotraced)
for f in /etc/aiotraced/aiotraced.conf /etc/logrotate.d/aiotraced; do
        grep -q " $f " <<<"$conffiles" || fail "$f is not a conffile"
done
for f in /usr/sbin/aiotraced /lib/systemd/system/aiotraced.service /usr/share/man/man8/aiotraced.8.gz \
        /usr/share/man/man5/aiotraced.conf.5.gz /usr/lib/systemd/catalog/aiotraced.catalog \
        /usr/share/doc/aiotraced/README.md /usr/share/doc/aiotraced/copyright; do
        $C test -f "$f" || fail "the package did not install $f"
done
ids=$(sed -n 's/^#define MESSAGE_ID_[A-Z]* "\([0-9a-f]*\)"$/\1/p' "$top_srcdir/lib/format_journal.h")
$C journalctl --list-catalog >"$T/catalog"
for id in $ids; do
        grep -q "^$id aiotraced: " "$T/catalog" || fail "the catalog was not updated on install: $id is not in it"
done

echo "== the packaged config: a process's summary, nothing more of it"
$C aio-workload --comm aio-pkg --truth /var/tmp/first.truth --dir /var/tmp/w || fail "workload failed"
$C cat /var/tmp/first.truth >"$T/first.truth"
for _ in $(seq 100); do
        $C journalctl --sync
        $C journalctl -t aiotraced AIO_COMM=aio-pkg -o json >"$T/first.json"
        [ -s "$T/first.json" ] && break
        sleep 0.05
done
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format journal --trace "$T/first.json" --truth "$T/first.truth" \
        --summary-only --strict || fail "the packaged config's summary differs from the workload"
[ "$(wc -l <"$T/first.json")" = 1 ] || fail "the packaged config wrote $(wc -l <"$T/first.json") entries of one process"

echo "== a config asking for requests, applied with systemctl reload"
# a path is looked up when the submit is processed: paced so that it comes before the workload's fd reuse
printf '%s\n' 'watch = ( { comm = "aio-pkg"; } );' 'records = [ "requests", "summary" ];' 'drain_interval_ms = 5;' |
        $C sh -c 'cat >/etc/aiotraced/aiotraced.conf'
$C systemctl reload aiotraced || fail "systemctl reload failed"
$C aio-workload --comm aio-pkg --truth /var/tmp/second.truth --dir /var/tmp/w --pause-us 20000 || fail "workload failed"
$C cat /var/tmp/second.truth >"$T/second.truth"
$C journalctl --sync
$C journalctl -t aiotraced -o json >"$T/second.json"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --format journal --trace "$T/second.json" \
        --truth "$T/second.truth" --strict || fail "the requests in the journal differ from the workload"

echo "== --check-config from a shell refuses what start under the installed unit would; the metrics file goes at stop"
$C mkdir -p /srv/aio /var/lib/prometheus/node-exporter
$C cp /etc/aiotraced/aiotraced.conf /var/tmp/good.conf
printf '%s\n' 'output = { sink = "file"; path = "/srv/aio/trace.log"; };' |
        $C sh -c 'cat >/etc/aiotraced/aiotraced.conf'
$C aiotraced --check-config >"$T/unit-check.out" 2>&1 && fail "--check-config took a path the unit cannot write"
cat "$T/unit-check.out"
grep -q 'output.path /srv/aio/trace.log: under the unit (/lib/systemd/system/aiotraced.service), /srv/aio is read-only for it (ProtectSystem=strict); it may write under .*/var/log/aiotraced' \
        "$T/unit-check.out" || fail "--check-config does not say why the unit cannot write there"
$C aiotraced --check-config -c /etc/aiotraced/aiotraced.conf >/dev/null 2>&1 && fail "-c the unit's config: not checked against it"
printf '%s\n' 'metrics = { path = "/var/lib/prometheus/node-exporter/aiotraced.prom"; }; summary_interval = 1;' |
        $C sh -c 'cat >/etc/aiotraced/aiotraced.conf'
$C aiotraced --check-config || fail "--check-config refuses the metrics directory the unit allows"
$C systemctl restart aiotraced
for _ in $(seq 100); do $C test -f /var/lib/prometheus/node-exporter/aiotraced.prom && break; sleep 0.05; done
$C test -f /var/lib/prometheus/node-exporter/aiotraced.prom || fail "no metrics file under the unit"
$C cp /var/tmp/good.conf /etc/aiotraced/aiotraced.conf
$C systemctl stop aiotraced
$C test ! -e /var/lib/prometheus/node-exporter/aiotraced.prom || fail "the metrics file outlived the daemon"
$C rm -r /srv/aio /var/lib/prometheus

echo "== apt remove: stopped and gone, the conffiles kept"
$C env DEBIAN_FRONTEND=noninteractive apt-get -q -y remove aiotraced >>"$T/apt.log" 2>&1 || fail "apt remove failed"
[ "$($C systemctl is-active aiotraced)" != active ] || fail "aiotraced still runs after apt remove"
$C test ! -e /usr/sbin/aiotraced || fail "apt remove left /usr/sbin/aiotraced"
$C test -f /etc/aiotraced/aiotraced.conf || fail "apt remove took the edited config"
$C grep -q aio-pkg /etc/aiotraced/aiotraced.conf || fail "apt remove changed the edited config"

echo "== apt purge: the system as before the install"
$C env DEBIAN_FRONTEND=noninteractive apt-get -q -y purge --autoremove aiotraced >>"$T/apt.log" 2>&1 ||
        fail "apt purge failed"
$C journalctl --list-catalog >"$T/catalog"
for id in $ids; do
        ! grep -q "^$id " "$T/catalog" || fail "the catalog still explains $id after the purge"
done
$C systemctl cat aiotraced >/dev/null 2>&1 && fail "systemd still knows the unit after the purge"
inventory >"$T/after"
diff "$T/before" "$T/after" || fail "apt purge left the system changed"
echo PASS
