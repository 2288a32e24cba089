#!/bin/bash
# Build the fuzz targets (clang's libFuzzer, with ASan and UBSan) and run each.
#   top_srcdir=SRC top_builddir=BUILD bash SRC/tests/fuzz/run.sh [RUNS]      (default 20000 executions each)
# FUZZ_DIR keeps the build and the corpora between runs; a finding stops it with the crashing input saved.
set -eu
src=${top_srcdir:?}
build=${top_builddir:?}
runs=${1:-20000}
dir=${FUZZ_DIR:-$build/fuzz}
mkdir -p "$dir/obj"
cc=${FUZZ_CC:-clang}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-g -O1 -Wall -Wextra -Wno-unused-parameter $san -fsanitize=fuzzer-no-link -include $build/autoconfig.h -I$src/lib -I$src/bpf
        $(pkg-config --cflags libtraceevent libconfig libsystemd)"
export LSAN_OPTIONS="suppressions=$src/tests/fuzz/lsan.supp:${LSAN_OPTIONS:-}"
libs="$(pkg-config --libs libtraceevent libconfig libsystemd) -lpthread"

objs=
for c in "$src"/lib/*.c; do
        o="$dir/obj/$(basename "$c" .c).o"
        $cc $cflags -c "$c" -o "$o" # always: a header may have changed
        objs="$objs $o"
done

for t in engine capture config format; do
        bin="$dir/fuzz-$t"
        $cc $cflags -fsanitize=fuzzer -I"$src/tests" "$src/tests/fuzz/fuzz-$t.c" $objs $libs -o "$bin"
        mkdir -p "$dir/corpus-$t"
        seeds=
        [ -d "$src/tests/fuzz/seeds-$t" ] && seeds="$src/tests/fuzz/seeds-$t"
        # libconfig leaks on some syntax errors (suppressed): hunting leaks on every input would make the config
        # target a hundred times slower, so it fuzzes without, and then every input it kept is run once with.
        leaks=
        [ "$t" = config ] && leaks=-detect_leaks=0
        echo "== fuzz-$t: $runs runs"
        (cd "$dir" && FUZZ_FIXTURES="$src/tests/fixtures/tracefs" "$bin" -runs="$runs" -max_len=65536 $leaks \
                -artifact_prefix="$dir/crash-$t-" "corpus-$t" $seeds 2>&1 | grep -E '^#[0-9]+.*DONE|ERROR|SUMMARY|Done' ||
                true)
        if [ -n "$leaks" ]; then
                (cd "$dir" && find "corpus-$t" -type f -print0 | xargs -0 -r -n 500 "$bin" -artifact_prefix="$dir/crash-$t-" \
                        2>&1 | grep -E 'ERROR|SUMMARY' || true)
        fi
        if ls "$dir"/crash-"$t"-* >/dev/null 2>&1; then
                echo "fuzz-$t found an input that breaks it: $(ls "$dir"/crash-"$t"-*)"
                exit 1
        fi
done
