#!/bin/bash
# metrics.path against real consumers: promtool accepts every line; a real node_exporter serves the file on
# loopback; every counter equals what the workloads did by their own truth, across a reload and the end of one
# process and the start of another under the same name; the histogram's buckets agree with the exact latencies
# of the request records within the stated error.  As root.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
command -v promtool >/dev/null || fail "promtool is missing: tests/deps.sh --tests installs prometheus"
exporter=$(command -v prometheus-node-exporter) ||
        fail "prometheus-node-exporter is missing: tests/deps.sh --tests installs it"

mkdir -p "$T/w" "$T/textfile"
prom="$T/textfile/aiotraced.prom"
scrape() { # OUT [COMMAND...]: node_exporter's textfile collector of $T/textfile, run under COMMAND, scraped once
        local out=$1 port=$((20000 + RANDOM % 20000)) pid
        shift
        "$@" "$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
                --collector.textfile.directory="$T/textfile" >"$out.log" 2>&1 &
        pid=$!
        for _ in $(seq 100); do
                curl -sf "http://127.0.0.1:$port/metrics" >"$out" 2>/dev/null && break
                sleep 0.05
        done
        kill "$pid"
        wait "$pid" 2>/dev/null
}
conf() { # SUMMARY_INTERVAL
        write_config "$T/m.conf" 'watch = ( { comm = "aio-metrics"; } );' 'drain_interval_ms = 5;' \
                'records = [ "syscalls", "requests", "summary" ];' "summary_interval = $1;" \
                "metrics = { path = \"$prom\"; };"
}

echo "== two workloads under one name, a reload between them: the file written each interval and at exit"
conf 1
start_daemon "$T/m.conf" "$T/m.out"
"$WORKLOAD" --comm aio-metrics --truth "$T/a.truth" --dir "$T/w" --pause-us 20000 --linger-ms 100 ||
        fail "workload failed"
sleep 1.3
[ -s "$prom" ] || fail "no metrics file after an interval"
cp "$prom" "$T/first.prom"
conf 2
kill -HUP "$DAEMON_PID"
"$WORKLOAD" --comm aio-metrics --truth "$T/b.truth" --dir "$T/w" --pause-us 20000 --linger-ms 100 ||
        fail "workload failed"
sleep 2.5 # an interval after the workload's end: its last summary is in the file
cp "$prom" "$T/last.prom"
stop_daemon "$T/m.out"
grep -q 'reloaded' "$T/m.out" || fail "the reload was not taken"
[ "$(ls -A "$T/textfile")" = "" ] || fail "left in the textfile directory after the stop: $(ls -A "$T/textfile")"
cp "$T/last.prom" "$prom"

echo "== promtool check metrics"
promtool check metrics <"$prom" || fail "promtool refuses the metrics"

echo "== every counter against the workloads' truth; the buckets against the exact latencies"
"$PYTHON3" "$top_srcdir/tests/compare_metrics.py" --metrics "$prom" --truth "$T/a.truth" --truth "$T/b.truth" \
        --trace "$T/m.out" --comm aio-metrics || fail "the metrics differ from the truth"
# no counter went backwards from the first interval's file to the last
"$PYTHON3" - "$T/first.prom" "$prom" <<'EOF' || fail "a counter went backwards"
import sys
def load(p):
    d = {}
    for line in open(p):
        if line.startswith('#') or not line.strip():
            continue
        k, v = line.rsplit(' ', 1)
        d[k] = float(v)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
back = [k for k in a if '_total' in k and b.get(k, 0) < a[k]]
print(f'{len(a)} samples after the first interval, {len(b)} at the end, {len(back)} went backwards')
sys.exit(1 if back or not any('_total' in k and '"aio-metrics"' in k for k in a) else 0)
EOF

