#!/usr/bin/env python3
"""Fuzz every reader of reclaimlab's inputs (issue 24 item 2).

Targets (one per reader): native, lirs, address, csv, oracle, damo, experiment, config.
Each takes the bytes of one input file and drives the reader the CLI uses, in process
(``reclaimlab._core`` for traces, the Python loaders for damo records, experiment specs and
config TOML). An input may be refused, but only with a ``ReclaimlabError`` (or an ``OSError``
naming a file) whose message is one line: any other exception, a Rust panic, a process that
dies (abort, segfault, OOM kill), an input that takes over ``--hang`` seconds (20) to read,
or a native trace with one bit flipped inside a checksummed region that is read without an
error is a finding.

The mutator is structure-unaware but aimed: over a checked-in corpus of valid seeds
(``fuzz/corpus/TARGET/``) it stacks 1-8 byte-level mutations (bit flips, interesting
8/16/32/64-bit values at random offsets and at the native header's fields, deletions,
duplications, insertions, splices with another seed, truncation, and for text formats
interesting tokens such as huge numbers, signs, separators and NUL). Native seeds also get
the checksum mutation (one bit flipped inside a block payload or the trailer table).

A supervisor runs the target in a worker process and restarts it after a crash or a hang,
keeping the input that caused it in ``--out`` (default ``fuzz/findings/TARGET/``).
Regressions (inputs that once crashed, kept in ``fuzz/regressions/TARGET/``) are replayed by
``python/tests/test_fuzz.py``, which also runs a short campaign of every target.

    python fuzz/fuzz.py --target native --seconds 600            # one campaign
    python fuzz/fuzz.py --target all --seconds 600 --seed 7      # every target in turn
    python fuzz/fuzz.py --replay fuzz/regressions                # replay findings

Prints one summary line per target (executions, rate, refused / accepted inputs, findings)
and exits 1 if anything was found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = ["native", "lirs", "address", "csv", "oracle", "damo", "experiment", "config"]
# File name each target's input is written to (readers detect formats by name and content).
FILE_NAMES = {
    "native": "in.trace", "lirs": "in.lirs", "address": "in.addr", "csv": "in.csv",
    "oracle": "in.oracleGeneral.bin", "damo": "in.damo", "experiment": "exp.toml", "config": "machine.toml",
}
TEXT = {"lirs", "address", "csv", "experiment", "config"}
HANG_S = 20.0


class Finding(Exception):
    """The target misbehaved on an input (not merely refused it)."""


# ---- targets ---------------------------------------------------------------------------


def _expected(e: BaseException) -> bool:
    """A refusal the CLI reports in one line (main() prints ReclaimlabError and OSError)."""
    from reclaimlab.exceptions import ReclaimlabError

    if isinstance(e, ReclaimlabError):
        msg = str(e)
    elif isinstance(e, OSError) and e.filename is not None:
        msg = f"{e.filename}: {e.strerror or e}"
    else:
        return False
    if not msg.strip() or "\n" in msg.strip():
        raise Finding(f"refused with a message that is not one line: {msg!r}")
    return True


def _read_trace(path: Path, fmt: str) -> None:
    from reclaimlab import _core

    info = _core.trace_info(_core.open_trace(str(path), fmt, None))
    tr = _core.cache_load(_core.open_trace(str(path), fmt, None), str(path))
    if len(tr) != info["records"]:
        raise Finding(f"trace_info counted {info['records']} records, cache_load {len(tr)}")
    if len(tr):
        _core.cache_simulate(tr, ["lru", "belady"], [max(1, tr.distinct // 2)], 1)
        _core.cache_lru_mrc(tr, [1, max(1, tr.distinct // 2)], 0.5)


def _read_damo(path: Path) -> None:
    from reclaimlab import damo_record, damo_workload

    damo_record.read(path)
    src = damo_workload.source(path)
    for _ in range(3):  # a region pattern can stand for billions of accesses: read a bounded prefix
        if not src.take(20_000):
            break


def _read_experiment(path: Path) -> None:
    from reclaimlab.experiment import spec
    from reclaimlab.experiment.runner import _validate

    exp = spec.load(path)
    jobs = exp.jobs()
    if len(jobs) <= 64:
        _validate(jobs)


def _read_config(path: Path) -> None:
    from reclaimlab import prepare

    (path.parent / "in.csv").write_text("page,cgroup\n1,db\n2,\n")  # what a [trace] table may name

    p = prepare(str(path))
    p.source.take(1000)


def run_target(target: str, path: Path) -> str:
    """Read ``path`` as ``target`` does; 'ok' or 'refused', or raise Finding."""
    try:
        if target in ("native", "lirs", "address", "csv", "oracle"):
            _read_trace(path, target)
        elif target == "damo":
            _read_damo(path)
        elif target == "experiment":
            _read_experiment(path)
        elif target == "config":
            _read_config(path)
        else:
            raise SystemExit(f"unknown target {target}")
        return "ok"
    except Finding:
        raise
    except BaseException as e:  # noqa: BLE001 - classifying every outcome is the point
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        if _expected(e):
            return "refused"
        raise Finding(f"{type(e).__name__}: {e}\n{traceback.format_exc()}") from None


# ---- mutation --------------------------------------------------------------------------

INTERESTING = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF,
               65536, 65535, 4_000_000_000, 10**12, 10**12 + 1]
TOKENS = [b"0", b"-1", b"1", b"18446744073709551616", b"4294967296", b"99999999999999999999999", b"1e309",
          b"nan", b"inf", b"-0", b"0x", b"0xffffffffffffffff", b"\x00", b"\n", b"\r\n", b",", b" ", b"\t",
          b"=", b"[", b"]", b"[[", b"{", b"}", b'"', b"'", b"*", b"#", b".", b"true", b"false", b"\xff\xfe",
          b"l", b"s", b"page", b"gap", b"cgroup", b"op", b"type", b"access", b"w", b"file", b"mapped",
          b"policy", b"scenario", b"[matrix]", b"[workload]", b"[trace]", b"[settings]", b"repetitions",
          b"memory", b"1G", b"4T", b"max", b"damon_aggregated:", b"nr_regions=", b"\\u0000", b"\xc3\x28"]
# Native header fields (offset, width) the mutator aims at besides random offsets.
HEADER_FIELDS = [(8, 2), (10, 2), (12, 4), (16, 8), (24, 4), (28, 2), (30, 2), (32, 8), (40, 8), (48, 4),
                 (52, 4), (56, 8)]


def checksummed_regions(b: bytes) -> list[tuple[int, int]]:
    """Byte ranges of a valid native trace that its checksums cover (FORMAT.md): each
    block's payload and the trailer table."""
    if len(b) < 64 or b[:8] != b"RCLTRACE":
        return []
    version, = struct.unpack_from("<H", b, 8)
    flags, nr_records = struct.unpack_from("<IQ", b, 12)
    table_offset, table_len = struct.unpack_from("<QI", b, 40)
    rec_len = 12 if flags & 1 else 8
    out, off, left = [], 64, nr_records
    while left > 0:
        n = min(left, 65536)
        if version == 1:
            out.append((off + 12, off + 12 + n * rec_len))
            off += 12 + n * rec_len
        else:
            stored, = struct.unpack_from("<I", b, off + 4)
            out.append((off + 16, off + 16 + stored))
            off += 16 + stored
        left -= n
    out.append((table_offset, table_offset + table_len))
    return [(a, z) for a, z in out if z > a]


