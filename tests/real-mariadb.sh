#!/bin/bash
# MariaDB from Debian under sysbench, started under strace -f -y, an independent decoder, both ways its InnoDB
# does asynchronous I/O: native AIO (innodb_linux_aio = aio) and io_uring (what 10.11 picks by default).  O_DIRECT,
# a small buffer pool and small table caches (so that tablespaces are closed and opened again).
#  - aio: every call aiotraced reports is strace's, field by field; every request completed, with the path
#    strace gave its fd; the summaries, by process and by file, add up to the request records.
#  - io_uring: as many requests as strace's io_uring_enter calls say were submitted, every one completed, each
#    with its file's path in the datadir; the summaries add up.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
for tool in mariadbd mariadb-install-db mariadb-admin sysbench strace; do
        command -v $tool >/dev/null || { echo "SKIP: $tool is not installed (tests/deps.sh --tests)"; exit 77; }
done
mariadbd --help --verbose 2>/dev/null | grep -q 'innodb-linux-aio' ||
        { echo "SKIP: this mariadbd has no innodb_linux_aio"; exit 77; }
SECS=${MARIADB_SECS:-20}
STRACE_PID=
trap '[ -n "$STRACE_PID" ] && { pkill -9 -P "$STRACE_PID"; kill -9 "$STRACE_PID"; } 2>/dev/null; cleanup' EXIT

run() { # MODE SYSCALLS: MariaDB with innodb_linux_aio = MODE under strace of SYSCALLS, traced into $T/MODE.json
        local mode=$1 syscalls=$2 DB=$T/$1
        mkdir -p "$DB"
        mariadb-install-db --no-defaults --datadir="$DB/data" --user=root --auth-root-authentication-method=normal \
                --skip-test-db >"$DB/install.log" 2>&1 || { cat "$DB/install.log"; fail "mariadb-install-db"; }
        cat >"$DB/my.cnf" <<EOF
[mariadbd]
datadir=$DB/data
socket=$DB/sock
skip-networking
user=root
pid-file=$DB/mariadbd.pid
log-error=$DB/mariadbd.err
skip-log-bin
innodb_linux_aio=$mode
innodb_use_native_aio=1
innodb_flush_method=O_DIRECT
innodb_buffer_pool_size=16M
innodb_log_file_size=16M
innodb_open_files=10
table_open_cache=10
EOF
        local sb=(--mysql-socket="$DB/sock" --mysql-user=root --tables=8 --table-size=2000)
        write_config "$T/$mode.conf" 'capture = "bpf";' 'watch = ( { exe = "/usr/sbin/mariadbd"; } );' \
                'records = [ "syscalls", "requests", "summary" ];' 'summary_by = [ "process", "file" ];' \
                'summary_files = 5;' 'ring_pages = 1024;' 'drain_interval_ms = 5;' 'output = { format = "json"; };'
        start_daemon_json "$T/$mode.conf" "$T/$mode.json"
        # only the traced calls stop the program (seccomp), so that strace slows it no more than it must
        strace -f -ff -y --seccomp-bpf -e trace="$syscalls" -e verbose=all -e abbrev=none -X raw -o "$T/$mode.st" \
                mariadbd --defaults-file="$DB/my.cnf" &
        STRACE_PID=$!
        for _ in $(seq 600); do
                [ -S "$DB/sock" ] && break
                kill -0 "$STRACE_PID" 2>/dev/null || { cat "$DB/mariadbd.err"; fail "mariadbd exited at start"; }
                sleep 0.1
        done
        [ -S "$DB/sock" ] || fail "mariadbd did not start within 60 s"
        grep -q "InnoDB: Using $([ "$mode" = aio ] && echo Linux native AIO || echo io_uring)" "$DB/mariadbd.err" ||
                { grep InnoDB "$DB/mariadbd.err"; fail "InnoDB does not say it uses $mode"; }
        mariadb --socket="$DB/sock" -uroot -e 'create database sbtest' || fail "create database"
        sysbench oltp_read_write "${sb[@]}" prepare >"$DB/prepare.log" || fail "sysbench prepare"
        sysbench oltp_read_write "${sb[@]}" --threads=4 --time="$SECS" run >"$DB/run.log" || fail "sysbench run"
        grep -E 'transactions:|queries:' "$DB/run.log"
        mariadb-admin --socket="$DB/sock" -uroot shutdown || fail "mariadb-admin shutdown"
        wait "$STRACE_PID" || fail "mariadbd (under strace) did not exit cleanly"
        STRACE_PID=
        stop_daemon "$T/$mode.json"
}

echo "== native AIO: every call as strace decodes it"
run aio io_setup,io_submit,io_getevents,io_pgetevents,io_cancel,io_destroy
"$PYTHON3" "$top_srcdir/tests/compare_strace.py" --trace "$T/aio.json" --strace "$T/aio.st" ||
        fail "aiotraced and strace differ"

echo "== io_uring: as many requests as io_uring_enter submitted, each completed with its path"
run io_uring io_uring_setup,io_uring_enter,io_uring_register
"$PYTHON3" "$top_srcdir/tests/compare_strace.py" --trace "$T/io_uring.json" --strace "$T/io_uring.st" \
        --uring-datadir "$T/io_uring/data" || fail "aiotraced and strace differ"
echo PASS
