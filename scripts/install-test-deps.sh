#!/bin/sh
# System packages the test suite needs beyond Python and Rust, installed with apt-get where
# it is available (as root, or through sudo):
# - QEMU and the tools that build the guest's initramfs and data disk, for the real-kernel
#   test (python/tests/test_kernel_boot.py), which fails naming what is missing, and strace,
#   which checks the guest program's order of accesses on the host (test_kernel_tenants.py);
# - Valgrind (with its tool headers and static core, all in Debian's valgrind package) and
#   gcc, for `reclaimlab record` (python/tests/test_record.py, which fails naming them);
# - headless Chromium, which renders the HTML report (python/tests/test_report.py skips
#   with a message without it).
# Elsewhere it says what to install and leaves the rest of the test command to run.
set -u
missing=""
for tool in qemu-system-x86_64 busybox mkfs.ext4 depmod gcc strace; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
need_qemu=$missing
need_valgrind=""
command -v valgrind >/dev/null 2>&1 || { need_valgrind=valgrind; missing="$missing valgrind"; }
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: no apt-get; install by hand:$missing (QEMU, busybox-static, e2fsprogs, kmod, gcc, valgrind, chromium)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "install-test-deps: not root and no sudo; install by hand:$missing" >&2
        exit 0
    fi
fi
$SUDO apt-get update >/dev/null || echo "install-test-deps: apt-get update failed" >&2
if [ -n "$need_qemu" ]; then
    $SUDO apt-get install -y qemu-system-x86 qemu-utils busybox-static e2fsprogs kmod gcc libc6-dev strace \
        || echo "install-test-deps: QEMU tools not installed; the real-kernel test will fail" >&2
fi
if [ -n "$need_valgrind" ]; then
    $SUDO apt-get install -y valgrind gcc libc6-dev \
        || echo "install-test-deps: valgrind not installed; the recorder test will fail" >&2
fi
command -v chromium >/dev/null 2>&1 || $SUDO apt-get install -y chromium \
    || echo "install-test-deps: chromium not installed; the report render test will skip" >&2
exit 0
