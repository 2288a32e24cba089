#!/bin/bash
# Selection by what operators name: a cgroup (glob, and one made after the start), an executable (copied to two
# paths, renamed threads, replaced under its name), a user, the children of a pid, and keys combined in one
# entry.  Each with the in-kernel capture and read afterwards; every watched call exact against the workload's
# truth, every unwatched process absent.  (Units: tests/systemd.sh, under a real systemd.)
. "${top_srcdir:?}/tests/lib.sh"
need_tracing

compare() {
        "$PYTHON3" "$top_srcdir/tests/compare.py" "$@" || fail "trace differs from the ground truth"
}

CG=$(findmnt -n -t cgroup2 -o TARGET | head -1)
if [ -z "$CG" ]; then
        mkdir -p /sys/fs/cgroup/unified 2>/dev/null && mount -t cgroup2 none /sys/fs/cgroup/unified 2>/dev/null &&
                CG=/sys/fs/cgroup/unified
fi
[ -n "$CG" ] || { echo "SKIP: no cgroup v2 hierarchy, and none can be mounted"; exit 77; }
SEL=aiosel$$
cleanup_cgroups() {
        for g in "$CG/$SEL"-*; do [ -d "$g" ] && rmdir "$g" 2>/dev/null; done
        cleanup
}
trap cleanup_cgroups EXIT

in_cgroup() { # CGROUP WORKLOAD-ARGS...: the workload run inside the cgroup from its first instruction
        local g=$1
        shift
        sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$g" "$WORKLOAD" "$@"
}

mkdir -p "$T/bin1" "$T/bin2" "$T/w" "$T/wn"
chmod 777 "$T/wn"
cp "$WORKLOAD" "$T/bin1/aio-workload"
cp "$WORKLOAD" "$T/bin2/aio-workload"
chmod 755 "$T" "$T/bin1" "$T/bin2" "$T/bin1/aio-workload" "$T/bin2/aio-workload"
nobody_uid=$(id -u nobody)

