"""damo interoperability: DAMON snapshots written in damo's record format are read by the
real `damo report access|heatmap|wss` (the `damo` package), damo record files read back,
and a record turned into page accesses (`trace convert --trace-format damo`)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from reclaimlab import damo_record as dr
from reclaimlab import damo_workload as dw
from reclaimlab.exceptions import TraceError

from conftest import assert_user_error, cli

MIB = 1 << 20


def damo_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "damo"
    found = str(exe) if exe.exists() else shutil.which("damo")
    if found is None:
        pytest.skip("the damo package is not installed (pip install '.[test]')")
    return [found]


def damo(*args: str) -> str:
    p = subprocess.run(damo_cmd() + list(args), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, (args, p.stdout[-2000:], p.stderr[-2000:])
    return p.stdout


def hot_record(nr_snapshots: int = 40, hot=(3, 5), n_regions: int = 10, nr_hot: int = 18) -> dr.Record:
    """A 10 MiB target of 1 MiB regions; regions hot[0]..hot[1]-1 are sampled accessed
    in 18 of 20 samples every 100 ms, the rest never (ages grow)."""
    snaps = []
    for i in range(nr_snapshots):
        regions = [dr.Region(j * MIB, (j + 1) * MIB, nr_hot if hot[0] <= j < hot[1] else 0, i)
                   for j in range(n_regions)]
        snaps.append(dr.Snapshot(i * 100_000_000, (i + 1) * 100_000_000, regions))
    return dr.Record(target_id=0, snapshots=snaps)


@pytest.mark.parametrize("fmt", dr.FORMATS)
def test_write_read_round_trip(tmp_path, fmt):
    rec = hot_record(nr_snapshots=3)
    path = tmp_path / f"rec.{fmt}"
    dr.write(path, [rec], fmt)
    back = dr.read(path)
    assert len(back) == 1
    assert back[0].snapshots == rec.snapshots
    assert (back[0].sample_us, back[0].aggr_us) == (5000, 100_000)
    # The file type damo detects with `file -b` (zlib compressed data / JSON / ASCII).
    head = path.read_bytes()[:2]
    assert {"json_compressed": head[:1] == b"\x78", "json": head[:1] == b"[", "perf_script": head == b"kd"}[fmt]


def test_json_is_damo_kvpairs(tmp_path):
    dr.write(tmp_path / "r.data", [hot_record(nr_snapshots=1)])
    value = json.loads(zlib.decompress((tmp_path / "r.data").read_bytes()))
    r = value[0]
    assert r["intervals"]["sample_us"] == "5000" and r["intervals"]["aggr_us"] == "100000"
    region = r["snapshots"][0]["regions"][3]
    assert region["start"] == str(3 * MIB) and region["nr_accesses"] == {"samples": 18, "percent": None}
    assert region["age"] == {"usec": None, "aggr_intervals": "0"}
    assert r["snapshots"][0]["total_bytes"] == str(10 * MIB)


def test_perf_script_single_snapshot_gets_damo_fake_second(tmp_path):
    # damo's perf-script writer appends a fake snapshot so readers can deduce the start
    # time; reading drops it and restores [0, 100 ms).
    dr.write(tmp_path / "r.txt", [hot_record(nr_snapshots=1)], "perf_script")
    text = (tmp_path / "r.txt").read_text()
    assert text.splitlines()[-1].endswith("0-0: -1 -1")
    back = dr.read(tmp_path / "r.txt")
    assert [(s.start_ns, s.end_ns) for s in back[0].snapshots] == [(0, 100_000_000)]


def test_reads_perf_script_of_a_real_kernel_with_other_events(tmp_path):
    text = (
        "kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=0 nr_regions=2 "
        "4096-8192: 3 1\n"
        "kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=0 nr_regions=2 "
        "8192-16384: 0 5\n"
        "kdamond.0  4452 [000] 82877.400000: sched:sched_switch: prev_comm=x\n"
        "kdamond.0  4452 [000] 82877.415633: damon:damon_aggregated: target_id=0 nr_regions=1 "
        "4096-16384: 2 2\n"
    )
    (tmp_path / "p.txt").write_text(text)
    rec = dr.read(tmp_path / "p.txt")[0]
    assert [r for s in rec.snapshots for r in s.regions] == [
        dr.Region(4096, 8192, 3, 1), dr.Region(8192, 16384, 0, 5), dr.Region(4096, 16384, 2, 2)]
    # Two snapshots 100 ms apart: the first one's start is deduced as 100 ms before its end.
    assert rec.snapshots[1].start_ns == rec.snapshots[0].end_ns
    assert rec.snapshots[0].end_ns - rec.snapshots[0].start_ns == 100_000_000


@pytest.mark.parametrize("content, needle", [
    (b"\x78\x9c garbage", "damaged zlib stream"),
    (b'[{"snapshots": [', "bad JSON at line 1"),
    (b'[{"snapshots": [{"start_time": "0", "end_time": "5", "regions": [{"start": "9", "end": "2"}]}]}]',
     "regions must be ordered"),
    (b'[{"snapshots": [{"start_time": "0", "regions": []}]}]', "missing field 'end_time'"),
    (b"hello\n", "not a damo record file"),
    (b"\x00\x01\xff\xfe", "perf.data"),
    (b"x 1.0: damon:damon_aggregated: target_id=0 nr_regions=1 1-2\n", "line 1: unreadable"),
])
def test_bad_files_are_clear_errors(tmp_path, content, needle):
    (tmp_path / "bad.data").write_bytes(content)
    with pytest.raises(TraceError, match=re.escape(needle)) as e:
        dr.read(tmp_path / "bad.data")
    assert "bad.data" in str(e.value)


def test_write_is_atomic(tmp_path):
    bad = hot_record(nr_snapshots=2)
    bad.snapshots[1].regions.reverse()  # not address-ordered
    with pytest.raises(ValueError, match="ordered"):
        dr.write(tmp_path / "r.data", [bad])
    assert list(tmp_path.iterdir()) == []


def test_damo_reports_read_our_record(tmp_path):
    """The real damo reads a written record and shows the hot 3..5 MiB."""
    path = tmp_path / "damon.data"
    dr.write(path, [hot_record()])
    check_damo_sees_hot_range(path, 3 * MIB, 5 * MIB, total=10 * MIB)


def check_damo_sees_hot_range(path, lo: int, hi: int, total: int) -> None:
    """`damo report access`: regions inside [lo, hi) are the accessed ones;
    `damo report heatmap --output raw`: the hottest cells lie in [lo, hi);
    `damo report wss`: the working set is about hi - lo."""
    out = damo("report", "access", "-i", str(path), "--raw_number")
    rows = [(int(a), int(s), float(h)) for a, s, h in re.findall(r"addr (\d+)\s+size (\d+)\s+access ([\d.]+)", out)]
    assert rows, out[:2000]
    # The last snapshot: accessed bytes lie inside [lo, hi) and cover most of it.
    last = out.split("snapshot time:")[-1]
    rows = [(int(a), int(s), float(h)) for a, s, h in re.findall(r"addr (\d+)\s+size (\d+)\s+access ([\d.]+)", last)]
    hot_bytes = sum(s for a, s, h in rows if h > 0)
    inside = sum(max(0, min(a + s, hi) - max(a, lo)) for a, s, h in rows if h > 0)
    assert inside >= 0.9 * hot_bytes and inside >= 0.9 * (hi - lo), rows

    raw = damo("report", "heatmap", "-i", str(path), "--output", "raw", "--resol", "10", "50", "--abs_addr")
    cells = [(int(t), int(a), float(h)) for t, a, h in (line.split() for line in raw.splitlines() if line.strip())]
    assert cells
    by_addr: dict[int, float] = {}
    for _, a, h in cells:
        by_addr[a] = by_addr.get(a, 0.0) + h
    peak = max(by_addr.values())
    hottest = [a for a, h in by_addr.items() if h >= 0.5 * peak]
    assert all(lo - 2 * total // 50 <= a < hi for a in hottest), (lo, hi, sorted(hottest))

    wss = damo("report", "wss", "-i", str(path), "--raw_number", "--range", "50", "51", "1", "--exclude_samples", "5")
    m = re.search(r"^\s*50\s+(\d+)", wss, re.M)
    assert m, wss
    assert 0.8 * (hi - lo) <= int(m.group(1)) <= 1.25 * (hi - lo), wss


def test_intervals_worked_numbers():
    # One snapshot, 100 ms, sample 5 ms (max 20): region A [0, 40 KiB) 10 pages with
    # nr_accesses 10 -> p = 0.5, k = ln 2 * 10 = 6.931 per sample, x20 samples = 138.6
    # -> 139 accesses; region B [40, 80 KiB) never accessed -> none; region C
    # [1 MiB, 1 MiB + 8 KiB) 2 pages at the max 20 -> p capped at 1 - 1/40, k = ln 40 * 2
    # = 7.378 per sample -> 147.6 -> 148. The 1 MiB gap is dropped: C's pages are 20, 21.
    rec = dr.Record(snapshots=[dr.Snapshot(0, 100_000_000, [
        dr.Region(0, 40960, 10, 0), dr.Region(40960, 81920, 0, 3), dr.Region(MIB, MIB + 8192, 20, 1)])])
    ivs, nr_pages = dw.intervals([rec])
    assert nr_pages == 22
    assert ivs == [(100_000_000, [(0, 10, 139), (20, 2, 148)])]
    assert math.isclose(dw.accesses_per_sample(10, 20, 10), 10 * math.log(2))
    ivs, _ = dw.intervals([rec], scale=0.5)
    assert ivs == [(100_000_000, [(0, 10, 69), (20, 2, 74)])]


def test_trace_convert_damo(tmp_path):
    path = tmp_path / "damon.data"
    dr.write(path, [hot_record(nr_snapshots=10)])
    out = tmp_path / "out.trace"
    p = cli("trace", "convert", str(path), str(out), "--trace-format", "damo", "--seed", "3")
    assert p.returncode == 0, p.stderr
    import reclaimlab

    src = reclaimlab.open_trace(str(out))
    recs = src.take(10_000_000)
    pages = 10 * MIB // 4096
    # Populate: every page written once first, in order, at time 0.
    assert [r[0] for r in recs[:pages]] == list(range(pages)) and all(r[2] == 1 and r[3] == 0 for r in recs[:pages])
    rest = recs[pages:]
    # Then only the hot 2 MiB (pages 768..1279), 18 of 20 -> k = ln(10) * 256 pages per
    # sample per region, 20 samples, 2 regions, 10 snapshots.
    per_region = round(math.log(10) * 256 * 20)
    assert len(rest) == 10 * 2 * per_region
    assert all(768 <= r[0] < 1280 for r in rest)
    # Time: 10 snapshots of 100 ms in µs ticks.
    assert src.meta()["tick_ps"] == 1_000_000 and sum(r[3] for r in rest) == 1_000_000
    again = tmp_path / "again.trace"
    assert cli("trace", "convert", str(path), str(again), "--trace-format", "damo", "--seed", "3").returncode == 0
    assert again.read_bytes() == out.read_bytes()


def test_trace_convert_damo_bad_record(tmp_path):
    (tmp_path / "bad.data").write_bytes(b"\x78\x9cnope")
    p = cli("trace", "convert", str(tmp_path / "bad.data"), str(tmp_path / "o.trace"), "--trace-format", "damo")
    assert_user_error(p, "bad.data", "zlib")
    assert not (tmp_path / "o.trace").exists()


# ---- simulated runs (the engine's DAMON, sim.damon_record) -----------------------------


def simulate(trace: Path, out: Path) -> None:
    p = cli("run", "--trace", str(trace), "--memory", "64M", "--swap", "zram:64M", "--policy", "classic@6.15",
            "--damo-record", str(out), "-q")
    assert p.returncode == 0, p.stderr
    assert out.exists()


def test_simulated_run_record_and_round_trip(tmp_path):
    """A run replaying a workload that touches 10 MiB and keeps 3..5 MiB hot, recorded with
    `run --damo-record`: the real damo reports show the hot range. Then that record is
    turned back into a workload and rerun: its record shows the same hot range."""
    syn = tmp_path / "syn.data"
    dr.write(syn, [hot_record(nr_snapshots=30)])
    assert cli("trace", "convert", str(syn), str(tmp_path / "syn.trace"), "--trace-format", "damo").returncode == 0
    rec1 = tmp_path / "rec1.data"
    simulate(tmp_path / "syn.trace", rec1)
    records = dr.read(rec1)
    assert len(records) == 1 and len(records[0].snapshots) == 30  # 3 s at 100 ms
    # The engine's DAMON sampled what the workload was built to show: the hot regions'
    # nr_accesses near 18 of 20 (the conversion's expectation), cold ones 0.
    last = records[0].snapshots[-1]
    hot = [r for r in last.regions if r.start >= 3 * MIB and r.end <= 5 * MIB]
    cold = [r for r in last.regions if r.end <= 3 * MIB or r.start >= 5 * MIB]
    assert hot and cold
    mean_hot = sum(r.nr_accesses * r.size for r in hot) / sum(r.size for r in hot)
    assert 14 <= mean_hot <= 20, mean_hot
    assert all(r.nr_accesses == 0 for r in cold)
    check_damo_sees_hot_range(rec1, 3 * MIB, 5 * MIB, total=10 * MIB)

    assert cli("trace", "convert", str(rec1), str(tmp_path / "rt.trace"), "--trace-format", "damo",
               "--seed", "9").returncode == 0
    rec2 = tmp_path / "rec2.data"
    simulate(tmp_path / "rt.trace", rec2)
    check_damo_sees_hot_range(rec2, 3 * MIB, 5 * MIB, total=10 * MIB)


def test_damo_record_needs_snapshots(tmp_path):
    # A run shorter than one aggregation interval keeps none: a clear error, no file.
    (tmp_path / "t.csv").write_text("page\n1\n2\n")
    p = cli("run", "--trace", str(tmp_path / "t.csv"), "--policy", "classic@6.15", "--damo-record",
            str(tmp_path / "r.data"), "-q")
    assert_user_error(p, "r.data", "no DAMON snapshots")
    assert not (tmp_path / "r.data").exists()