def mutate(rng: random.Random, data: bytes, seeds: list[bytes], target: str) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4, 8])):
        op = rng.randrange(10)
        n = len(b)
        if op == 0 and n:  # bit flip
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:  # random byte
            b[rng.randrange(n)] = rng.randrange(256)
        elif op == 2 and n:  # interesting integer at a random offset or a header field
            if target == "native" and n >= 64 and rng.random() < 0.6:
                at, width = rng.choice(HEADER_FIELDS)
            else:
                width = rng.choice([1, 2, 4, 8])
                at = rng.randrange(max(1, n - width + 1))
            v = rng.choice(INTERESTING) + rng.choice([0, 0, 0, -1, 1])
            v &= (1 << (8 * width)) - 1
            b[at:at + width] = v.to_bytes(width, "little")[: max(0, n - at)]
        elif op == 3 and n:  # delete a range
            i = rng.randrange(n)
            del b[i:i + rng.choice([1, 2, 4, 8, 64, 1024])]
        elif op == 4 and n:  # duplicate a range
            i = rng.randrange(n)
            j = min(n, i + rng.choice([1, 4, 16, 256, 4096]))
            b[i:i] = b[i:j] * rng.choice([1, 2, 16])
        elif op == 5:  # insert random bytes
            i = rng.randrange(n + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 4, 16])))
        elif op == 6 and seeds:  # splice with another seed
            other = rng.choice(seeds)
            if other:
                i, j = rng.randrange(n + 1), rng.randrange(len(other))
                b[i:] = other[j:j + rng.randrange(1, 4096)] + b[i:]
        elif op == 7 and n:  # truncate
            del b[rng.randrange(n):]
        elif op in (8, 9):  # a token (text) or a decimal rendering of an interesting value
            tok = rng.choice(TOKENS) if rng.random() < 0.7 else str(rng.choice(INTERESTING)).encode()
            i = rng.randrange(n + 1)
            if target in TEXT or rng.random() < 0.3:
                if rng.random() < 0.5 and n:  # replace the token-ish run at i
                    j = i
                    while j < n and j - i < 24 and b[j:j + 1] not in (b"\n", b" ", b",", b"=", b"\t"):
                        j += 1
                    b[i:j] = tok
                else:
                    b[i:i] = tok
    return bytes(b)


