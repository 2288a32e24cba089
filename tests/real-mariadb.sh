#!/bin/bash
# MariaDB from Debian under sysbench, InnoDB on native AIO (innodb_linux_aio = aio: 10.11 picks io_uring by
# default), O_DIRECT, a small buffer pool and small table caches (so that tablespaces are closed and opened
# again), started under strace -f -y, an independent decoder of the same calls.  Every call aiotraced reports
# is strace's, field by field; every request completed, with the path strace gave its fd; the summaries, by
# process and by file, add up to the request records.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
for tool in mariadbd mariadb-install-db mariadb-admin sysbench strace; do
        command -v $tool >/dev/null || { echo "SKIP: $tool is not installed (tests/deps.sh --tests)"; exit 77; }
done
mariadbd --help --verbose 2>/dev/null | grep -q 'innodb-linux-aio' ||
        { echo "SKIP: this mariadbd has no innodb_linux_aio"; exit 77; }

DB=$T/db
mkdir -p "$DB"
mariadb-install-db --no-defaults --datadir="$DB/data" --user=root --auth-root-authentication-method=normal \
        --skip-test-db >"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "mariadb-install-db"; }
cat >"$DB/my.cnf" <<EOF
[mariadbd]
datadir=$DB/data
socket=$DB/sock
skip-networking
user=root
pid-file=$DB/mariadbd.pid
log-error=$DB/mariadbd.err
skip-log-bin
innodb_linux_aio=aio
innodb_use_native_aio=1
innodb_flush_method=O_DIRECT
innodb_buffer_pool_size=16M
innodb_log_file_size=16M
innodb_open_files=10
table_open_cache=10
EOF
SB=(--mysql-socket="$DB/sock" --mysql-user=root --tables=8 --table-size=2000)
SECS=${MARIADB_SECS:-20}

write_config "$T/m.conf" 'capture = "bpf";' 'watch = ( { exe = "/usr/sbin/mariadbd"; } );' \
        'records = [ "syscalls", "requests", "summary" ];' 'summary_by = [ "process", "file" ];' \
        'summary_files = 5;' 'ring_pages = 1024;' 'output = { format = "json"; };'
start_daemon_json "$T/m.conf" "$T/m.json"
# only the AIO calls stop the program (seccomp), so that strace slows it no more than it must
strace -f -ff -y --seccomp-bpf -e trace=io_setup,io_submit,io_getevents,io_pgetevents,io_cancel,io_destroy \
        -e verbose=all -e abbrev=none -X raw -o "$T/st" mariadbd --defaults-file="$DB/my.cnf" &
STRACE_PID=$!
for _ in $(seq 600); do
        [ -S "$DB/sock" ] && break
        kill -0 "$STRACE_PID" 2>/dev/null || { cat "$DB/mariadbd.err"; fail "mariadbd exited at start"; }
        sleep 0.1
done
[ -S "$DB/sock" ] || fail "mariadbd did not start within 60 s"
mariadb --socket="$DB/sock" -uroot -e 'create database sbtest' || fail "create database"
sysbench oltp_read_write "${SB[@]}" prepare >"$T/prepare.log" || fail "sysbench prepare"
sysbench oltp_read_write "${SB[@]}" --threads=4 --time="$SECS" run >"$T/run.log" || fail "sysbench run"
grep -E 'transactions:|queries:' "$T/run.log"
mariadb-admin --socket="$DB/sock" -uroot shutdown || fail "mariadb-admin shutdown"
wait "$STRACE_PID" || fail "mariadbd (under strace) did not exit cleanly"
stop_daemon "$T/m.json"

"$PYTHON3" "$top_srcdir/tests/compare_strace.py" --trace "$T/m.json" --strace "$T/st" ||
        fail "aiotraced and strace differ"
echo PASS