for cap in bpf remote-read; do
        C="$T/$cap"
        exact=
        [ "$cap" = bpf ] && exact=--strict

        echo "== $cap cgroup = glob: a matching cgroup traced, its sibling absent; one made after the start found"
        mkdir "$CG/$SEL-match-1" "$CG/$SEL-other"
        write_config "$C.cg.conf" "$CALLS" "capture = \"$cap\";" "watch = ( { cgroup = \"/$SEL-match-*\"; } );" \
                'drain_interval_ms = 5;'
        start_daemon "$C.cg.conf" "$C.cg.out"
        in_cgroup "$SEL-other" --comm aio-sel --truth "$C.cg-other.truth" --dir "$T/w" || fail "workload failed"
        in_cgroup "$SEL-match-1" --comm aio-sel --truth "$C.cg-1.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
        mkdir "$CG/$SEL-match-2"
        sleep 1.5 # the capture looks for new cgroups once a second (the README's known limits)
        in_cgroup "$SEL-match-2" --comm aio-sel --truth "$C.cg-2.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
        stop_daemon "$C.cg.out"
        compare --trace "$C.cg.out" --truth "$C.cg-1.truth" --truth "$C.cg-2.truth" --unwatched "$C.cg-other.truth" \
                $exact
        if [ "$cap" = bpf ]; then
                grep -q "new cgroups watched" "$C.cg.out" || fail "the cgroup made later was not said to be watched"
        fi
        rmdir "$CG/$SEL-match-1" "$CG/$SEL-match-2" "$CG/$SEL-other"

        echo "== $cap exe: the watched copy traced, renamed threads too; the same program elsewhere absent"
        write_config "$C.exe.conf" "$CALLS" "capture = \"$cap\";" "watch = ( { exe = \"$T/bin1/aio-workload\"; } );" \
                'drain_interval_ms = 5;'
        start_daemon "$C.exe.conf" "$C.exe.out"
        "$T/bin2/aio-workload" --comm aio-sel --truth "$C.exe-other.truth" --dir "$T/w" || fail "workload failed"
        "$T/bin1/aio-workload" --comm aio-sel-renamed --truth "$C.exe-1.truth" --dir "$T/w" --pause-us 20000 ||
                fail "workload failed"
        # replaced as a package upgrade replaces it: a new file renamed over the old
        cp "$WORKLOAD" "$T/bin1/aio-workload.new" && mv "$T/bin1/aio-workload.new" "$T/bin1/aio-workload"
        "$T/bin1/aio-workload" --comm aio-sel --truth "$C.exe-2.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
        stop_daemon "$C.exe.out"
        compare --trace "$C.exe.out" --truth "$C.exe-1.truth" --truth "$C.exe-2.truth" \
                --unwatched "$C.exe-other.truth" $exact

        echo "== $cap exe given as a symbolic link: said; the file it names followed across an upgrade of that file"
        ln -sfn "$T/bin1/aio-workload" "$T/bin1/link"
        write_config "$C.link.conf" "$CALLS" "capture = \"$cap\";" "watch = ( { exe = \"$T/bin1/link\"; } );" \
                'drain_interval_ms = 5;'
        start_daemon "$C.link.conf" "$C.link.out"
        grep -q "watch exe $T/bin1/aio-workload: $T/bin1/link is a symbolic link: watched as the file it names now, $T/bin1/aio-workload" \
                "$C.link.out.err" || { cat "$C.link.out.err"; fail "the link was not said"; }
        "$T/bin1/link" --comm aio-sel --truth "$C.link-1.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
        cp "$WORKLOAD" "$T/bin1/aio-workload.new" && mv "$T/bin1/aio-workload.new" "$T/bin1/aio-workload"
        "$T/bin1/link" --comm aio-sel --truth "$C.link-2.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
        "$T/bin2/aio-workload" --comm aio-sel --truth "$C.link-other.truth" --dir "$T/w" || fail "workload failed"
        stop_daemon "$C.link.out"
        compare --trace "$C.link.out" --truth "$C.link-1.truth" --truth "$C.link-2.truth" \
                --unwatched "$C.link-other.truth" $exact

        echo "== $cap keys combine: exe and comm both, or not at all"
        write_config "$C.and.conf" "$CALLS" "capture = \"$cap\";" \
                "watch = ( { exe = \"$T/bin1/aio-workload\"; comm = \"aio-and\"; } );" 'drain_interval_ms = 5;'
        start_daemon "$C.and.conf" "$C.and.out"
        "$T/bin2/aio-workload" --comm aio-and --truth "$C.and-other-exe.truth" --dir "$T/w" || fail "workload failed"
        "$T/bin1/aio-workload" --comm aio-nand --truth "$C.and-other-comm.truth" --dir "$T/w" || fail "workload failed"
        "$T/bin1/aio-workload" --comm aio-and --truth "$C.and.truth" --dir "$T/w" --pause-us 20000 ||
                fail "workload failed"
        stop_daemon "$C.and.out"
        compare --trace "$C.and.out" --truth "$C.and.truth" --unwatched "$C.and-other-exe.truth" \
                --unwatched "$C.and-other-comm.truth" $exact

        echo "== $cap user: the workload as nobody traced, as root absent"
        write_config "$C.user.conf" "$CALLS" "capture = \"$cap\";" 'watch = ( { user = "nobody"; } );' \
                'drain_interval_ms = 5;'
        start_daemon "$C.user.conf" "$C.user.out"
        "$WORKLOAD" --comm aio-sel --truth "$C.user-root.truth" --dir "$T/w" || fail "workload failed"
        setpriv --reuid="$nobody_uid" --regid="$(id -g nobody)" --clear-groups "$T/bin1/aio-workload" \
                --comm aio-sel --truth "$T/wn/user.truth" --dir "$T/wn" --pause-us 20000 || fail "workload failed as nobody"
        stop_daemon "$C.user.out"
        compare --trace "$C.user.out" --truth "$T/wn/user.truth" --unwatched "$C.user-root.truth" $exact

        echo "== $cap a process of a watched user gone before the daemon read its records"
        # The capture decided at each call: every call is there.  Read afterwards the daemon decides from /proc,
        # which no longer has the process: not traced, and its records counted as unselectable.
        start_daemon "$C.user.conf" "$C.gone.out"
        kill -STOP "$DAEMON_PID"
        setpriv --reuid="$nobody_uid" --regid="$(id -g nobody)" --clear-groups "$T/bin1/aio-workload" \
                --comm aio-sel --truth "$T/wn/gone.truth" --dir "$T/wn" || fail "workload failed as nobody"
        kill -CONT "$DAEMON_PID"
        stop_daemon "$C.gone.out"
        unselectable=$(stat_of "$C.gone.out" unselectable)
        if [ "$cap" = bpf ]; then
                compare --trace "$C.gone.out" --truth "$T/wn/gone.truth" $exact
                [ "$unselectable" = 0 ] || fail "the capture counted $unselectable records unselectable"
        else
                gone_pid=$(sed -n 's/^process pid=\([0-9]*\) .*/\1/p' "$T/wn/gone.truth")
                grep -q "^\[aio-sel - $gone_pid - " "$C.gone.out" &&
                        fail "a process gone before it could be checked was traced"
                calls=$(grep -c '^call ' "$T/wn/gone.truth")
                [ "$unselectable" -ge "$calls" ] ||
                        fail "unselectable = $unselectable, fewer than the $calls calls of the gone process"
                echo "read afterwards: $unselectable records of the gone process counted unselectable ($calls calls)"
        fi

        echo "== $cap children = true: a child, and a grandchild forked after a reload, each from its first call"
        # Read afterwards, a new process or thread is followed once its fork record is processed: each waits a
        # little first (the README's known limits).
        delay=0
        [ "$cap" = remote-read ] && delay=300
        rm -f "$T/go" "$T/go2" "$T/b-ready"
        # P (watched) runs the child workload, then forks B, which waits for the reload before it forks the
        # grandchild: B was followed under the old list and must still be under the new one
        bash -c 'until [ -e "$0/go" ]; do sleep 0.02; done
                 "$1" --comm aio-sel --truth "$0/child.truth" --dir "$0/w" --start-delay-ms "$2" --thread-delay-ms "$2" \
                         --pause-us 20000 || exit 1
                 bash -c "touch \"\$0/b-ready\"; until [ -e \"\$0/go2\" ]; do sleep 0.02; done
                          \"\$1\" --comm aio-sel --truth \"\$0/grandchild.truth\" --dir \"\$0/w\" --start-delay-ms \"\$2\" \
                                --thread-delay-ms \"\$2\"; true" "$0" "$1" "$2" || exit 1
                 true' "$T" "$WORKLOAD" "$delay" &
        P=$!
        write_config "$C.kids.conf" "$CALLS" "capture = \"$cap\";" "watch = ( { pid = $P; children = true; } );" \
                'drain_interval_ms = 5;'
        start_daemon "$C.kids.conf" "$C.kids.out"
        "$WORKLOAD" --comm aio-sel --truth "$C.kids-other.truth" --dir "$T/w" || fail "workload failed"
        touch "$T/go"
        for _ in $(seq 1000); do [ -e "$T/b-ready" ] && break; sleep 0.01; done
        # another entry first: the children's entry changes its place in the capture's masks
        write_config "$C.kids.conf" "$CALLS" "capture = \"$cap\";" \
                "watch = ( { comm = \"nothing-here\"; uid = 12345; }, { pid = $P; children = true; } );" \
                'drain_interval_ms = 5;'
        kill -HUP "$DAEMON_PID"
        wait_for "$C.kids.out" '^\[info\] reloaded'
        touch "$T/go2"
        wait $P || fail "the children failed"
        stop_daemon "$C.kids.out"
        compare --trace "$C.kids.out" --truth "$T/child.truth" --truth "$T/grandchild.truth" \
                --unwatched "$C.kids-other.truth" $exact
        if [ "$cap" = remote-read ]; then
                grep -q "^\[info\] following process" "$C.kids.out" || fail "no child was said to be followed"
        fi
        rm -f "$T/child.truth" "$T/grandchild.truth"