echo "== node_exporter's textfile collector serves it"
scrape "$T/scraped"
grep -q '^node_textfile_scrape_error 0$' "$T/scraped" || { cat "$T/scraped.log"; fail "the collector had an error"; }
for name in aiotraced_requests_submitted_total aiotraced_requests_completed_total aiotraced_read_bytes_total \
        aiotraced_request_latency_seconds_bucket aiotraced_records_read_total aiotraced_ring_memory_bytes; do
        want=$(grep -c "^$name[{ ]" "$prom")
        got=$(grep -c "^$name[{ ]" "$T/scraped")
        [ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "$name: $got samples served, $want in the file"
done
grep "^aiotraced_requests_completed_total" "$T/scraped"

echo "== a directory that is not there: said at every interval, and the trace goes on; written once it is there"
write_config "$T/bad.conf" 'watch = ( { comm = "aio-metrics"; } );' 'summary_interval = 1;' \
        "metrics = { path = \"$T/missing/aiotraced.prom\"; };"
start_daemon "$T/bad.conf" "$T/bad.out"
sleep 2.3
mkdir "$T/missing"
sleep 1.2
stop_daemon "$T/bad.out"
grep 'metrics.path' "$T/bad.out"
[ "$(grep -c "metrics.path $T/missing/aiotraced.prom cannot be written: No such file or directory" "$T/bad.out")" -ge 2 ] ||
        fail "the failing metrics path is not said at every interval"
grep -q "metrics.path $T/missing/aiotraced.prom is written again" "$T/bad.out" ||
        fail "the directory made later was not written to"

echo "== --check-config: a metrics path that names a directory, or one in a directory not there yet, is said, not refused"
write_config "$T/chk.conf" "metrics = { path = \"$T/textfile\"; };"
"$AIOTRACED" --check-config -c "$T/chk.conf" >/dev/null 2>"$T/chk.err"
rc=$?
[ $rc = 0 ] && grep -q "metrics.path $T/textfile: is a directory of uid 0 (root): the metrics are not written while" "$T/chk.err" ||
        fail "--check-config with a directory as metrics.path: exit $rc, $(cat "$T/chk.err")"
write_config "$T/chk.conf" "metrics = { path = \"$T/nodir/aiotraced.prom\"; };"
"$AIOTRACED" --check-config -c "$T/chk.conf" >/dev/null 2>"$T/chk.err" || fail "--check-config refused a directory to come"
grep -q "metrics.path $T/nodir/aiotraced.prom: its directory does not exist: nothing is written until it does" \
        "$T/chk.err" || fail "--check-config did not say the directory is missing"

echo "== the file's mode and group: node_exporter's user reads it, another user does not"
chmod 755 "$T" "$T/textfile"
write_config "$T/own.conf" 'watch = ( { comm = "aio-metrics"; } );' 'summary_interval = 1;' \
        "metrics = { path = \"$prom\"; };"
start_daemon "$T/own.conf" "$T/own.out"
sleep 1.3
stat -c '%U:%G %a' "$prom"
if getent group prometheus >/dev/null; then
        [ "$(stat -c '%U:%G %a' "$prom")" = root:prometheus\ 640 ] || fail "the file is not root:prometheus 0640"
        setpriv --reuid=prometheus --regid=prometheus --init-groups cat "$prom" >/dev/null ||
                fail "node_exporter's user cannot read it"
        # node_exporter as Debian's package runs it, as its own user
        scrape "$T/scraped2" setpriv --reuid=prometheus --regid=prometheus --init-groups
        grep -q '^node_textfile_scrape_error 0$' "$T/scraped2" && grep -q '^aiotraced_records_read_total' "$T/scraped2" ||
                { cat "$T/scraped2.log"; fail "node_exporter, as its own user, does not serve the file"; }
fi
as_nobody cat "$prom" >/dev/null 2>&1 && fail "another user reads the metrics"
stop_daemon "$T/own.out"

echo "== what another user plants at the path or beside it (fs.protected_* off): never opened, never served"
unprotect_fs
pub=$T/pub
mkdir -m 1777 "$pub"
theirs=$T/theirs # a directory of theirs that all may write
mkdir -m 0777 "$theirs"
chown 65534:65534 "$theirs"
as_nobody mkfifo "$pub/aiotraced.prom.tmp" "$theirs/aiotraced.prom.tmp"
printf 'keep\n' >"$T/victim"
chmod 644 "$T/victim"
as_nobody ln "$T/victim" "$pub/aiotraced.prom" || fail "the hard link could not be planted"
as_nobody sh -c "umask 0; printf 'aiotraced_records_lost_total{FAKE=\"1\"} 999\n' >'$theirs/aiotraced.prom'"
for dir in "$pub" "$theirs"; do
        write_config "$T/plant.conf" 'watch = ( { comm = "aio-metrics"; } );' 'summary_interval = 1;' \
                "metrics = { path = \"$dir/aiotraced.prom\"; };"
        start_daemon "$T/plant.conf" "$T/plant.out"
        sleep 1.3
        ls -la "$dir"
        [ -f "$dir/aiotraced.prom" ] && [ "$(stat -c '%u %a' "$dir/aiotraced.prom")" = "0 640" ] ||
                fail "$dir: the metrics file is not root's, 0640"
        grep -q FAKE "$dir/aiotraced.prom" && fail "$dir: the planted series is served"
        grep -q '^aiotraced_records_read_total' "$dir/aiotraced.prom" || fail "$dir: no metrics in the file"
        [ -p "$dir/aiotraced.prom.tmp" ] || fail "$dir: the planted FIFO is gone"
        kill -TERM "$DAEMON_PID"
        for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.02; done
        kill -0 "$DAEMON_PID" 2>/dev/null && fail "$dir: SIGTERM did not stop the daemon within 2 s"
        wait "$DAEMON_PID" || fail "$dir: the daemon did not stop cleanly"
        DAEMON_PID=
done
[ "$(cat "$T/victim")" = keep ] || fail "the hard-linked file was written through"

echo "== what another user plants at the path (a FIFO, a symbolic link, a directory): the trace goes on, the plant and"
echo "   its owner are said at start and at each interval it keeps the file from being written; never written through"
for plant in fifo link dir; do
        for dir in "$pub" "$theirs"; do
                rm -f "$dir/aiotraced.prom"
                case $plant in
                fifo) as_nobody mkfifo "$dir/aiotraced.prom"; what="a FIFO" ;;
                link) as_nobody ln -s "$T/victim" "$dir/aiotraced.prom"; what="a symbolic link" ;;
                dir) as_nobody mkdir "$dir/aiotraced.prom"; what="a directory" ;;
                esac
                write_config "$T/plant.conf" 'watch = ( { comm = "aio-metrics"; } );' 'summary_interval = 1;' \
                        'records = [ "syscalls" ];' "metrics = { path = \"$dir/aiotraced.prom\"; };"
                start_daemon "$T/plant.conf" "$T/plant.out"
                grep -q "metrics.path $dir/aiotraced.prom: is $what of uid 65534 (nobody)" "$T/plant.out.err" ||
                        fail "$dir, $plant: the plant and its owner are not said at start: $(cat "$T/plant.out.err")"
                "$WORKLOAD" --comm aio-metrics --truth /dev/null --dir "$T/w" >/dev/null || fail "workload failed"
                sleep 1.3
                if [ $plant = dir ]; then
                        # a rename cannot replace a directory: said until it is gone, then written
                        grep -q "metrics.path $dir/aiotraced.prom cannot be written: .* ($what of uid 65534 (nobody) is there)" \
                                "$T/plant.out" || fail "$dir, $plant: the failing write does not say what is there"
                        as_nobody rmdir "$dir/aiotraced.prom"
                        sleep 1.2
                        grep -q "metrics.path $dir/aiotraced.prom is written again" "$T/plant.out" ||
                                fail "$dir, $plant: not written once the plant was gone"
                fi
                [ -f "$dir/aiotraced.prom" ] && [ ! -L "$dir/aiotraced.prom" ] &&
                        [ "$(stat -c '%u %a' "$dir/aiotraced.prom")" = "0 640" ] ||
                        fail "$dir, $plant: the metrics file is not root's, 0640"
                grep -q '^aiotraced_requests_submitted_total{comm="aio-metrics"' "$dir/aiotraced.prom" ||
                        fail "$dir, $plant: the trace's counts are not in the metrics"
                stop_daemon "$T/plant.out"
                grep -q '^\[aio-metrics - [0-9]* - [0-9]*\] io_submit' "$T/plant.out" || fail "$dir, $plant: nothing traced"
        done
done
[ "$(cat "$T/victim")" = keep ] || fail "the file a planted link names was written through"
restore_fs
echo PASS
