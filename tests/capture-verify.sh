#!/bin/bash
# Every program of the in-kernel capture passes this kernel's verifier, the ones kept for older kernels too:
# the daemon loads only those its kernel needs, so its own runs here never load the "_probed" twins of the
# programs that read files through bpf_rdonly_cast, which kernels without that kfunc get.
. "${top_srcdir:?}/tests/lib.sh"
need_tracing
obj=$top_builddir/bpf/capture.bpf.o
[ -f "$obj" ] || { echo "SKIP: built without the in-kernel capture (--enable-bpf)"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
command -v bpftool >/dev/null || fail "no bpftool, which the build used"

# loaded and pinned in a bpffs of a mount namespace of its own: released when it ends
mkdir -p "$T/bpffs"
unshare -m bash -c 'mount -t bpf bpf "$1" && bpftool prog loadall "$2" "$1/p" && ls "$1/p"' _ "$T/bpffs" "$obj" \
        >"$T/loaded" 2>"$T/err" || { tail -n 40 "$T/err"; fail "a program of the capture was refused"; }
echo "== $(wc -l <"$T/loaded") programs passed the verifier"
for prog in exit_io_submit exit_io_submit_probed uring_submit uring_submit_probed uring_complete \
        uring_complete_probed aio_dio_begin; do
        grep -qx "$prog" "$T/loaded" || fail "$prog was not among the programs loaded"
done
echo PASS
