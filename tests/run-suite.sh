#!/bin/bash
# The whole test suite (what CI runs, after tests/deps.sh --tests), as root: a -Werror build with make check and
# make check-live, the same under AddressSanitizer + UndefinedBehaviorSanitizer (the package, built from the
# source apart, once is enough), then make distcheck.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/_build}
jobs=$(nproc)
cd "$src"
if [ -f Makefile ]; then
        echo "run-suite: the source tree is configured in place; its builds are out of tree: make distclean first" >&2
        exit 1
fi
autoreconf -fi

mkdir -p "$build/plain" "$build/sanitize"
# The end of each failed test's log (a whole log is too long for CI to show).
logs() {
        local trs
        for trs in "$1"/tests/*.trs; do
                grep -qE '^:test-result: (FAIL|ERROR)' "$trs" 2>/dev/null || continue
                echo "=== ${trs%.trs}.log"
                tail -40 "${trs%.trs}.log"
        done
}
echo "=== build with -Wall -Wextra -Werror, make check, make check-live"
(cd "$build/plain" && "$src/configure" --enable-werror --enable-bpf -q && make -j"$jobs" -s && make -j"$jobs" check &&
        make check-live) || { logs "$build/plain"; exit 1; }

echo "=== ASan + UBSan build, make check, make check-live"
(cd "$build/sanitize" && "$src/configure" --enable-sanitizers --enable-werror --enable-bpf -q && make -j"$jobs" -s &&
        make -j"$jobs" check &&
        make check-live LIVE_TESTS='tests/every-process.sh tests/hostile-load.sh tests/hotplug.sh tests/systemd.sh') ||
        { logs "$build/sanitize"; exit 1; }

echo "=== make distcheck"
(cd "$build/plain" && make -s distcheck) || exit 1
# One closing line over every make check run, as "N passed, N failed".
suite_logs=$(ls "$build"/{plain,sanitize}/test-suite{,-live}.log 2>/dev/null)
# shellcheck disable=SC2086
pass=$(grep -h '^# PASS:' $suite_logs | awk '{s+=$3} END {print s+0}')
# shellcheck disable=SC2086
skip=$(grep -h '^# SKIP:' $suite_logs | awk '{s+=$3} END {print s+0}')
echo "run-suite: $pass passed, 0 failed, $skip skipped"
