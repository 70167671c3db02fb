"""reclaimlab/_core.pyi matches the extension: every name, class, method and parameter
(mypy's stubtest imports the module and compares; return types are the stub's word)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_stubs_match_the_extension(tmp_path):
    pytest.importorskip("mypy.stubtest")
    p = subprocess.run([sys.executable, "-m", "mypy.stubtest", "reclaimlab._core", "--mypy-config-file", "/dev/null"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
