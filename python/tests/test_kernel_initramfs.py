"""The initramfs builder (reclaimlab.kernel.initramfs): module closure, decompression,
depmod index, and the newc cpio archive the kernel unpacks."""

from __future__ import annotations

import gzip
import lzma
import shutil
import stat
from pathlib import Path

import pytest

from reclaimlab.kernel import KernelError, initramfs
from reclaimlab.kernel.fetch import load_tree

REL = "9.9.9-test"


def fake_kernel(root: Path, modules: dict[str, str], builtin: list[str]) -> None:
    """A minimal unpacked linux-image tree: image, config, .ko.xz modules, modules.builtin."""
    (root / "boot").mkdir(parents=True)
    (root / "boot" / f"vmlinuz-{REL}").write_bytes(b"kernel")
    (root / "boot" / f"config-{REL}").write_text("CONFIG_MEMCG=y\nCONFIG_LRU_GEN=y\n# CONFIG_DAMON is not set\nCONFIG_ZRAM=m\n")
    mdir = root / "lib" / "modules" / REL
    mdir.mkdir(parents=True)
    for name, sub in modules.items():
        p = mdir / "kernel" / sub / f"{name}.ko.xz"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(lzma.compress(f"module {name}".encode(), format=lzma.FORMAT_XZ))
    (mdir / "modules.builtin").write_text("".join(f"kernel/x/{b}.ko\n" for b in builtin))


def parse_newc(data: bytes) -> dict[str, tuple[int, bytes]]:
    """name -> (mode, data) of a newc cpio archive, stopping at TRAILER!!!."""
    out, off = {}, 0
    while True:
        assert data[off:off + 6] == b"070701", off
        fields = [int(data[off + 6 + 8 * i: off + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name = data[off + 110: off + 110 + namesize - 1].decode()
        off += 110 + namesize
        off += -off % 4
        body = data[off: off + size]
        off += size
        off += -off % 4
        if name == "TRAILER!!!":
            return out
        out[name] = (mode, body)


@pytest.fixture
def kernel(tmp_path):
    fake_kernel(tmp_path / "k", {"virtio_blk": "drivers/block", "ext4": "fs/ext4", "jbd2": "fs/jbd2",
                                 "mbcache": "fs", "crc16": "lib", "zram": "drivers/block/zram",
                                 "lz4_compress": "lib/lz4", "crc32c_generic": "crypto", "unused": "misc"},
                builtin=["virtio_pci"])
    return load_tree(tmp_path / "k")


DEPS = {"ext4": ["jbd2", "mbcache", "crc16"], "jbd2": [], "mbcache": [], "crc16": [], "virtio_blk": [],
        "zram": ["lz4_compress"], "lz4_compress": [], "crc32c_generic": []}


def test_resolve_takes_the_dependency_closure_and_skips_builtins(kernel):
    files = initramfs.resolve(kernel, deps=lambda p: DEPS[p.name.split(".ko")[0]])
    names = sorted(p.name.split(".ko")[0] for p in files)
    # virtio_pci is built in (modules.builtin), "unused" is wanted by nobody.
    assert names == ["crc16", "crc32c_generic", "ext4", "jbd2", "lz4_compress", "mbcache", "virtio_blk", "zram"]


def test_resolve_names_a_missing_module(kernel):
    with pytest.raises(KernelError, match="module nosuch is neither built in nor shipped"):
        initramfs.resolve(kernel, wanted=("ext4", "nosuch"), deps=lambda p: DEPS[p.name.split(".ko")[0]])


@pytest.mark.skipif(shutil.which("depmod") is None, reason="needs kmod's depmod (apt-get install kmod)")
def test_stage_decompresses_modules_and_indexes_them_with_depmod(kernel, tmp_path):
    busybox, wl = tmp_path / "busybox", tmp_path / "wl"
    busybox.write_bytes(b"\x7fELF busybox")
    wl.write_bytes(b"\x7fELF wl")
    files = initramfs.resolve(kernel, deps=lambda p: DEPS[p.name.split(".ko")[0]])
    root = tmp_path / "root"
    initramfs.stage(kernel, root, busybox, wl, files)
    mroot = root / "lib" / "modules" / REL
    ext4 = mroot / "kernel" / "fs" / "ext4" / "ext4.ko"
    assert ext4.read_bytes() == b"module ext4"          # .ko.xz decompressed
    assert not list(mroot.rglob("*.xz"))
    dep = (mroot / "modules.dep").read_text()
    assert "kernel/fs/ext4/ext4.ko:" in dep and "kernel/drivers/block/zram/zram.ko:" in dep
    assert (root / "init").stat().st_mode & stat.S_IXUSR
    assert (root / "init").read_text().startswith("#!/bin/busybox sh")
    assert (root / "bin" / "busybox").read_bytes() == b"\x7fELF busybox"
    assert (root / "wl").read_bytes() == b"\x7fELF wl"


def test_cpio_newc_round_trips_files_dirs_and_symlinks(tmp_path):
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "busybox").write_bytes(b"abcde")  # odd length: exercises the 4-byte padding
    (root / "bin" / "sh").symlink_to("busybox")
    (root / "init").write_text("#!/bin/sh\n")
    (root / "init").chmod(0o755)
    out = tmp_path / "initrd.gz"
    initramfs.cpio_newc(root, out)
    entries = parse_newc(gzip.decompress(out.read_bytes()))
    assert set(entries) == {"bin", "bin/busybox", "bin/sh", "init"}
    assert entries["bin/busybox"][1] == b"abcde"
    assert stat.S_ISLNK(entries["bin/sh"][0]) and entries["bin/sh"][1] == b"busybox"
    assert stat.S_ISDIR(entries["bin"][0])
    assert entries["init"][0] & 0o777 == 0o755
    # Deterministic: the same tree gives the same bytes (gzip mtime 0).
    again = tmp_path / "again.gz"
    initramfs.cpio_newc(root, again)
    assert again.read_bytes() == out.read_bytes()


def test_load_tree_reads_the_config(kernel):
    assert kernel.release == REL
    assert kernel.has("LRU_GEN") and kernel.has("ZRAM") and not kernel.has("DAMON")


def test_load_tree_rejects_a_directory_without_an_image(tmp_path):
    with pytest.raises(KernelError, match="no boot/vmlinuz"):
        load_tree(tmp_path)


def test_a_kernel_without_the_feature_is_refused_before_booting(tmp_path):
    from reclaimlab.kernel.run import Setup, check_features

    fake_kernel(tmp_path / "k", {}, builtin=[])
    cfg = tmp_path / "k" / "boot" / f"config-{REL}"
    cfg.write_text("CONFIG_MEMCG=y\n# CONFIG_LRU_GEN is not set\n# CONFIG_ZRAM is not set\n")
    k = load_tree(tmp_path / "k")
    with pytest.raises(KernelError, match=f"--mglru on: kernel {REL} is built without CONFIG_LRU_GEN"):
        check_features(k, Setup(workload="seqloop", mglru="on"), zram=0)
    with pytest.raises(KernelError, match="without CONFIG_ZRAM"):
        check_features(k, Setup(workload="anon"), zram=1 << 20)
    check_features(k, Setup(workload="seqloop"), zram=0)  # the kernel's default LRU: fine
