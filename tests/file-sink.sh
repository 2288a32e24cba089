#!/bin/bash
# The file sink: rotation under load, JSON lines that a real parser takes (any comm bytes), a full disk, a
# removed directory, a symlink at the path, and SIGUSR1 after an external logrotate.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
if [ "${AIOTRACED_PRIVATE_MOUNTS:-}" != 1 ]; then # the small tmpfs of the full-disk case stays private
        AIOTRACED_PRIVATE_MOUNTS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
fi
mkdir -p "$T/w1" "$T/out"
trap 'umount "$T/small" 2>/dev/null; cleanup' EXIT
oldest_first() { # PATH: PATH.N ... PATH.1 PATH, those that exist
        local p=$1 n
        for n in $(seq 1000 -1 1); do [ -e "$p.$n" ] && echo "$p.$n"; done
        echo "$p"
}

echo "== 1. rotation under load: every entry in path, path.1 ..., whole, in order; at most keep files (JSON with messages)"
write_config "$T/rot.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'ring_pages = 1024;' 'drain_interval_ms = 5;' \
        "output = { sink = \"file\"; path = \"$T/out/trace.json\"; format = \"json\"; json_message = true;
                   max_size = \"64K\"; keep = 200; };"
start_daemon_bg "$T/rot.conf"
wait_for "$T/out/trace.json" "tracking aio starts"
"$WORKLOAD" --comm aio-file --truth "$T/rot1.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
"$WORKLOAD" --comm aio-file --idiom 2 --rounds 300 --truth "$T/rot2.truth" --dir "$T/w1" || fail "workload failed"
stop_daemon_bg
files=$(oldest_first "$T/out/trace.json")
echo "$(echo "$files" | wc -l) files"
[ "$(echo "$files" | wc -l)" -gt 5 ] || fail "64K files did not rotate"
written=$(sed -n 's/^aiotraced: \([0-9]*\) entries written to .*/\1/p' "$T/daemon.err")
lines=$(cat $files | wc -l)
echo "entries written $written, lines in the files $lines"
[ "$written" = "$lines" ] || fail "the files hold $lines lines, the daemon wrote $written entries"
for f in $files; do [ "$(stat -c %s "$f")" -le 65536 ] || fail "$f is larger than max_size"; done
# shellcheck disable=SC2086
"$PYTHON3" "$top_srcdir/tests/compare.py" --json $files --truth "$T/rot1.truth" --truth "$T/rot2.truth" --strict ||
        fail "the JSON lines differ from the ground truth"
"$PYTHON3" - $files <<'PY' || fail "entries out of order across the files"
import json, sys
t = [json.loads(l)['mono_ns'] for f in sys.argv[1:] for l in open(f)]
sys.exit(0 if all(a <= b for a, b in zip(t, t[1:])) else 1)
PY
for f in $files; do python3 -m json.tool --json-lines "$f" >/dev/null || fail "$f: json.tool refuses it"; done

echo "== 2. keep: at most that many rotated files, the oldest go"
write_config "$T/keep.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' \
        "output = { sink = \"file\"; path = \"$T/out/keep.log\"; max_size = 4096; keep = 2; };"
start_daemon_bg "$T/keep.conf"
wait_for "$T/out/keep.log" "tracking aio starts"
for i in 1 2 3; do "$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" || fail "workload failed"; done
stop_daemon_bg
ls "$T/out" | grep '^keep.log'
[ -e "$T/out/keep.log.2" ] && [ ! -e "$T/out/keep.log.3" ] || fail "keep = 2 kept $(ls "$T/out" | grep -c '^keep.log.')"

echo "== 3. any bytes in a comm come out as valid JSON"
comm=$'q"b\\s\x01\x7f\xff\xc3\xa9'
"$WORKLOAD" --comm "$comm" --truth "$T/odd.truth" --dir "$T/w1" --start-when "$T/odd.go" &
W=$!
write_config "$T/odd.conf" "$CALLS" "watch = ( { pid = $W; } );" \
        "output = { sink = \"file\"; path = \"$T/out/odd.json\"; format = \"json\"; };"
start_daemon_to_file "$T/odd.conf" "$T/out/odd.json" "$T/daemon.err"
touch "$T/odd.go"
wait $W || fail "workload failed"
stop_daemon_bg
"$PYTHON3" - "$T/out/odd.json" <<'PY' || fail "the comm did not come out as it should"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8') if '"kind":"call"' in l]
want = 'q"b\\s\x01\x7f\ufffd\u00e9'
print(f'{len(calls)} calls; comm {calls[0]["comm"]!r}')
sys.exit(0 if calls and all(c['comm'] == want for c in calls) else 1)
PY

echo "== 4. a full disk: tracing goes on, the drops are counted, and reported, once each outage, when there is room"
mkdir -p "$T/small"
mount -t tmpfs -o size=256k tmpfs "$T/small"
write_config "$T/full.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' \
        "output = { sink = \"file\"; path = \"$T/small/trace.json\"; max_size = \"1G\"; format = \"json\"; };"
start_daemon_bg "$T/full.conf"
wait_for "$T/small/trace.json" "tracking aio starts"
head -c 300k /dev/zero >"$T/small/filler" 2>/dev/null # fills it: the rest does not fit
for i in 1 2 3; do "$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" || fail "workload failed"; done
rm "$T/small/filler"
"$WORKLOAD" --comm aio-file --truth "$T/after.truth" --dir "$T/w1" --pause-us 2000 || fail "workload failed"
sleep 0.2
kill -0 "$DAEMON_PID" || fail "the daemon did not survive a full disk"
stop_daemon_bg
grep -q 'No space left on device (ENOSPC); entries are counted as dropped' "$T/daemon.err" || fail "ENOSPC not said"
dropped=$(sed -n 's/^aiotraced: \([0-9]*\) entries could not be written: .*/\1/p' "$T/daemon.err")
"$PYTHON3" - "$T/small/trace.json" "${dropped:-0}" <<'PY' || fail "the drops are not all reported in the file, as they should"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1])]  # every line parses: none was torn
drops = [e for e in entries if e['kind'] == 'dropped']
print(f'{len(entries)} entries; drop reports: {[(e["dropped"], e["errno"]) for e in drops]}; the daemon counted {sys.argv[2]}')
ok = drops and all(e['errno'] == 'ENOSPC' and e['where'].endswith('/trace.json') and e['dropped'] > 0 and
                   e['message'].startswith(f'[dropped] {e["dropped"]} entries could not be written to ') for e in drops)
