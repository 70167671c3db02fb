"""Issue 24 item 2: the readers under fuzzing (fuzz/fuzz.py; docs/reliability.md).

The seeds are valid, every input that once misbehaved (fuzz/regressions/) is now refused in
one line or read, a bit flipped in a checksummed region of a native trace is always caught,
and a short campaign of every reader finds nothing (RECLAIMLAB_FUZZ_SECONDS per reader,
default 12; the long campaign's command is in docs/reliability.md)."""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))
import fuzz  # noqa: E402

SECONDS = float(os.environ.get("RECLAIMLAB_FUZZ_SECONDS", "12"))


def _files(root: Path, target: str) -> list[Path]:
    d = root / target
    return sorted(p for p in d.iterdir() if p.is_file() and p.suffix != ".txt") if d.is_dir() else []


def _run(tmp_path: Path, target: str, data: bytes) -> str:
    f = tmp_path / fuzz.FILE_NAMES[target]
    f.write_bytes(data)
    return fuzz.run_target(target, f)


@pytest.mark.parametrize("target", fuzz.TARGETS)
def test_every_seed_is_valid(tmp_path, target):
    seeds = _files(fuzz.HERE / "corpus", target)
    assert seeds, f"no seed for {target}"
    for p in seeds:
        assert _run(tmp_path, target, p.read_bytes()) == "ok", p


REGRESSIONS = [(t, p) for t in fuzz.TARGETS for p in _files(fuzz.HERE / "regressions", t)]


@pytest.mark.parametrize("target, path", REGRESSIONS, ids=[f"{t}/{p.name}" for t, p in REGRESSIONS])
def test_what_the_fuzzer_found_is_refused_in_one_line(tmp_path, target, path):
    assert _run(tmp_path, target, path.read_bytes()) in ("ok", "refused")


def test_a_flipped_bit_in_a_checksummed_region_is_always_caught(tmp_path):
    rng = random.Random(24)
    for seed in _files(fuzz.HERE / "corpus", "native"):
        data = seed.read_bytes()
        assert fuzz.checksummed_regions(data), seed
        for _ in range(40):
            assert _run(tmp_path, "native", fuzz.flip_checksummed(rng, data)) == "refused", seed


def test_a_finding_is_reported_not_hidden(tmp_path, monkeypatch):
    # The harness itself can fail: a reader that raises anything but a one-line
    # ReclaimlabError is a finding.
    def broken(path, fmt):
        raise IndexError("boom")

    monkeypatch.setattr(fuzz, "_read_trace", broken)
    with pytest.raises(fuzz.Finding, match="IndexError: boom"):
        _run(tmp_path, "lirs", b"1\n")


@pytest.mark.parametrize("target", fuzz.TARGETS)
def test_a_short_campaign_finds_nothing(tmp_path, target):
    stats = fuzz.campaign(target, SECONDS, seed=24, findings=tmp_path / target)
    kept = sorted(p.name for p in (tmp_path / target).glob("*")) if (tmp_path / target).exists() else []
    if kept:  # keep them where a developer finds them
        dst = ROOT / "fuzz" / "findings" / target
        dst.mkdir(parents=True, exist_ok=True)
        for p in (tmp_path / target).iterdir():
            shutil.copyfile(p, dst / p.name)
    assert stats["execs"] > 0, stats
    assert (stats["findings"], stats["crashes"], stats["hangs"]) == (0, 0, 0), (stats, kept)


def test_the_fuzzer_can_get_past_the_checksums(tmp_path):
    # fix_checksums recomputes the native format's checksums (FORMAT.md) after a mutation,
    # so the structure behind them is fuzzed too: it reproduces every seed byte for byte,
    # and a record made invalid behind a fixed checksum is refused for what it is.
    seed = (fuzz.HERE / "corpus" / "native" / "zipf-v1.trace").read_bytes()
    for p in _files(fuzz.HERE / "corpus", "native"):
        assert fuzz.fix_checksums(p.read_bytes()) == p.read_bytes(), p
    bad = bytearray(seed)
    bad[64 + 12:64 + 16] = (10**6).to_bytes(4, "little")  # record 0's page, past nr_pages
    f = tmp_path / "in.trace"
    f.write_bytes(fuzz.fix_checksums(bytes(bad)))
    from reclaimlab import TraceError, _core

    with pytest.raises(TraceError, match="corrupt at record 0: page 1000000 >= nr_pages 500"):
        _core.trace_info(_core.open_trace(str(f), "native", None))
