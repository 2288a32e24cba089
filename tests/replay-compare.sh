#!/bin/bash
# Whether two builds write the same bytes for the same records: a dump of every kind of call and request (AIO's
# idioms, completions reaped in user space, a burst abandoned at io_destroy, io_uring's workload), recorded live
# with NEW's daemon (as root), replayed through OLD's and NEW's bench-replay in every format, with the requests'
# files behind a stand-in /proc and file summaries on.  For a change meant to keep the output as it was:
#     tests/replay-compare.sh OLD_BUILD_DIR NEW_BUILD_DIR
# (each a configured and built tree with tests/bench-replay, tests/aio-workload and tests/uring-workload).
set -u
OLD=$(cd "${1:?old build dir}" && pwd) NEW=$(cd "${2:?new build dir}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
D=$(mktemp -d /tmp/aiotraced-replay.XXXXXX)
trap 'rm -rf "$D"' EXIT
mkdir "$D/w"
cat >"$D/g.conf" <<'CONF'
watch = ( { comm = "aio-g*"; }, { comm = "uring-g"; } );
records = [ "syscalls", "requests", "summary" ];
summary_by = [ "process", "file" ];
drain_interval_ms = 5;
capture = "bpf";
CONF
"$NEW/aiotraced" --stdout -c "$D/g.conf" --dump "$D/g.dump" >"$D/live.out" 2>"$D/live.err" &
P=$!
for _ in $(seq 500); do grep -q 'tracking aio starts' "$D/live.out" && break; sleep 0.01; done
"$NEW/tests/aio-workload" --comm aio-g1 --truth /dev/null --dir "$D/w"
"$NEW/tests/aio-workload" --comm aio-g2 --idiom 2 --rounds 50 --truth /dev/null --dir "$D/w"
"$NEW/tests/aio-workload" --comm aio-g3 --user-reap 20 --truth /dev/null --dir "$D/w"
[ -x "$NEW/tests/uring-workload" ] && "$NEW/tests/uring-workload" --comm uring-g --dir "$D/w" --truth /dev/null
"$NEW/tests/aio-workload" --comm aio-g4 --burst 40 --truth /dev/null --dir "$D/w"
sleep 0.3
kill -INT "$P"
wait "$P" || { cat "$D/live.err"; exit 1; }
# each file a request named, behind a link standing for /proc/PID/fd/N
sed -n 's/^\[[^]]* - \([0-9]*\)\] request [a-z]*.*: op = [a-z_]*, fd = \([0-9]*\), path = \(\/[^,]*\),.*/\1 \2 \3/p' \
        "$D/live.out" | sort -u | while read -r pid fd path; do
        mkdir -p "$D/proc/$pid/fd"
        ln -sf "$path" "$D/proc/$pid/fd/$fd"
done
differ=0
for f in text json json+message "journal fields"; do
        for b in OLD NEW; do
                REPLAY_FILES=1 REPLAY_PROC_ROOT="$D/proc" top_srcdir="$src" REPLAY_FORMAT="$f" \
                        REPLAY_OUTPUT="$D/$b.$f" "${!b}/tests/bench-replay" "$D/g.dump" 0 >/dev/null 2>&1
        done
        if cmp -s "$D/OLD.$f" "$D/NEW.$f"; then
                echo "$f: identical, $(wc -c <"$D/NEW.$f") bytes"
        else
                echo "$f: DIFFERS"
                diff "$D/OLD.$f" "$D/NEW.$f" | head -5
                differ=1
        fi
done
echo "$(grep -c '^\[.*\] request ' "$D/NEW.text") requests ($(grep -c 'request .*path = /' "$D/NEW.text") with a path)," \
        "$(grep -c '^\[file' "$D/NEW.text") file summaries, $(grep -c '\] io_' "$D/NEW.text") calls"
exit $differ
