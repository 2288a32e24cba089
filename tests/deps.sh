#!/bin/sh
# Install what building aiotraced needs on Debian 12 (as root); with --tests, also what its test suite needs
# (tests/run-suite.sh: the live tests, containers, the package, valgrind, the fuzzers).
set -eu
export DEBIAN_FRONTEND=noninteractive
build="build-essential autoconf automake pkg-config linux-libc-dev libtraceevent-dev libconfig-dev libsystemd-dev
       systemd clang libbpf-dev bpftool"
tests="python3 ca-certificates libclang-rt-14-dev systemd-container groff-base valgrind
       dpkg-dev debhelper fakeroot lintian debootstrap"
case "${1:-}" in
"") ;;
--tests) build="$build $tests" ;;
*) echo "usage: tests/deps.sh [--tests]" >&2; exit 2 ;;
esac
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $build
