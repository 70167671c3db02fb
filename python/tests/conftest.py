"""Helpers: run the CLI as a user would (a subprocess of `python -m reclaimlab`); a fake
unpacked kernel for the real-kernel code's offline tests, and the real one for its boots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


#: The environment that pins the date of every provenance (reproducible builds'
#: SOURCE_DATE_EPOCH), for tests that compare two --json outputs byte for byte.
PINNED = {"SOURCE_DATE_EPOCH": "1700000000"}


def cli(*args: str, cwd: str | os.PathLike | None = None, timeout: float = 120,
        env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "reclaimlab", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def assert_user_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, one `reclaimlab: error:` line on stderr naming every needle, no traceback."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    err = p.stderr.strip()
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr, p.stderr
    assert err.startswith("reclaimlab: error: "), err
    assert len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)
    return err


@pytest.fixture
def run_cli():
    return cli


@pytest.fixture
def gen_trace(tmp_path: Path):
    """Generate a native trace with `reclaimlab trace gen` and return its path."""

    def make(pattern: str = "zipf", pages: int = 1000, accesses: int = 20000, *extra: str, name: str = "t.trace") -> Path:
        out = tmp_path / name
        p = cli("trace", "gen", pattern, "--pages", pages, "--accesses", accesses, *extra, "-o", out)
        assert p.returncode == 0, p.stderr
        return out

    return make


#: The release of the fake kernel (Debian's 6.12, which the guest boots).
FAKE_RELEASE = "6.12.117+deb12-amd64"


def fake_kernel(tmp_path: Path, monkeypatch, config: str):
    """prepare() without host tools or a kernel download: an unpacked tree of
    ``FAKE_RELEASE`` whose boot/config holds ``config``."""
    from reclaimlab.kernel import fetch, run

    root = tmp_path / "k"
    (root / "boot").mkdir(parents=True)
    (root / "boot" / f"vmlinuz-{FAKE_RELEASE}").write_bytes(b"kernel")
    (root / "lib" / "modules" / FAKE_RELEASE).mkdir(parents=True)
    (root / "boot" / f"config-{FAKE_RELEASE}").write_text(config)
    kernel = fetch.load_tree(root)
    monkeypatch.setattr(run, "tool_check", lambda: None)
    monkeypatch.setattr(run.fetch, "fetch", lambda package=None: kernel)
    return kernel


@pytest.fixture(scope="module")
def kernel_tree():
    """The default Debian kernel, fetched and unpacked (a real-kernel test fails, saying
    why, when it cannot be)."""
    from reclaimlab.kernel import KernelError, fetch

    try:
        return fetch.fetch(fetch.DEFAULT_PACKAGE)
    except KernelError as e:
        pytest.fail(f"cannot fetch the kernel package {fetch.DEFAULT_PACKAGE} for the real-kernel test: {e}")
