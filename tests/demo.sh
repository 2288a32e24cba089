#!/bin/sh
# Quick start, from a clone of the source on Debian 12: install what the build needs, build, and trace the
# bundled workload (tests/aio-workload) for a few seconds.  As root, or through sudo.
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null && exec sudo sh "$0" "$@"
        echo "tests/demo.sh: run it as root: installing packages and tracing other processes need it" >&2
        exit 4
fi
log=$(mktemp /tmp/aiotraced-demo.XXXXXX)
work=$(mktemp -d /tmp/aiotraced-demo.XXXXXX)
tracer=
trap '[ -z "$tracer" ] || kill "$tracer" 2>/dev/null; rm -rf "$log" "$work"' EXIT

echo "== installing the build dependencies (apt-get; tests/deps.sh)"
sh tests/deps.sh >"$log" 2>&1 || { cat "$log"; exit 1; }
echo "== building"
[ -x configure ] || autoreconf -fi >"$log" 2>&1 || { cat "$log"; exit 1; }
# A tree already configured elsewhere (out of tree, as tests/run-suite.sh does) is left alone.
[ -f Makefile ] || ./configure -q >"$log" 2>&1 || { cat "$log"; exit 1; }
make -j"$(nproc)" -s all tests/aio-workload >"$log" 2>&1 || { cat "$log"; exit 1; }

echo "== tracing tests/aio-workload: each call decoded, each request, each process's summary"
# The config a root daemon reads must be root's: written here, not taken from the clone.
cat >"$work/demo.conf" <<'CONF'
watch = ( { comm = "aio-workload"; } );
records = [ "syscalls", "requests", "summary" ];
drain_interval_ms = 10;
CONF
./aiotraced --stdout -c "$work/demo.conf" >"$work/trace" 2>"$work/trace.err" &
tracer=$!
for _ in $(seq 500); do
        grep -q 'tracking aio starts' "$work/trace" && break
        kill -0 "$tracer" 2>/dev/null || { cat "$work/trace.err"; exit 1; }
        sleep 0.01
done
mkdir "$work/files"
tests/aio-workload --dir "$work/files" --truth /dev/null --linger-ms 300
kill -INT "$tracer"
wait "$tracer" || { cat "$work/trace.err"; exit 1; }
tracer=
cat "$work/trace" "$work/trace.err"
