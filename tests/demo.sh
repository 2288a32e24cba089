#!/bin/bash
# Quick start: install the build dependencies, build, and trace the bundled workload for a few seconds.
# Run as root from the source tree on Debian 12.
set -eu
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: tracing other processes needs it"; exit 4; }
sh tests/deps.sh >/dev/null
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" aiotraced tests/aio-workload >/dev/null
./aiotraced -f -c etc/aiotraced.conf &
TRACER=$!
sleep 0.5
W=$(mktemp -d)
tests/aio-workload --dir "$W" --linger-ms 300
rm -rf "$W"
kill -INT $TRACER
wait $TRACER