done

echo "== cgroup entries over 2,000 cgroups: bounded; the tree read at start and only after cgroups are made (none"
echo "   while idle); a matching cgroup made later traced from its first call; a comm entry beside them traced too"
mkdir "$CG/$SEL-many"
(cd "$CG/$SEL-many" && for i in $(seq 40); do mkdir "n$i" && for j in $(seq 50); do mkdir "n$i/m$j"; done; done)
entries=
for i in $(seq 10); do entries="$entries { cgroup = \"/$SEL-many/n$i/nothing-$i-*\"; },"; done
many="{ cgroup = \"/x0\"; }"
for i in $(seq 64); do many="$many, { cgroup = \"/x$i\"; }"; done
write_config "$T/many.conf" "watch = ( $many );"
"$AIOTRACED" --check-config -c "$T/many.conf" >/dev/null 2>"$T/many.err" && fail "65 cgroup entries were taken"
grep -q 'the watch list has 65 cgroup entries: at most 64' "$T/many.err" || fail "the bound was not said: $(cat "$T/many.err")"
write_config "$T/cgs.conf" "$CALLS" 'capture = "bpf";' 'drain_interval_ms = 5;' \
        "watch = ( $entries { cgroup = \"/$SEL-late-*\"; }, { comm = \"aio-beside\"; } );"
start_daemon "$T/cgs.conf" "$T/cgs.out"
sleep 3 # idle: nothing made, nothing read
mkdir "$CG/$SEL-late-1"
sleep 1.5 # the next look, at most a second later
in_cgroup "$SEL-late-1" --comm aio-sel --truth "$T/late.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
"$WORKLOAD" --comm aio-beside --truth "$T/beside.truth" --dir "$T/w" --pause-us 20000 || fail "workload failed"
stop_daemon "$T/cgs.out"
rmdir "$CG/$SEL-late-1"
compare --trace "$T/cgs.out" --truth "$T/late.truth" --truth "$T/beside.truth" --strict
looks=$(sed -n 's/^aiotraced: cgroup entries: the cgroup tree was read \([0-9]*\) times.*/\1/p' "$T/cgs.out.err")
echo "the cgroup tree was read ${looks:-?} times"
[ -n "$looks" ] && [ "$looks" -le 3 ] || fail "the cgroup tree was read ${looks:-an unknown number of} times, not at start and after the mkdir alone"
find "$CG/$SEL-many" -depth -type d -exec rmdir {} +
echo "PASS"
