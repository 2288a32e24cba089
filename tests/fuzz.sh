#!/bin/bash
# A short run of every fuzz target (tests/fuzz/run.sh), so that a regression in a parser shows in CI.
# Longer campaigns: top_srcdir=SRC top_builddir=BUILD bash SRC/tests/fuzz/run.sh 10000000
set -u
command -v clang >/dev/null || { echo "SKIP: no clang (apt-get install clang libclang-rt-14-dev)"; exit 77; }
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"${TMPDIR:-/tmp}/fz.$$.c"
if ! clang -fsanitize=fuzzer "${TMPDIR:-/tmp}/fz.$$.c" -o "${TMPDIR:-/tmp}/fz.$$" 2>/dev/null; then
        rm -f "${TMPDIR:-/tmp}/fz.$$"*
        echo "SKIP: clang has no libFuzzer runtime (apt-get install libclang-rt-14-dev)"
        exit 77
fi
rm -f "${TMPDIR:-/tmp}/fz.$$"*
FUZZ_DIR="${top_builddir:?}/fuzz" exec bash "${top_srcdir:?}/tests/fuzz/run.sh" "${FUZZ_RUNS:-20000}"
