#!/bin/sh
# Install what building and testing aiotraced needs on Debian 12 (run as root).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
        build-essential autoconf automake pkg-config linux-libc-dev \
        libtraceevent-dev libconfig-dev python3 ca-certificates \
        clang libclang-rt-14-dev libbpf-dev bpftool libsystemd-dev systemd systemd-container groff-base valgrind
