#!/bin/bash
# What a daemon beside production databases must survive: valgrind's memcheck under load, a thousand reloads
# with nothing growing, SIGKILL and a restart, hundreds of processes at once, a config anyone could have
# written, one CPU instead of all, an idle host; and it keeps only the capabilities tracing needs.  (A CPU
# taken offline: tests/hotplug.sh.)
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
mkdir -p "$T/w1"

# An ASan build keeps freed memory in quarantine (RSS grows by design) and cannot run under valgrind.
sanitized=
ldd "$AIOTRACED" | grep -q libasan && sanitized=yes

rss_kib() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\) kB$/\1/p' "/proc/$1/status"; }
reloads() { grep -c '^\[info\] reloaded' "$1"; }

for cap in bpf remote-read; do
        C="$T/$cap"
        echo "== $cap 1. the capabilities kept once the events are open"
        write_config "$C.conf" "capture = \"$cap\";" 'watch = ( { comm = "aio-faults"; } );' 'drain_interval_ms = 5;' \
                'records = [ "syscalls", "requests", "summary" ];' 'summary_interval = 1;'
        start_daemon "$C.conf" "$C.caps.out"
        # CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, and CAP_PERFMON: new event sets, and a CPU's again once it is back
        want=0000004000080004
        grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' "/proc/$DAEMON_PID/status" | tr '\n' ' '
        echo
        for f in CapEff CapPrm CapBnd; do
                [ "$(sed -n "s/^$f:\t//p" "/proc/$DAEMON_PID/status")" = $want ] || fail "$f is not $want"
        done
        [ "$(sed -n 's/^NoNewPrivs:\t//p' "/proc/$DAEMON_PID/status")" = 1 ] || fail "no_new_privs not set"
        # and it still traces, reloads, reads memory and paths
        "$WORKLOAD" --comm aio-faults --truth "$C.caps.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 200 ||
                fail "workload failed"
        kill -HUP "$DAEMON_PID"
        wait_for "$C.caps.out" '^\[info\] reloaded'
        stop_daemon "$C.caps.out"
        exact=--complete
        [ "$cap" = bpf ] && exact=--strict
        "$PYTHON3" "$top_srcdir/tests/compare_requests.py" --trace "$C.caps.out" --truth "$C.caps.truth" $exact ||
                fail "with fewer capabilities, the requests differ"

        echo "== $cap 2. 1,000 reloads under load: none refused, nothing grows"
        write_config "$C.rl.conf" "capture = \"$cap\";" 'watch = ( { comm = "aio-faults"; } );' \
                'records = [ "summary" ];' 'summary_interval = 1;'
        start_daemon "$C.rl.conf" "$C.rl.out"
        "$WORKLOAD" --comm aio-faults --idiom 2 --rounds 100000000 --truth /dev/null --dir "$T/w1" &
        load=$!
        for i in $(seq 1000); do
                kill -HUP "$DAEMON_PID"
                while [ "$(reloads "$C.rl.out")" -lt "$i" ]; do sleep 0.001; done
                [ "$i" = 200 ] && rss200=$(rss_kib "$DAEMON_PID")
        done
        rss1000=$(rss_kib "$DAEMON_PID")
        kill "$load"
        wait "$load" 2>/dev/null
        stop_daemon "$C.rl.out"
        echo "RSS after 200 reloads $rss200 KiB, after 1000 $rss1000 KiB"
        [ -n "$sanitized" ] || [ $((rss1000 - rss200)) -le 256 ] ||
                fail "RSS grew by $((rss1000 - rss200)) KiB over 800 reloads"
        ! grep -q 'reload refused\|reload failed' "$C.rl.out" || fail "a reload was refused"

        echo "== $cap 3. under valgrind's memcheck, under load, with a reload: no error, no leak"
        if ! command -v valgrind >/dev/null; then
                echo "no valgrind here: part skipped (apt-get install valgrind)"
        elif [ -n "$sanitized" ]; then
                echo "an ASan build: memcheck runs on the plain build"
        else
                AIOTRACED_WRAP="valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect
                        --suppressions=$top_srcdir/tests/valgrind.supp -q" start_daemon_slow "$C.conf" "$C.vg.out"
                "$WORKLOAD" --comm aio-faults --truth "$C.vg.truth" --dir "$T/w1" --linger-ms 200 || fail "workload failed"
                "$WORKLOAD" --comm aio-faults --idiom 2 --rounds 300 --truth /dev/null --dir "$T/w1" ||
                        fail "workload failed"
                kill -HUP "$DAEMON_PID"
                wait_for "$C.vg.out" '^\[info\] reloaded'
                kill -INT "$DAEMON_PID"
                wait "$DAEMON_PID"
                rc=$?
                DAEMON_PID=
                grep -v 'unhandled eBPF command' "$C.vg.out.err" | head -40
                [ "$rc" = 0 ] || fail "valgrind found errors (exit $rc)"
                grep -q '^\[stats\]' "$C.vg.out" || fail "no stats line under valgrind"
        fi
done

echo "== 4. killed with SIGKILL, then started again: it starts clean and traces"
write_config "$T/k.conf" 'watch = ( { comm = "aio-faults"; } );' 'drain_interval_ms = 5;' "$CALLS"
start_daemon "$T/k.conf" "$T/k1.out"
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
start_daemon "$T/k.conf" "$T/k2.out"
"$WORKLOAD" --comm aio-faults --truth "$T/k.truth" --dir "$T/w1" --pause-us 30000 --linger-ms 200 || fail "workload failed"
stop_daemon "$T/k2.out"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/k2.out" --truth "$T/k.truth" --strict ||
        fail "after a SIGKILL, the restarted daemon does not trace right"

echo "== 5. 150 processes at once, two threads each, every one of their calls"
write_config "$T/many.conf" 'watch = ( { comm = "aio-many"; } );' "$CALLS" 'ring_pages = 4096;'
start_daemon "$T/many.conf" "$T/many.out"
pids=()
for i in $(seq 150); do
        mkdir -p "$T/m$i"
        "$WORKLOAD" --comm aio-many --truth "$T/m$i.truth" --dir "$T/m$i" --linger-ms 300 &
        pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a workload failed"; done
stop_daemon "$T/many.out"
truths=()
for i in $(seq 150); do truths+=(--truth "$T/m$i.truth"); done
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/many.out" "${truths[@]}" --strict ||
        fail "calls of 150 processes differ from their truth"

echo "== 6. --dump: every record the daemon read, replayed without root as it read them"
write_config "$T/d.conf" 'watch = ( { comm = "aio-faults"; } );' 'drain_interval_ms = 5;' \
        'records = [ "syscalls", "requests", "summary" ];'
AIOTRACED_ARGS="--dump $T/d.dump" start_daemon "$T/d.conf" "$T/d.out"
"$WORKLOAD" --comm aio-faults --truth "$T/d.truth" --dir "$T/w1" --pause-us 10000 || fail "workload failed"
stop_daemon "$T/d.out"
read_records=$(stat_of "$T/d.out" records)
"$top_builddir/tests/bench-replay" "$T/d.dump" 0.01 >"$T/replay.out" || fail "bench-replay failed"
head -1 "$T/replay.out"
grep -q ": $read_records records (" "$T/replay.out" || fail "the dump does not hold the $read_records records read"

echo "== 7. another CPU count: one CPU traced (AIOTRACED_CPUS), the workload kept on it: every call"
write_config "$T/one.conf" 'watch = ( { comm = "aio-faults"; } );' "$CALLS" 'drain_interval_ms = 5;'
AIOTRACED_CPUS=1 start_daemon "$T/one.conf" "$T/one.out"
grep -q '^\[info\] tracking aio starts at .*: 1 CPUs' "$T/one.out" || fail "not one CPU"
taskset -c 1 "$WORKLOAD" --comm aio-faults --idiom 2 --rounds 300 --truth "$T/one.truth" --dir "$T/w1" ||
        fail "workload failed"
stop_daemon "$T/one.out"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/one.out" --truth "$T/one.truth" --strict ||
        fail "on one CPU, the trace differs"
AIOTRACED_CPUS=4095 "$AIOTRACED" --stdout -c "$T/one.conf" >/dev/null 2>"$T/none.err" && fail "started on no CPU"
grep -q 'none of them is online' "$T/none.err" || fail "no reason given for no CPU"

echo "== 8. a config anyone could have written, or that is no file, is refused, at start and at reload"
write_config "$T/w.conf" 'watch = ( { comm = "aio-faults"; } );' "$CALLS"
chmod 0666 "$T/w.conf"
"$AIOTRACED" --stdout -c "$T/w.conf" >/dev/null 2>"$T/w.err"
rc=$?
cat "$T/w.err"
[ $rc = 3 ] || fail "a config writable by others: exit $rc, not 3"
grep -q 'is writable by others (mode 0666): refused' "$T/w.err" || fail "no reason given"
chmod 0644 "$T/w.conf"
chown 65534 "$T/w.conf"
"$AIOTRACED" --stdout -c "$T/w.conf" >/dev/null 2>"$T/w.err" && fail "started on a config owned by uid 65534"
grep -q 'is owned by uid 65534, not root: refused' "$T/w.err" || fail "no reason given for the owner"
chown 0 "$T/w.conf"
# a link of another user's to root's config: which file it names would be theirs to choose
ln -s w.conf "$T/theirs.conf" && chown -h 65534 "$T/theirs.conf"
ln -s w.conf "$T/ours.conf"
for check in --check-config ""; do
        # shellcheck disable=SC2086
        timeout 10 "$AIOTRACED" $check --stdout -c "$T/theirs.conf" >/dev/null 2>"$T/w.err"
        rc=$?
        [ $rc = 3 ] || fail "${check:-start} with a config reached through another user's link: exit $rc, not 3"
        grep -q "$T/theirs.conf: is reached through a symbolic link that another user could have made: refused" \
                "$T/w.err" || fail "${check:-start}: no reason given for the link: $(cat "$T/w.err")"
done
(cd "$T" && "$AIOTRACED" --check-config -c ours.conf >/dev/null) || fail "root's own link, relative, was refused"
start_daemon "$T/w.conf" "$T/w.out"
chmod 0666 "$T/w.conf"
kill -HUP "$DAEMON_PID"
wait_for "$T/w.out" '^\[info\] reload refused, the running configuration stays: .*is writable by others'
kill -0 "$DAEMON_PID" || fail "the daemon did not survive a refused reload"
# the config's path now a directory, then a FIFO nobody writes: refused at once, the daemon goes on
mv "$T/w.conf" "$T/w.conf.file"
mkdir "$T/w.conf"
kill -HUP "$DAEMON_PID"
wait_for "$T/w.out" "^\[info\] reload refused, the running configuration stays: $T/w.conf: is a directory, not a file: refused$"
rmdir "$T/w.conf"
mkfifo "$T/w.conf"
kill -HUP "$DAEMON_PID"
wait_for "$T/w.out" "^\[info\] reload refused, the running configuration stays: $T/w.conf: is a FIFO, not a file: refused$"
"$WORKLOAD" --comm aio-faults --truth "$T/w.truth" --dir "$T/w1" --pause-us 20000 || fail "workload failed"
stop_daemon "$T/w.out"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/w.out" --truth "$T/w.truth" --strict ||
        fail "after refused reloads, the calls are not traced as before"
rm "$T/w.conf"
chmod 0644 "$T/w.conf.file"
timeout 10 "$AIOTRACED" --check-config -c "$T/w.conf.file" >/dev/null 2>&1 || fail "the config itself was good"
mkfifo "$T/w.conf"
timeout 10 "$AIOTRACED" --check-config -c "$T/w.conf" 2>&1 | grep -q 'is a FIFO, not a file: refused' ||
        fail "--check-config of a FIFO does not refuse it at once"
rm "$T/w.conf"
# an empty config watches everything: said, at --check-config and at start
write_config "$T/empty.conf" "$CALLS"
"$AIOTRACED" --check-config -c "$T/empty.conf" 2>&1 | grep -q 'no watch list: every process on the host is traced' ||
        fail "--check-config of an empty watch list does not warn"

echo "== 9. an ordinary user is told what is missing: privilege"
write_config "$T/user.conf" 'watch = ( { comm = "aio-faults"; } );'
chmod 0644 "$T/user.conf"
chmod o+x "$T"
setpriv --reuid=65534 --regid=65534 --clear-groups "$AIOTRACED" --stdout -c "$T/user.conf" >/dev/null 2>"$T/user.err"
rc=$?
cat "$T/user.err"
[ $rc = 4 ] || fail "an ordinary user: exit $rc, not 4"
grep -qi 'root\|CAP_PERFMON' "$T/user.err" || fail "an ordinary user is not told that it needs privilege"
! grep -q 'could not be mounted' "$T/user.err" || fail "an ordinary user is told tracefs is not mounted"

echo "== 10. idle: a watched process doing no AIO; the daemon wakes for its drain timer alone"
sleep 60 &
idle_pid=$!
write_config "$T/idle.conf" "watch = ( { pid = $idle_pid; } );" 'drain_interval_ms = 200;'
start_daemon "$T/idle.conf" "$T/idle.out"
# every time a thread of the daemon went to sleep and was woken, whatever woke it
wakeups() { cat /proc/"$DAEMON_PID"/task/*/status | awk '/^voluntary_ctxt_switches:/ {n += $2} END {print n}'; }
sleep 0.5
before=$(wakeups)
sleep 4
after=$(wakeups)
stop_daemon "$T/idle.out"
kill "$idle_pid"
echo "idle: $((after - before)) wake-ups in 4 s; the drain timer: 20"
[ $((after - before)) -le 24 ] || fail "idle, the daemon woke $((after - before)) times in 4 s, not only for its timer"

echo "== 11. a low limit on open files: the soft one raised to the hard one; a hard one too low: refused, and said"
# Without the capture, every CPU takes a descriptor per tracepoint, twice over while a reload replaces the set:
# more than 24 even on two CPUs.
write_config "$T/fd.conf" 'capture = "remote-read";' 'watch = ( { comm = "aio-faults"; } );' "$CALLS" \
        'drain_interval_ms = 5;'
AIOTRACED_WRAP="prlimit --nofile=24:$(ulimit -H -n)" start_daemon "$T/fd.conf" "$T/fd.out"
limit=$(sed -n 's/^Max open files *\([0-9]*\).*/\1/p' "/proc/$DAEMON_PID/limits")
[ "$limit" = "$(ulimit -H -n)" ] || fail "the soft limit on open files is $limit, not the hard $(ulimit -H -n)"
sed -i 's/comm = "aio-faults"/comm = "aio-fd*"/' "$T/fd.conf"
kill -HUP "$DAEMON_PID"
wait_for "$T/fd.out" '^\[info\] reloaded'
"$WORKLOAD" --comm aio-fd --truth "$T/fd.truth" --dir "$T/w1" --pause-us 20000 || fail "workload failed"
stop_daemon "$T/fd.out"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/fd.out" --truth "$T/fd.truth" --strict ||
        fail "with a low soft limit, the calls are not all traced"
# a hard limit of 100, and no CAP_SYS_RESOURCE to raise it: refused at start, naming the limit and the fix
prlimit --nofile=100:100 setpriv --inh-caps=-sys_resource --bounding-set=-sys_resource \
        "$AIOTRACED" --stdout -c "$T/fd.conf" >/dev/null 2>"$T/fd.err"
rc=$?
cat "$T/fd.err"
[ $rc = 1 ] || fail "a hard limit too low: exit $rc, not 1"
grep -q 'aiotraced: tracing [0-9]* CPUs takes up to [0-9]* open files, and the limit is 100: raise it (LimitNOFILE= in the unit, ulimit -n in a shell)$' \
        "$T/fd.err" || fail "a hard limit too low is not said"


echo "== 11b. a soft limit of 16 open files, in both capture modes: raised before anything is opened"
for cap in bpf remote-read; do
        write_config "$T/fd16.conf" "capture = \"$cap\";" 'watch = ( { comm = "aio-fd16"; } );' "$CALLS" \
                'drain_interval_ms = 5;'
        AIOTRACED_WRAP="prlimit --nofile=16:$(ulimit -H -n)" start_daemon "$T/fd16.conf" "$T/fd16.out"
        "$WORKLOAD" --comm aio-fd16 --truth "$T/fd16.truth" --dir "$T/w1" --pause-us 20000 || fail "workload failed"
        stop_daemon "$T/fd16.out"
        grep -q "memory captured in the kernel" "$T/fd16.out" || [ "$cap" = remote-read ] ||
                fail "capture = bpf with a soft limit of 16: not captured"
        "$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/fd16.out" --truth "$T/fd16.truth" --strict ||
                fail "with a soft limit of 16 ($cap), the calls are not all traced"
done

echo "== 11c. tracefs not mounted, the daemon run by hand: it mounts it, and says so (in a mount namespace of its own)"
write_config "$T/tfs.conf" 'watch = ( { comm = "aio-tfs"; } );' "$CALLS"
unshare -m --propagation private sh -c 'umount /sys/kernel/tracing && ! grep -q tracefs /proc/self/mounts &&
        exec timeout --preserve-status -s INT 3 "$0" --stdout -c "$1"' "$AIOTRACED" "$T/tfs.conf" >"$T/tfs.out" 2>"$T/tfs.err"
rc=$?
cat "$T/tfs.err"
[ $rc = 0 ] || fail "with tracefs unmounted, by hand: exit $rc"
grep -q '^aiotraced: tracefs was not mounted: mounted it at /sys/kernel/tracing, where it stays$' "$T/tfs.err" ||
        fail "mounting tracefs was not said"
# --check-config says what start would find, mounting nothing: by hand as root, that start mounts it; without
# CAP_SYS_ADMIN, that start would refuse (exit 4, as start); with tracefs there, the tracepoints checked
unshare -m --propagation private sh -c 'umount /sys/kernel/tracing &&
        "$0" --check-config -c "$1" >"$2.out" 2>"$2.err"; echo $? >"$2.rc"; grep -c tracefs /proc/self/mounts >"$2.mounts"
        setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$0" --check-config -c "$1" 2>"$2.nocap.err"
        echo $? >"$2.nocap.rc"' "$AIOTRACED" "$T/tfs.conf" "$T/tfschk"
cat "$T/tfschk.err" "$T/tfschk.nocap.err"
[ "$(cat "$T/tfschk.rc")" = 0 ] && [ "$(cat "$T/tfschk.mounts")" = 0 ] ||
        fail "--check-config as root with tracefs unmounted: exit $(cat "$T/tfschk.rc"), mounts $(cat "$T/tfschk.mounts")"
grep -q 'tracefs is not mounted: started by hand, the daemon mounts it at /sys/kernel/tracing; under the unit' \
        "$T/tfschk.err" || fail "--check-config does not say start would mount tracefs"
[ "$(cat "$T/tfschk.nocap.rc")" = 4 ] && grep -q "start would refuse: tracefs is not mounted and could not be mounted" \
        "$T/tfschk.nocap.err" || fail "--check-config without CAP_SYS_ADMIN says ok where start would exit 4"

echo "== 12. ring_memory shared out over the CPUs, said at start; too small for every CPU's smallest ring: refused"
# two CPUs, whatever this machine has
write_config "$T/mem.conf" 'watch = ( { comm = "aio-faults"; } );' "$CALLS" 'ring_memory = "128K";'
AIOTRACED_CPUS=0,1 start_daemon "$T/mem.conf" "$T/mem.out"
grep -q '^\[info\] tracking aio starts at .*: 2 CPUs, [0-9]* tracepoints, rings of 64 KiB a CPU (128 KiB in all), [0-9]* files open, RSS [0-9]* MiB, ' \
        "$T/mem.out" || fail "the start line does not say the rings' memory"
taskset -c 0,1 "$WORKLOAD" --comm aio-faults --truth "$T/mem.truth" --dir "$T/w1" --pause-us 1000 ||
        fail "workload failed"
stop_daemon "$T/mem.out"
"$PYTHON3" "$top_srcdir/tests/compare.py" --trace "$T/mem.out" --truth "$T/mem.truth" --strict ||
        fail "in rings of 64 KiB, the calls are not all traced"
grep -q '^aiotraced: cpu .*(the rings: 136 KiB)$' "$T/mem.out.err" || fail "the exit stats do not say the rings' memory"
write_config "$T/mem.conf" 'watch = ( { comm = "aio-faults"; } );' "$CALLS" 'ring_memory = "100K";'
AIOTRACED_CPUS=0,1 "$AIOTRACED" --stdout -c "$T/mem.conf" >/dev/null 2>"$T/mem.err"
rc=$?
cat "$T/mem.err"
[ $rc = 3 ] || fail "a ring_memory too small: exit $rc, not 3"
grep -q '^aiotraced: ring_memory = 100 KiB gives each of 2 CPUs less than the smallest ring, 64 KiB: make it 128 KiB or more, or set ring_pages$' \
        "$T/mem.err" || fail "a ring_memory too small is not said"
AIOTRACED_CPUS=0,1 "$AIOTRACED" --check-config -c "$T/mem.conf" 2>&1 | grep -q 'less than the smallest ring' ||
        fail "--check-config does not refuse a ring_memory too small"

echo PASS
