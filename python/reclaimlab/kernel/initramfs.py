"""The guest's initramfs: static busybox, the kernel modules the guest needs (decompressed
``.ko.xz`` with dependencies from ``modinfo -F depends``, indexed by the host's
``depmod -b``, since the Debian packages ship no ``modules.dep``), our ``/init`` and the
workload program ``/wl``, as a gzip'd newc cpio archive."""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import KernelError
from .fetch import Kernel

#: Modules /init loads (those built in are skipped): disk, filesystem, zram.
WANTED = ("virtio_pci", "virtio_blk", "ext4", "crc32c_generic", "zram")

INIT = Path(__file__).with_name("guest") / "init.sh"


def builtin_modules(kernel: Kernel) -> set[str]:
    """Names in ``modules.builtin`` (``kernel/.../x.ko`` -> ``x``, ``-`` as ``_``)."""
    f = kernel.modules / "modules.builtin"
    if not f.is_file():
        return set()
    return {Path(l.strip()).name.split(".ko")[0].replace("-", "_") for l in f.read_text().splitlines() if l.strip()}


def module_index(kernel: Kernel) -> dict[str, Path]:
    """Module name (``-`` as ``_``) -> its file in the package."""
    out: dict[str, Path] = {}
    for p in (kernel.modules / "kernel").rglob("*.ko*"):
        out[p.name.split(".ko")[0].replace("-", "_")] = p
    return out


def depends(path: Path) -> list[str]:
    """``modinfo -F depends`` of one module file."""
    r = subprocess.run(["modinfo", "-F", "depends", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise KernelError(f"modinfo {path}: {r.stderr.strip()}")
    return [d.strip().replace("-", "_") for d in r.stdout.strip().split(",") if d.strip()]


def resolve(kernel: Kernel, wanted=WANTED, deps=depends) -> list[Path]:
    """The module files to ship: ``wanted`` that are modules, plus their dependency closure."""
    index = module_index(kernel)
    builtin = builtin_modules(kernel)
    todo = [w for w in wanted if w not in builtin]
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in seen or name in builtin:
            continue
        if name not in index:
            raise KernelError(f"kernel {kernel.release}: module {name} is neither built in nor shipped")
        seen[name] = index[name]
        todo.extend(deps(index[name]))
    return sorted(seen.values())


def _decompressed_name(p: Path) -> str:
    return p.name[:-3] if p.name.endswith(".xz") else p.name


def stage(kernel: Kernel, root: Path, busybox: Path, wl: Path, modules: list[Path],
          extra: dict[str, Path] | None = None) -> None:
    """Lay out the initramfs tree in ``root``; ``extra`` names more programs for / (``thp``)."""
    for d in ("bin", "dev", "proc", "sys", "data", "tmp"):
        (root / d).mkdir(parents=True, exist_ok=True)
    shutil.copy2(busybox, root / "bin" / "busybox")
    shutil.copy2(wl, root / "wl")
    for name, path in (extra or {}).items():
        shutil.copy2(path, root / name)
    shutil.copy2(INIT, root / "init")
    os.chmod(root / "init", 0o755)
    mroot = root / "lib" / "modules" / kernel.release
    for p in modules:
        dest = mroot / p.relative_to(kernel.modules).parent / _decompressed_name(p)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if p.name.endswith(".xz"):
            dest.write_bytes(lzma.decompress(p.read_bytes()))
        else:
            shutil.copy2(p, dest)
    for meta in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
        if (kernel.modules / meta).is_file():
            shutil.copy2(kernel.modules / meta, mroot / meta)
    r = subprocess.run(["depmod", "-b", str(root), kernel.release], capture_output=True, text=True)
    if r.returncode != 0:
        raise KernelError(f"depmod -b {root} {kernel.release}: {r.stderr.strip()}")


def find_busybox() -> Path:
    for c in ("/bin/busybox", "/usr/bin/busybox"):
        p = Path(c)
        if p.is_file():
            r = subprocess.run(["file", "-L", str(p)], capture_output=True, text=True) if shutil.which("file") else None
            if r is None or "dynamically" not in r.stdout:
                return p
    raise KernelError("static busybox not found (apt-get install busybox-static)")


def cpio_newc(root: Path, out: Path) -> None:
    """Write ``root`` as a gzip'd newc cpio archive (the format the kernel unpacks)."""
    entries = sorted(root.rglob("*"))
    ino = 1
    # No file name and mtime 0 in the gzip header: the same tree gives the same bytes.
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw, mtime=0) as gz:
        def put(name: str, st_mode: int, data: bytes, nlink: int) -> None:
            nonlocal ino
            hdr = "070701" + "".join(f"{v:08X}" for v in (
                ino, st_mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0))
            ino += 1
            buf = hdr.encode() + name.encode() + b"\0"
            buf += b"\0" * (-len(buf) % 4)
            gz.write(buf + data + b"\0" * (-len(data) % 4))

        for p in entries:
            rel = p.relative_to(root).as_posix()
            st = p.lstat()
            if p.is_symlink():
                put(rel, st.st_mode, os.readlink(p).encode(), 1)
            elif p.is_dir():
                put(rel, st.st_mode, b"", 2)
            else:
                put(rel, st.st_mode, p.read_bytes(), 1)
        put("TRAILER!!!", 0, b"", 1)


def build(kernel: Kernel, wl: Path, out: Path, busybox: Path | None = None,
          extra: dict[str, Path] | None = None) -> Path:
    """Build the initramfs for ``kernel`` into ``out`` (whole or not at all)."""
    modules = resolve(kernel)
    with tempfile.TemporaryDirectory(prefix="initramfs.") as tmp:
        root = Path(tmp) / "root"
        stage(kernel, root, busybox or find_busybox(), wl, modules, extra)
        part = out.with_suffix(out.suffix + ".part")
        cpio_newc(root, part)
        os.replace(part, out)
    return out
