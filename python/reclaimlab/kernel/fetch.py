"""Kernel packages: ``apt-get download`` a Debian ``linux-image-*`` package and unpack it
with ``dpkg -x`` into a cache directory (never into the host's /boot), or use a ``.deb`` or
an already unpacked tree given by path. Reads the kernel's ``boot/config-*``."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import KernelError

#: The kernel the reference study used as its main guest (MGLRU and DAMON built in).
DEFAULT_PACKAGE = "linux-image-6.12.117+deb12-amd64-unsigned"


def cache_dir() -> Path:
    """``$RECLAIMLAB_KERNEL_CACHE``, else ``~/.cache/reclaimlab/kernel``."""
    env = os.environ.get("RECLAIMLAB_KERNEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "reclaimlab" / "kernel"


@dataclass
class Kernel:
    """An unpacked kernel: its tree, release (``uname -r``), image and build config."""

    root: Path
    release: str
    vmlinuz: Path
    config: dict[str, str] = field(default_factory=dict)
    package: str = ""

    @property
    def modules(self) -> Path:
        return self.root / "lib" / "modules" / self.release

    def has(self, option: str) -> bool:
        """Whether ``CONFIG_<option>`` is ``y`` or ``m``."""
        return self.config.get("CONFIG_" + option, "n") in ("y", "m")


def parse_config(path: Path) -> dict[str, str]:
    """A kernel ``.config``: ``CONFIG_X=value`` lines (``# CONFIG_X is not set`` -> absent)."""
    out: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            k, _, v = line.partition("=")
            out[k] = v.strip().strip('"')
    return out


def load_tree(root: Path, package: str = "") -> Kernel:
    """A kernel from an unpacked package tree (``boot/vmlinuz-*``, ``boot/config-*``)."""
    boot = root / "boot"
    images = sorted(boot.glob("vmlinuz-*")) if boot.is_dir() else []
    if not images:
        raise KernelError(f"{root}: no boot/vmlinuz-* (not an unpacked linux-image package)")
    vmlinuz = images[-1]
    release = vmlinuz.name[len("vmlinuz-"):]
    cfg = boot / f"config-{release}"
    if not cfg.is_file():
        raise KernelError(f"{root}: no boot/config-{release}; cannot check the kernel's features")
    if not (root / "lib" / "modules" / release).is_dir():
        raise KernelError(f"{root}: no lib/modules/{release}")
    return Kernel(root=root, release=release, vmlinuz=vmlinuz, config=parse_config(cfg), package=package)


def _unpack(deb: Path, dest: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        r = subprocess.run(["dpkg", "-x", str(deb), str(tmp)], capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError(f"{deb}: dpkg -x failed: {r.stderr.strip()}")
        os.replace(tmp, dest)  # whole or nothing
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def package_exists(package: str) -> bool:
    """Whether apt knows ``package`` (``apt-cache show``)."""
    if shutil.which("apt-cache") is None:
        return False
    r = subprocess.run(["apt-cache", "show", "--no-all-versions", package], capture_output=True, text=True)
    return r.returncode == 0 and "Package:" in r.stdout


def fetch(spec: str | None = None) -> Kernel:
    """Resolve ``--kernel``: a package name (downloaded once into :func:`cache_dir`), a
    ``.deb`` file or an unpacked tree. Raises :class:`KernelError` with the reason."""
    spec = spec or DEFAULT_PACKAGE
    p = Path(spec)
    if p.is_dir():
        return load_tree(p, package=str(p))
    if spec.endswith(".deb"):
        if not p.is_file():
            raise KernelError(f"{spec}: no such .deb file")
        dest = cache_dir() / p.name[:-4]
        if not dest.is_dir():
            dest.parent.mkdir(parents=True, exist_ok=True)
            _unpack(p, dest)
        return load_tree(dest, package=p.name)
    if "/" in spec:
        raise KernelError(f"{spec}: no such kernel directory")
    dest = cache_dir() / spec
    if dest.is_dir():
        return load_tree(dest, package=spec)
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        raise KernelError(f"cannot fetch kernel package {spec}: apt-get/dpkg not found (give --kernel PATH)")
    if not package_exists(spec):
        raise KernelError(f"unknown kernel package {spec!r}: apt does not know it "
                          "(try `apt-cache search linux-image`, or run apt-get update)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as dl:
        r = subprocess.run(["apt-get", "download", spec], cwd=dl, capture_output=True, text=True)
        debs = list(Path(dl).glob("*.deb"))
        if r.returncode != 0 or not debs:
            raise KernelError(f"cannot fetch kernel package {spec}: apt-get download failed: "
                              f"{(r.stderr or r.stdout).strip().splitlines()[-1:] or ['no .deb']}")
        _unpack(debs[0], dest)
    return load_tree(dest, package=spec)