_K = 0x9E3779B97F4A7C15
_M = (1 << 64) - 1
_S = int.from_bytes(b"RCLTRACE", "little")


def _mix(h: int, w: int) -> int:
    x = ((h ^ w) * _K) & _M
    return ((x << 31) | (x >> 33)) & _M


def checksum(b: bytes) -> int:
    """The native format's checksum (FORMAT.md, "Checksum")."""
    n = len(b)
    padded = b + bytes(-n % 8)
    lanes = [_S + j for j in range(4)]
    for i, (w,) in enumerate(struct.iter_unpack("<Q", padded)):
        lanes[i & 3] = _mix(lanes[i & 3], w)
    h = _S
    for lane in lanes:
        h = _mix(h, lane)
    return _mix(h, n)


def fix_checksums(data: bytes) -> bytes:
    """Recompute every checksum a (mutated) native trace's own header and block headers
    point at, so that the mutation reaches the structure behind them (record fields, the
    cgroup, file and op tables, zlib streams) instead of stopping at a checksum."""
    if len(data) < 64 or data[:8] != b"RCLTRACE":
        return data
    b = bytearray(data)
    version, = struct.unpack_from("<H", b, 8)
    flags, nr_records = struct.unpack_from("<IQ", b, 12)
    table_offset, table_len = struct.unpack_from("<QI", b, 40)
    rec_len = 12 if flags & 1 else 8
    off, left = 64, nr_records
    while left > 0:
        n = min(left, 65536)
        hdr = 12 if version == 1 else 16
        if off + hdr > len(b):
            break
        stored = n * rec_len if version == 1 else struct.unpack_from("<I", b, off + 4)[0]
        payload = bytes(b[off + hdr:off + hdr + stored])
        struct.pack_into("<Q", b, off + hdr - 8, checksum(payload))
        off += hdr + stored
        left -= n
    if table_offset + table_len <= len(b):
        struct.pack_into("<Q", b, 56, checksum(bytes(b[table_offset:table_offset + table_len])))
    return bytes(b)


def flip_checksummed(rng: random.Random, data: bytes) -> bytes | None:
    regions = checksummed_regions(data)
    if not regions:
        return None
    a, z = rng.choice(regions)
    b = bytearray(data)
    b[rng.randrange(a, z)] ^= 1 << rng.randrange(8)
    return bytes(b)


# ---- worker ----------------------------------------------------------------------------


def load_corpus(target: str) -> list[bytes]:
    d = HERE / "corpus" / target
    return [p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()]


def worker(target: str, seed: int, work: Path, findings: Path) -> None:
    """Mutate and run forever; report each execution on stdout (the supervisor watches)."""
    try:  # die with the supervisor (PR_SET_PDEATHSIG = SIGKILL)
        import ctypes

        ctypes.CDLL(None).prctl(1, 9)
    except (OSError, AttributeError):
        pass
    rng = random.Random(seed)
    seeds = load_corpus(target)
    path = work / FILE_NAMES[target]
    out = sys.stdout
    i = 0
    while True:
        base = rng.choice(seeds)
        r = rng.random()
        flip = target == "native" and r < 0.25
        data = flip_checksummed(rng, base) if flip else mutate(rng, base, seeds, target)
        if target == "native" and 0.25 <= r < 0.6 and data is not None:
            data = fix_checksums(data)  # past the checksums, into the structure
        if data is None:
            continue
        path.write_bytes(data)
        out.write("start\n")
        out.flush()
        t = time.perf_counter()
        try:
            status = run_target(target, path)
            if flip and status == "ok":
                raise Finding("a bit flipped inside a checksummed region was read without an error")
        except Finding as f:
            status = "finding"
            keep = findings / f"finding-{seed}-{i}{''.join(path.suffixes) or '.bin'}"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_bytes(data)
            keep.with_suffix(keep.suffix + ".txt").write_text(str(f) + "\n")
        out.write(f"done {status} {time.perf_counter() - t:.4f}\n")
        out.flush()
        i += 1


# ---- supervisor ------------------------------------------------------------------------


