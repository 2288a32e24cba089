#!/bin/sh
# Install what building aiotraced needs on Debian 12 (as root); with --tests, also what its test suite needs
# (tests/run-suite.sh: the live tests, containers, the package, valgrind, the fuzzers).
set -eu
export DEBIAN_FRONTEND=noninteractive
build="build-essential autoconf automake pkg-config linux-libc-dev libtraceevent-dev libconfig-dev libsystemd-dev
       systemd clang libbpf-dev bpftool"
tests="python3 ca-certificates libclang-rt-14-dev systemd-container groff-base valgrind
       dpkg-dev debhelper fakeroot lintian debootstrap prometheus prometheus-node-exporter curl
       systemd-journal-remote fio qemu-utils mariadb-server sysbench strace liburing-dev"
case "${1:-}" in
"") ;;
--tests) build="$build $tests" ;;
*) echo "usage: tests/deps.sh [--tests]" >&2; exit 2 ;;
esac
apt-get update -q
# Daemons among them (prometheus, its node exporter) are run by the tests that need them, not left running by
# their packages: invoke-rc.d asks policy-rc.d, and 101 says no.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
        trap 'rm -f "$policy"' EXIT
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
fi
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $build
