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
stop_daemon "$T/m.out"
grep -q 'reloaded' "$T/m.out" || fail "the reload was not taken"
if [ -e "$prom.tmp" ]; then fail "the temporary file was left behind"; fi

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
port=$((20000 + RANDOM % 20000))
"$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$T/textfile" >"$T/exporter.log" 2>&1 &
exporter_pid=$!
for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$port/metrics" >"$T/scraped" 2>/dev/null && break
        sleep 0.05
done
kill "$exporter_pid"
wait "$exporter_pid" 2>/dev/null
grep -q '^node_textfile_scrape_error 0$' "$T/scraped" || { cat "$T/exporter.log"; fail "the collector had an error"; }
for name in aiotraced_requests_submitted_total aiotraced_requests_completed_total aiotraced_read_bytes_total \
        aiotraced_request_latency_seconds_bucket aiotraced_records_read_total aiotraced_ring_memory_bytes; do
        want=$(grep -c "^$name[{ ]" "$prom")
        got=$(grep -c "^$name[{ ]" "$T/scraped")
        [ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "$name: $got samples served, $want in the file"
done
grep "^aiotraced_requests_completed_total" "$T/scraped"

echo "== a directory that is not there: said once, and the trace goes on"
write_config "$T/bad.conf" 'watch = ( { comm = "aio-metrics"; } );' 'summary_interval = 1;' \
        "metrics = { path = \"$T/missing/aiotraced.prom\"; };"
start_daemon "$T/bad.conf" "$T/bad.out"
sleep 2.3
stop_daemon "$T/bad.out"
[ "$(grep -c "metrics.path $T/missing/aiotraced.prom cannot be written: No such file or directory" "$T/bad.out")" = 1 ] ||
        fail "the failing metrics path is not said exactly once"
echo PASS