def campaign(target: str, seconds: float, seed: int, findings: Path, hang_s: float = HANG_S) -> dict:
    """Run ``target`` for ``seconds``; returns the counts."""
    stats = {"target": target, "seconds": seconds, "seed": seed, "execs": 0, "ok": 0, "refused": 0,
             "findings": 0, "crashes": 0, "hangs": 0, "slowest_s": 0.0}
    end = time.monotonic() + seconds
    wseed = seed
    with tempfile.TemporaryDirectory(prefix="reclaimlab-fuzz-") as tmp:
        work = Path(tmp)
        while time.monotonic() < end:
            env = dict(os.environ, RECLAIMLAB_MAX_MEMORY=os.environ.get("RECLAIMLAB_MAX_MEMORY", "4G"))
            with open(work / "stderr", "wb") as err:
                proc = subprocess.Popen([sys.executable, __file__, "--worker", target, "--seed", str(wseed),
                                         "--work", str(work), "--out", str(findings)],
                                        stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                        env=env, start_new_session=True)
            fd = proc.stdout.fileno()
            buf, started, why = b"", None, None
            while time.monotonic() < end and why is None:
                r, _, _ = select.select([fd], [], [], 0.5)
                if not r:
                    if started is not None and time.monotonic() - started > hang_s:
                        stats["hangs"] += 1
                        why = ("hang", f"no answer in {hang_s:g} s")
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    proc.wait()
                    stats["crashes"] += 1
                    tail = (work / "stderr").read_bytes().decode(errors="replace")[-4000:]
                    why = ("crash", f"the worker died (exit {proc.returncode})\n{tail}")
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line == b"start":
                        started = time.monotonic()
                    elif line.startswith(b"done "):
                        _, status, secs = line.decode().split()
                        stats["execs"] += 1
                        stats[status if status in ("ok", "refused") else "findings"] += 1
                        stats["slowest_s"] = max(stats["slowest_s"], float(secs))
                        started = None
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
            proc.stdout.close()
            if why is None:
                break
            keep(work, target, findings, f"{why[0]}-{wseed}", why[1])
            wseed += 1000  # a new worker continues with another stream of inputs
    stats["rate"] = round(stats["execs"] / seconds, 1)
    stats["slowest_s"] = round(stats["slowest_s"], 3)
    return stats


def keep(work: Path, target: str, findings: Path, name: str, why: str) -> None:
    src = work / FILE_NAMES[target]
    findings.mkdir(parents=True, exist_ok=True)
    dst = findings / f"{name}{''.join(src.suffixes)}"
    if src.exists():
        shutil.copyfile(src, dst)
    dst.with_suffix(dst.suffix + ".txt").write_text(why + "\n")


def replay(root: Path) -> int:
    """Run every kept input under ``root/TARGET/``; print the ones that still misbehave."""
    bad = 0
    for target in TARGETS:
        d = root / target
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.suffix == ".txt" or not p.is_file():
                continue
            with tempfile.TemporaryDirectory(prefix="reclaimlab-fuzz-") as tmp:
                f = Path(tmp) / FILE_NAMES[target]
                shutil.copyfile(p, f)
                try:
                    print(f"{target} {p.name}: {run_target(target, f)}")
                except Finding as e:
                    bad += 1
                    print(f"{target} {p.name}: FINDING {str(e).splitlines()[0]}")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="all", help="one of " + ", ".join(TARGETS) + ", or all")
    ap.add_argument("--seconds", type=float, default=60.0, help="per target (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang", type=float, default=HANG_S, help="seconds one input may take (default 20)")
    ap.add_argument("--out", type=Path, default=None, help="where findings go (default fuzz/findings/TARGET)")
    ap.add_argument("--json", action="store_true", help="print each target's counts as JSON")
    ap.add_argument("--replay", type=Path, metavar="DIR", help="replay DIR/TARGET/* instead of fuzzing")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.seed, a.work, a.out)
        return 0
    if a.replay:
        return replay(a.replay)
    targets = TARGETS if a.target == "all" else a.target.split(",")
    found = 0
    for t in targets:
        if t not in TARGETS:
            ap.error(f"unknown target {t}")
        out = a.out / t if a.out else HERE / "findings" / t
        s = campaign(t, a.seconds, a.seed, out, a.hang)
        n = s["findings"] + s["crashes"] + s["hangs"]
        found += n
        if a.json:
            print(json.dumps(s), flush=True)
        else:
            print(f"{t:10} {s['execs']:>9,} inputs in {a.seconds:g} s ({s['rate']:,.0f}/s): {s['ok']:,} accepted, "
                  f"{s['refused']:,} refused in one line, {s['findings']} findings, {s['crashes']} crashes, "
                  f"{s['hangs']} hangs; slowest {s['slowest_s']} s" + (f"; kept in {out}" if n else ""), flush=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