sys.exit(0 if ok and sum(e['dropped'] for e in drops) == int(sys.argv[2]) else 1)
PY
"$PYTHON3" "$top_srcdir/tests/compare.py" --json "$T/small/trace.json" --truth "$T/after.truth" --strict ||
        fail "after the outage, the calls are not all there"
umount "$T/small"

echo "== 5. a symlink at the path is refused, not followed"
ln -s "$T/elsewhere" "$T/out/link.log"
write_config "$T/link.conf" "$CALLS" "output = { sink = \"file\"; path = \"$T/out/link.log\"; };"
"$AIOTRACED" -c "$T/link.conf" 2>"$T/link.err" && fail "started on a symlink"
cat "$T/link.err"
grep -q 'is a symbolic link of uid 0 (root), which is refused, not followed' "$T/link.err" || fail "no reason given"
[ ! -e "$T/elsewhere" ] || fail "the symlink was followed"

echo "== 6. logrotate moves the file away; SIGUSR1 reopens it"
write_config "$T/usr1.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' \
        "output = { sink = \"file\"; path = \"$T/out/usr1.log\"; };"
start_daemon_bg "$T/usr1.conf"
wait_for "$T/out/usr1.log" "tracking aio starts"
"$WORKLOAD" --comm aio-file --truth "$T/u1.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
sleep 0.1
mv "$T/out/usr1.log" "$T/out/usr1.log.old"
kill -USR1 "$DAEMON_PID"
sleep 0.1
"$WORKLOAD" --comm aio-file --truth "$T/u2.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
stop_daemon_bg
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/out/usr1.log" --truth "$T/u2.truth" --unwatched "$T/u1.truth" \
        --strict || fail "after SIGUSR1 the new file does not hold the new calls"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/out/usr1.log.old" --truth "$T/u1.truth" \
        --unwatched "$T/u2.truth" --strict || fail "the moved file lost calls"

echo "== 7. JSON lines on standard output (--stdout), without messages (the default): the members alone against the truth"
write_config "$T/stdout.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' \
        'output = { format = "json"; };'
"$AIOTRACED" --stdout -c "$T/stdout.conf" >"$T/stdout.json" 2>"$T/daemon.err" &
DAEMON_PID=$!
wait_for "$T/stdout.json" '"message":"\[info\] tracking aio starts'
"$WORKLOAD" --comm aio-file --truth "$T/s.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
stop_daemon_bg
"$PYTHON3" "$top_srcdir/tests/compare.py" --json "$T/stdout.json" --truth "$T/s.truth" --strict ||
        fail "JSON on standard output differs from the ground truth"
! grep '"kind":"call"' "$T/stdout.json" | grep -q '"message"' || fail "a call carries a message without json_message"
grep -q '"kind":"call"' "$T/stdout.json" || fail "no call in the JSON lines"

echo "== 8. -f stays in the foreground and keeps the configured file sink; --stdout overrides it"
write_config "$T/fg.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' \
        "output = { sink = \"file\"; path = \"$T/out/fg.log\"; };"
"$AIOTRACED" -f -c "$T/fg.conf" >"$T/fg.stdout" 2>"$T/daemon.err" &
DAEMON_PID=$!
wait_for "$T/out/fg.log" '^\[info\] tracking aio starts'
"$WORKLOAD" --comm aio-file --truth "$T/fg.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
stop_daemon_bg
[ ! -s "$T/fg.stdout" ] || fail "-f wrote to standard output: $(head -2 "$T/fg.stdout")"
grep -q '^aiotraced: note: -f no longer forces standard output (that is --stdout now); writing to the file' \
        "$T/daemon.err" || fail "-f with a file sink does not say what changed"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/out/fg.log" --truth "$T/fg.truth" --strict ||
        fail "with -f, the file does not hold the calls"
rm -f "$T/out/fg.log"
"$AIOTRACED" --stdout -c "$T/fg.conf" >"$T/fg.stdout" 2>"$T/daemon.err" &
DAEMON_PID=$!
wait_for "$T/fg.stdout" '^\[info\] tracking aio starts'
"$WORKLOAD" --comm aio-file --truth "$T/fg2.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
stop_daemon_bg
[ ! -e "$T/out/fg.log" ] || fail "--stdout wrote to the configured file"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/fg.stdout" --truth "$T/fg2.truth" --strict ||
        fail "with --stdout, standard output does not hold the calls"

echo "== 9. a reload opens the output anew: another path and format take effect, a restart-only key is kept"
write_config "$T/rl.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' \
        "output = { sink = \"file\"; path = \"$T/out/rl-a.log\"; };"
start_daemon_bg "$T/rl.conf"
wait_for "$T/out/rl-a.log" "tracking aio starts"
# its last call well before the reload: what a reload drains first is what is older than the merge's margin
"$WORKLOAD" --comm aio-file --truth "$T/rl1.truth" --dir "$T/w1" --pause-us 1000 --linger-ms 50 || fail "workload failed"
write_config "$T/rl.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' 'ring_pages = 64;' \
        "output = { sink = \"file\"; path = \"$T/out/rl-b.json\"; format = \"json\"; };"
kill -HUP "$DAEMON_PID"
wait_for "$T/out/rl-b.json" '"message":"\[info\] reloaded '
"$WORKLOAD" --comm aio-file --truth "$T/rl2.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
# a path that cannot be opened: the output stays where it is
write_config "$T/rl.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' 'ring_pages = 64;' \
        "output = { sink = \"file\"; path = \"$T/no/such/dir/c.log\"; };"
kill -HUP "$DAEMON_PID"
wait_for "$T/out/rl-b.json" '"message":"\[info\] reload: output.path .*/no/such/dir/c.log: No such file or directory; the output stays as it was'
"$WORKLOAD" --comm aio-file --truth "$T/rl3.truth" --dir "$T/w1" --pause-us 1000 || fail "workload failed"
stop_daemon_bg
grep -q '^\[info\] reload: ring_pages = 64 takes effect at restart; kept unset (from ring_memory)$' "$T/out/rl-a.log" ||
        fail "the restart-only key was not said"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/out/rl-a.log" --truth "$T/rl1.truth" --unwatched "$T/rl2.truth" \
        --strict || fail "the first output does not hold what came before the reload, alone"
"$PYTHON3" "$top_srcdir/tests/compare.py" --json "$T/out/rl-b.json" --truth "$T/rl2.truth" --truth "$T/rl3.truth" \
        --unwatched "$T/rl1.truth" --strict || fail "the output the reload opened does not hold what came after it"
grep -q "^aiotraced: [0-9]* entries written to $T/out/rl-a.log, 0 rotations$" "$T/daemon.err" ||
        fail "the first file's count is not said when the reload closes it"
tail -5 "$T/daemon.err" | grep -q "^aiotraced: [0-9]* entries written to $T/out/rl-b.json, 0 rotations$" ||
        fail "at exit the count does not name the file written last"
[ ! -e "$T/no/such/dir/c.log" ] || fail "the path that failed was created"

echo "== 10. a second daemon given the same output file, or the same dump: refused, naming the first"
write_config "$T/two.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' \
        "output = { sink = \"file\"; path = \"$T/out/two.log\"; };"
"$AIOTRACED" -c "$T/two.conf" --dump "$T/out/two.dump" 2>"$T/first.err" &
DAEMON_PID=$!
wait_for "$T/out/two.log" "tracking aio starts"
"$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" --pause-us 1000 || fail "workload failed"
wait_for "$T/out/two.dump" '^records$' # out at each drain
cp "$T/out/two.dump" "$T/two.dump.before" # the first keeps writing (the second's own exec is a record)
"$AIOTRACED" -c "$T/two.conf" >/dev/null 2>"$T/second.err"
rc=$?
cat "$T/second.err"
[ $rc = 3 ] || fail "a second daemon on the same file: exit $rc, not 3"
grep -q "output.path $T/out/two.log: is being written by another aiotraced (pid $DAEMON_PID)" "$T/second.err" ||
        fail "the second daemon does not name the first"
"$AIOTRACED" --stdout -c "$T/two.conf" --dump "$T/out/two.dump" >/dev/null 2>"$T/second.err"
rc=$?
cat "$T/second.err"
[ $rc = 2 ] || fail "a second daemon on the same dump: exit $rc, not 2"
grep -q -- "--dump $T/out/two.dump: is being written by another aiotraced (pid $DAEMON_PID)" "$T/second.err" ||
        fail "the second daemon does not name the first holding the dump"
cmp -s -n "$(stat -c %s "$T/two.dump.before")" "$T/two.dump.before" "$T/out/two.dump" ||
        fail "the second daemon changed the first one's dump"
kill -INT "$DAEMON_PID"
wait "$DAEMON_PID" || fail "the first daemon did not stop cleanly"
DAEMON_PID=

echo "== 11. standard output closed by its reader: said at once, and the daemon stops by itself"
write_config "$T/pipe.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;'
{ "$AIOTRACED" --stdout -c "$T/pipe.conf" 2>"$T/pipe.err"; echo "exit=$?" >"$T/pipe.rc"; } | head -1 >"$T/pipe.out" &
wait_for "$T/pipe.out" "tracking aio starts"
"$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" --pause-us 1000 || fail "workload failed"
wait_for "$T/pipe.rc" '^exit='
cat "$T/pipe.err"
grep -qx 'exit=1' "$T/pipe.rc" || fail "with its standard output closed, the daemon $(cat "$T/pipe.rc")"
grep -q '^aiotraced: standard output: Broken pipe (EPIPE); entries are counted as dropped$' "$T/pipe.err" ||
        fail "the closed output was not said"
grep -q '^aiotraced: the output is closed for good (Broken pipe): stopping$' "$T/pipe.err" ||
        fail "the daemon did not say why it stopped"

echo "== 12. --check-config refuses what start would: a path that cannot be written; a FIFO there never hangs"
mkdir -p "$T/ro"
mount -t tmpfs -o ro tmpfs "$T/ro"
mkfifo "$T/out/fifo"
for bad in "$T/no/such/dir/x.log:its directory $T/no/such/dir does not exist" \
        "$T/ro/x.log:its directory $T/ro cannot take a new file: Read-only file system" \
        "$T/out:is a directory of uid 0 (root), not a regular file" "/dev/full:is a device of uid 0 (root), not a regular file" \
        "$T/out/fifo:is a FIFO of uid 0 (root), not a regular file"; do
        path=${bad%%:*}
        write_config "$T/bad.conf" 'watch = ( { comm = "aio-file"; } );' "output = { sink = \"file\"; path = \"$path\"; };"
        timeout 10 "$AIOTRACED" --check-config -c "$T/bad.conf" >/dev/null 2>"$T/bad.err"
        rc=$?
        [ $rc = 3 ] || fail "--check-config with output.path $path: exit $rc, not 3"
        grep -qF "output.path $path: ${bad#*:}" "$T/bad.err" || fail "--check-config with $path says: $(cat "$T/bad.err")"
done
# and start, with the same FIFO: refused at once, not waiting for a reader
timeout 10 "$AIOTRACED" -c "$T/bad.conf" >/dev/null 2>"$T/bad.err"
[ $? = 3 ] || fail "start with a FIFO as output.path did not refuse at once"
umount "$T/ro"

echo "== 13. --dump to a device that takes nothing: every record counted as not written"
write_config "$T/dump.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;'
"$AIOTRACED" --stdout -c "$T/dump.conf" --dump /dev/full >"$T/dump.out" 2>"$T/dump.err" &
DAEMON_PID=$!
wait_for "$T/dump.out" "tracking aio starts"
"$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" || fail "workload failed"
stop_daemon "$T/dump.out"
records=$(stat_of "$T/dump.out" records)
unwritten=$(sed -n 's/^aiotraced: --dump \/dev\/full: \([0-9]*\) records could not be written$/\1/p' "$T/dump.err")
echo "records read $records, not written to the dump: ${unwritten:-none said}"
[ -n "$records" ] && [ "$records" -gt 0 ] && [ "${unwritten:-0}" = "$records" ] ||
        fail "--dump /dev/full: $records records read, ${unwritten:-none} said not written"

echo "== 14. another user's file at the path (fs.protected_* off): refused with the reason, by --check-config and start"
unprotect_fs
chmod 755 "$T"
pub=$T/pub # world-writable, sticky, as /tmp
mkdir -m 1777 "$pub"
as_nobody sh -c "umask 0; : >'$pub/theirs.log'"
write_config "$T/theirs.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' \
        "output = { sink = \"file\"; path = \"$pub/theirs.log\"; };"
for check in --check-config ""; do
        # shellcheck disable=SC2086
        "$AIOTRACED" $check -c "$T/theirs.conf" >/dev/null 2>"$T/theirs.err"
        rc=$?
        cat "$T/theirs.err"
        [ $rc = 3 ] || fail "${check:-start} with another user's output file: exit $rc, not 3"
        grep -q "output.path $pub/theirs.log: is owned by uid 65534 (nobody), not by the daemon's uid 0: refused" "$T/theirs.err" ||
                fail "${check:-start} does not say whose the file is"
done
[ ! -s "$pub/theirs.log" ] || fail "another user's file was written"

echo "== 15. rotation in a world-writable directory while another user keeps planting a file at the path: nothing of"
echo "   theirs written, every file of ours 0640 (its mode set again at open), what could not be written counted and said"
: >"$pub/trace.log"
chmod 644 "$pub/trace.log"
write_config "$T/race.conf" "$CALLS" 'watch = ( { comm = "aio-file"; } );' 'drain_interval_ms = 5;' \
        "output = { sink = \"file\"; path = \"$pub/trace.log\"; max_size = 4096; keep = 3; };"
start_daemon_bg "$T/race.conf"
wait_for "$pub/trace.log" "tracking aio starts"
[ "$(stat -c %a "$pub/trace.log")" = 640 ] || fail "an existing file's mode was not set to output.mode"
as_nobody "$NOBODY_PYTHON3" -c '
import os, sys
os.umask(0)
while not os.path.exists(sys.argv[1]):
    try:
        os.close(os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError:
        pass' "$T/race.stop" "$pub/trace.log" &
racer=$!
for _ in $(seq 30); do
        "$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" --pause-us 200 || fail "workload failed"
        [ "$(stat -c %u "$pub/trace.log" 2>/dev/null)" = 65534 ] && break
done
touch "$T/race.stop"
wait "$racer"
# and, whatever the race gave, the moment it aims at for certain: the file moved away (as logrotate does), theirs
# put in its place, and the daemon told to open the path again
if [ "$(stat -c %u "$pub/trace.log")" = 65534 ]; then
        echo "the racer got in first at a rotation"
else
        mv "$pub/trace.log" "$pub/trace.log.moved"
        as_nobody "$NOBODY_PYTHON3" -c 'import os, sys; os.umask(0); os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))' \
                "$pub/trace.log"
        kill -USR1 "$DAEMON_PID"
fi
"$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" || fail "workload failed"
stop_daemon_bg >"$T/race.err"
cat "$T/race.err"
ls -la "$pub"
for f in "$pub"/trace.log*; do
        case $(stat -c '%u %a %s' "$f") in
        "0 640 "*) ;;
        "65534 666 0") ;;
        *) fail "$f: $(stat -c '%U %a, %s bytes' "$f")" ;;
        esac
done
grep -q "$pub/trace.log: is owned by uid 65534 (nobody), not by the daemon's uid 0: refused, never written through (EPERM); entries are counted as dropped" \
        "$T/race.err" || fail "the planted file was not said"
grep -q '^aiotraced: [1-9][0-9]* entries could not be written' "$T/race.err" || fail "the entries not written were not counted"

echo "== 16. a symbolic link planted at the path, then the file opened again: refused, said as what it is, not followed"
rm -f "$pub"/trace.log*
start_daemon_bg "$T/race.conf"
wait_for "$pub/trace.log" "tracking aio starts"
mv "$pub/trace.log" "$pub/trace.log.moved"
as_nobody ln -s "$pub/target" "$pub/trace.log"
kill -USR1 "$DAEMON_PID"
"$WORKLOAD" --comm aio-file --truth /dev/null --dir "$T/w1" || fail "workload failed"
stop_daemon_bg >"$T/link2.err"
[ ! -e "$pub/target" ] || fail "the link was followed"
grep -q "$pub/trace.log: is a symbolic link of uid 65534 (nobody), which is refused, not followed (ELOOP)" "$T/link2.err" ||
        { cat "$T/link2.err"; fail "the link was not said as a symbolic link"; }
restore_fs

echo PASS
