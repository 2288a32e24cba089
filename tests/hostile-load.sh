#!/bin/bash
# What a watched, unprivileged user can do to the daemon with its own processes: one with 4,500 files open that
# starts 300 children, each making one AIO request and staying a second, three times over, while root's workload
# runs.  The daemon (the packaged default: every process watched) loses no record, and root's workload is traced
# whole, every request equal to its truth.  The look at each new process's open files is what such a load
# would make cost: it runs after each drain, a few files of each process in turn.
# It runs alone: the daemon watches every process, another test's too.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing_alone

chmod 755 "$T"
mkdir -p "$T/w" "$T/u"
chmod 777 "$T/u"
write_config "$T/all.conf" 'records = [ "requests", "summary" ];' 'drain_interval_ms = 5;'
start_daemon "$T/all.conf" "$T/all.out"
"$WORKLOAD" --comm aio-root --idiom 2 --rounds 3000 --truth "$T/root.truth" --dir "$T/w" &
root=$!
for round in 1 2 3; do
        prlimit --nofile=8192:8192 setpriv --reuid=65534 --regid=65534 --clear-groups \
                "$WORKLOAD" --comm aio-fan --fan-out 300 --open-fds 4500 --linger-ms 1000 --dir "$T/u" ||
                fail "the fan-out failed (round $round)"
done
wait "$root" || fail "root's workload failed"
stop_daemon "$T/all.out"
lost=$(stat_of "$T/all.out" lost)
fanned=$(grep -c '^\[aio-fan - [0-9]*\] request completed' "$T/all.out")
looked=$(sed -n 's/.*file paths: .*, \([0-9]*\) read from \/proc$/\1/p' "$T/all.out.err")
echo "records lost: $lost; requests of the fan-out's children traced: $fanned of 900; files looked at: ${looked:-?}"
[ "$lost" = 0 ] || fail "$lost records lost"
[ "$fanned" = 900 ] || fail "the children's requests: $fanned of 900"
# Making way for the records must not mean never looking: 900 children with 4,500 files each, a second each.
[ "${looked:-0}" -ge 10000 ] || fail "only ${looked:-no} files looked at"
"$PYTHON3" "$top_srcdir/tests/compare_requests.py" --trace "$T/all.out" --truth "$T/root.truth" --strict ||
        fail "root's workload is not traced whole"
echo PASS
