#!/bin/bash
# make install from a source tree, in a scratch prefix: the config path is the configured one in the binary and
# the man pages, also after configuring again with another; the logrotate file goes where configure says (and
# it warns when logrotate would not read it); an edited config survives make install and make uninstall, an
# unedited one is removed; the unit's Documentation= names files that are installed.  No root needed.
. "${top_srcdir:?}/tests/lib.sh"
jobs=$(nproc)

echo "== configure --sysconfdir=A, build: A in --help and in the man pages"
copy_source "$T/src"
mkdir "$T/build"
cd "$T/build" || exit 1
configure() { # SYSCONFDIR
        "$T/src/configure" -q --disable-bpf --prefix="$T/usr" --sysconfdir="$1" \
                --with-systemdsystemunitdir="$T/unit" >"$T/configure.out" 2>&1 || { cat "$T/configure.out"; fail "configure"; }
}
configure "$T/a/etc"
grep -q "WARNING: the logrotate file goes to $T/a/etc/logrotate.d, which logrotate does not read" "$T/configure.out" ||
        fail "configure does not warn that logrotate would not read the file"
make -s -j"$jobs" aiotraced man/aiotraced.8 man/aiotraced.conf.5 >/dev/null 2>&1 || fail "make"
./aiotraced --help | grep -q "default $T/a/etc/aiotraced/aiotraced.conf" || fail "--help does not name A"
grep -q "$T/a/etc/aiotraced/aiotraced.conf" man/aiotraced.8 || fail "aiotraced(8) does not name A"

echo "== configure again with --sysconfdir=B, make: B everywhere (what used A is built again)"
configure "$T/b/etc"
make -s -j"$jobs" aiotraced man/aiotraced.8 >/dev/null 2>&1 || fail "make"
./aiotraced --help | grep -q "default $T/b/etc/aiotraced/aiotraced.conf" || fail "--help still names A after configure B"
grep -q "$T/b/etc/aiotraced/aiotraced.conf" man/aiotraced.8 || fail "aiotraced(8) still names A"

echo "== make install; an edited config survives make install and make uninstall"
make -s -j"$jobs" install >"$T/install.out" 2>&1 || { cat "$T/install.out"; fail "make install"; }
conf=$T/b/etc/aiotraced/aiotraced.conf
[ -f "$conf" ] && [ -f "$T/b/etc/logrotate.d/aiotraced" ] || fail "the config or the logrotate file is not installed"
docs=$(sed -n 's/^Documentation=//p' "$T/unit/aiotraced.service")
for d in $docs; do
        case $d in
        file://*) [ -f "${d#file://}" ] || fail "the unit's Documentation= names ${d#file://}, not installed" ;;
        man:*) page=${d#man:}; name=${page%%(*}; sect=${page#*(}; sect=${sect%)}
               [ -f "$T/usr/share/man/man$sect/$name.$sect" ] || fail "the unit's Documentation= names $d, not installed" ;;
        esac
done
echo 'watch = ( { comm = "edited"; } );' >>"$conf"
make -s install >"$T/install.out" 2>&1 || { cat "$T/install.out"; fail "make install, again"; }
grep -q 'comm = "edited"' "$conf" || fail "make install overwrote an edited config"
[ -f "$conf.dist" ] || fail "the shipped config is not beside the edited one"
grep -q "was changed: kept" "$T/install.out" || fail "make install did not say it kept the config"
make -s uninstall >"$T/uninstall.out" 2>&1 || fail "make uninstall"
grep -q 'comm = "edited"' "$conf" || fail "make uninstall removed an edited config"
[ ! -e "$conf.dist" ] && [ ! -e "$T/usr/sbin/aiotraced" ] && [ ! -e "$T/b/etc/logrotate.d/aiotraced" ] ||
        fail "make uninstall left files"

echo "== unedited: make uninstall takes it"
rm "$conf"
make -s install >/dev/null 2>&1 && make -s uninstall >/dev/null 2>&1 || fail "make install, uninstall"
[ ! -e "$conf" ] || fail "make uninstall left the unedited config"
echo PASS
