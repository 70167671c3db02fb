#!/usr/bin/env python3
"""Regenerate the tenants-and-writeback tables of docs/validation.md: workloads in several
cgroups and workloads that write, on the real kernel (QEMU, one guest at a time; MGLRU on
and off, 3 boots each) and in the simulator, per counter and per cgroup.

    python scripts/validate_tenants.py --out validation-runs-tenants/          # boot what is missing, render
    python scripts/validate_tenants.py --out validation-runs-tenants/ --render-only
    python scripts/validate_tenants.py --out validation-runs-tenants/ --resimulate   # after a model change

The workloads are generated here, deterministically, as native traces in OUT/traces/:

- ``tenants``: cgroup ``a`` reads and writes (pwrite, 20 %) a Zipf(0.8) set of 12,000 file
  pages; cgroup ``b`` scans 8,000 other pages of the file through a shared mapping and
  keeps 3,000 anonymous pages; bursts of 50 accesses alternate; each cgroup has
  ``memory.max`` 32 MiB.
- ``writer``: one cgroup (``memory.max`` 32 MiB) appends 4 KiB pages to a log of 24,000
  pages through pwrite, re-reads the last 64 pages it wrote every 16 appends, and reads a
  random older page every 4: dirty pages, writeback and reclaim meeting dirty folios. The
  simulator's disk is the guest's, as measured (``--disk-write measured --disk-read
  measured``).
- ``tpcc1``: the ``tpcc-stock-level`` scenario's own stream at scale 1 (three cgroups, the
  secondaries' caches idle; whole-machine reclaim in a 1,152 MiB guest).
- ``tpcc``: the same at scale 0.125 (three cgroups,
  the secondaries' caches idle; whole-machine reclaim in a 256 MiB guest): seed 001's
  mechanism (docs/validation.md, "Seed 001's mechanism on 6.12").
- ``protected``: cgroup ``hi`` (``memory.low`` 96 MiB) loops over 20,000 file pages, ``lo``
  over 60,000 others, interleaved, with no limit: whole-machine reclaim in a 320 MiB guest
  must take from ``lo`` and leave ``hi``'s loop cached.

Each finished configuration's result (``reclaimlab validate --json``'s object) is kept in
OUT/NAME-mglru-MODE.json, so an interrupted run resumes with the next one. The tables
replace the block between the markers below in docs/validation.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

from reclaimlab import _core
from reclaimlab.kernel import KSWAPD_WAKEUP_MODES
from reclaimlab.kernel.experiment import KSWAPD_WAKEUP_HELP, revalidate, validate, wakeup_note
from reclaimlab.kernel.run import Setup

import _doc

FILE, SYSCALL, WRITE = 2, 4, 1
BEGIN, END = "<!-- BEGIN GENERATED: scripts/validate_tenants.py -->", "<!-- END GENERATED: scripts/validate_tenants.py -->"
LAB = {"read_ahead_kb": 0, "fault_around_bytes": 4096, "thp": "never"}


def zipf_pages(rng: np.random.Generator, n: int, s: float, size: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** s
    return rng.choice(n, size=size, p=p / p.sum())


def write_trace(path: Path, pages, flags, cgroups, names, files) -> None:
    _core.trace_write(str(path), np.asarray(pages, "<u4").tobytes(), np.asarray(flags, np.uint8).tobytes(), names[0],
                      files, cgroup_names=names, cgroup_ids=np.asarray(cgroups, np.uint8).tobytes())


def gen_tenants(path: Path) -> None:
    rng = np.random.default_rng(7)
    pages, flags, cgs = [], [], []
    loop, anon = 12_000, 0
    for burst in range(2_400):
        if burst % 2 == 0:
            for pg in zipf_pages(rng, 12_000, 0.8, 50):
                pages.append(int(pg))
                flags.append(FILE | SYSCALL | (WRITE if rng.random() < 0.2 else 0))
                cgs.append(0)
        else:
            for k in range(50):
                if k % 5 == 0:
                    pages.append(20_000 + anon % 3_000)
                    flags.append(WRITE if anon < 3_000 else 0)
                    anon += 1
                else:
                    pages.append(loop)
                    flags.append(FILE)
                    loop = 12_000 if loop + 1 >= 20_000 else loop + 1
                cgs.append(1)
    write_trace(path, pages, flags, cgs, ["a", "b"], [("data", 0, 20_000)])


def gen_writer(path: Path) -> None:
    rng = np.random.default_rng(11)
    pages, flags = [], []
    for head in range(24_000):
        pages.append(head)
        flags.append(FILE | SYSCALL | WRITE)
        if head % 16 == 15:
            pages.extend(range(max(0, head - 63), head + 1))
            flags.extend([FILE | SYSCALL] * (head + 1 - max(0, head - 63)))
        if head % 4 == 3:
            pages.append(int(rng.integers(head + 1)))
            flags.append(FILE | SYSCALL)
    write_trace(path, pages, flags, [0] * len(pages), ["wl"], [("log", 0, 24_000)])


def gen_protected(path: Path) -> None:
    """``hi`` loops over 20,000 pages (78 MiB), ``lo`` over 60,000 others (234 MiB), twice
    each, 50 of ``hi``'s reads for every 150 of ``lo``'s."""
    pages, flags, cgs = [], [], []
    hi = np.tile(np.arange(20_000), 2)
    lo = np.tile(np.arange(20_000, 80_000), 2)
    for k in range(hi.size // 50):
        pages.extend(hi[50 * k:50 * (k + 1)].tolist())
        cgs.extend([0] * 50)
        pages.extend(lo[150 * k:150 * (k + 1)].tolist())
        cgs.extend([1] * 150)
    flags = [FILE | SYSCALL] * len(pages)
    write_trace(path, pages, flags, cgs, ["hi", "lo"], [("data", 0, 80_000)])


#: (name, label, generator of its trace or a workload spec, Setup keywords)
WORKLOADS = [
    ("tpcc1", "tpcc-stock-level at scale 1 (8–25 min a boot under TCG)",
     "scenario:name=tpcc-stock-level,scale=1,access_us=0", {"memory": "none", "guest_mb": 1152}),
    ("tpcc", "tpcc-stock-level at scale 0.125", "scenario:name=tpcc-stock-level,scale=0.125,access_us=0",
     {"memory": "none", "guest_mb": 256}),
    ("tenants", "two cgroups, writes, anon", gen_tenants, {"memory": "32M"}),
    # The guest's disk on its own clock, reads and writes (docs/validation.md, "The writer's
    # dirty folios"): its boots carry the disk's statistics.
    ("writer", "log writer", gen_writer, {"memory": "32M", "disk_write": "measured", "disk_read": "measured"}),
    ("protected", "memory.low under whole-machine reclaim", gen_protected,
     {"memory": "none", "guest_mb": 320, "cgroup_set": ("cgroup.hi.memory.low=96M",)}),
]


def setup_of(out: Path, name: str, mglru: str, boots: int) -> Setup:
    _, _, gen, kw = next(w for w in WORKLOADS if w[0] == name)
    kw = {"boots": boots, **kw}  # a workload may fix its own number of boots
    if isinstance(gen, str):
        return Setup(workload=gen, mglru=mglru, **LAB, **kw)
    trace = out / "traces" / f"{name}.rcl"
    if not trace.exists():
        trace.parent.mkdir(parents=True, exist_ok=True)
        gen(trace)
    return Setup(workload=f"trace:path={trace}", mglru=mglru, **LAB, **kw)


def configs(workloads):
    for name, label, _, _ in workloads:
        for mglru in ("on", "off"):
            yield name, label, mglru, f"{name}-mglru-{mglru}"


def run(out: Path, boots: int, workloads=None, setup=None) -> None:
    """Validate each configuration not yet in ``out`` (``setup(out, name, mglru, boots)``
    gives its :class:`Setup`)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, label, mglru, key in configs(workloads or WORKLOADS):
        path = out / f"{key}.json"
        if path.exists():
            continue
        print(f"{label}, MGLRU {mglru}: {boots} boots", file=sys.stderr)
        res = validate((setup or setup_of)(out, name, mglru, boots), out, progress=True)
        res["label"] = label
        path.write_text(json.dumps(res, indent=1))


def resimulate(out: Path, workloads=None, setup=None) -> None:
    for name, label, mglru, key in configs(workloads or WORKLOADS):
        path = out / f"{key}.json"
        if path.exists():
            old = json.loads(path.read_text())
            print(f"{label}, MGLRU {mglru}: simulating again", file=sys.stderr)
            res = revalidate((setup or setup_of)(out, name, mglru, old["boots"]), out, old["logs"])
            res["label"] = label
            path.write_text(json.dumps(res, indent=1))


def cell(r: dict) -> str:
    g = "" if r.get("met") is None else (" ✓" if r["met"] else " ✗")
    err = "—" if r["rel_error"] == float("inf") or not r["real_mean"] else f"{r['rel_error']:+.0%}"
    return f"{r['real_mean']:,.0f} ± {r['real_sd']:,.0f} / {r['sim']:,.0f} ({err}){g}"


#: A workload's section title in a rendered block: ``**LABEL** (`NAME`; ...``.
TITLE = re.compile(r"^\*\*.+?\*\* \(`([^`]+)`;")
#: A graded cell: ``KERNEL ± SD / SIM (ERROR) ✓`` (or ✗).
GRADED = re.compile(r"([\d,.]+) ± [\d,.]+ / ([\d,.]+) \([^)]*\) ([✓✗])")


def old_sections(block: str) -> dict[str, str]:
    """Each workload's section of a block rendered before (its title line through its
    table), by workload name."""
    sections: dict[str, list[str]] = {}
    name = None
    for line in block.splitlines():
        m = TITLE.match(line)
        if m:
            name = m.group(1)
            sections[name] = [line]
        elif name is not None:
            if not line.strip() and any(x.startswith("|") for x in sections[name]):
                name = None
            else:
                sections[name].append(line)
    return {k: "\n".join(v).strip("\n") for k, v in sections.items()}


def tally(section: str) -> tuple[int, int, int]:
    """(met, graded, zero on both sides) of a rendered section's graded cells."""
    cells = GRADED.findall(section)
    num = lambda x: float(x.replace(",", ""))  # noqa: E731
    return (sum(g == "✓" for *_, g in cells), len(cells),
            sum(num(k) == 0 and num(m) == 0 for k, m, _ in cells))


def kept_columns(section: str) -> dict[str, tuple[str, dict[tuple[str, str], str]]]:
    """A rendered section's columns by MGLRU mode: (its header, {(table, counter): cell})."""
    cols: dict[str, tuple[str, dict[tuple[str, str], str]]] = {}
    modes: list[str] = []
    for line in section.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if line.startswith("| table | counter |"):
            modes = [h.split()[1] for h in parts[2:]]
            cols = {m: (h, {}) for m, h in zip(modes, parts[2:])}
        elif line.startswith("| ") and modes and len(parts) == 2 + len(modes):
            for m, c in zip(modes, parts[2:]):
                if c:
                    cols[m][1][(parts[0], parts[1])] = c
    return cols


def render(out: Path, workloads=None, kept: dict[str, str] | None = None) -> str:
    """The block: every workload with results in ``out``. One without keeps its section of
    the previous render (``kept``, by name), and one with results for one MGLRU mode only
    keeps the other mode's column; kept cells are counted as they stand and named at the
    top."""
    lines, met, graded, zeros = [], 0, 0, 0
    carried = []
    for name, label, _, _ in workloads or WORKLOADS:
        res = {m: json.loads((out / f"{name}-mglru-{m}.json").read_text())
               for m in ("on", "off") if (out / f"{name}-mglru-{m}.json").exists()}
        old = kept.get(name) if kept else None
        if not res:
            if old:
                lines += [old, ""]
                m, g, z = tally(old)
                met, graded, zeros = met + m, graded + g, zeros + z
                carried.append(f"`{name}`")
            continue
        cols = {m: c for m, c in kept_columns(old).items() if m not in res} if old else {}
        carried += [f"`{name}` MGLRU {m}" for m in cols]
        modes = [m for m in ("on", "off") if m in res or m in cols]
        any_res = next(iter(res.values()))
        heads = [f"MGLRU {m} ({res[m]['policy']})" if m in res else cols[m][0] for m in modes]
        lines += [f"**{label}** (`{name}`; kernel {any_res['kernel']}; kernel mean ± sd over "
                  f"{any_res['boots']} boots / simulated (error), ✓/✗ against the target)", "",
                  "| table | counter | " + " | ".join(heads) + " |",
                  "|---|---|" + "---|" * len(modes)]
        tables = [("vmstat", "rows")] + [(f"cgroup {c}", c) for c in any_res.get("cgroup_rows", {})]
        tables += [(t, None) for t in dict.fromkeys(t for _, cs in cols.values() for t, _ in cs)
                   if t not in {t for t, _ in tables}]
        for title, key in tables:
            per = {m: (r["rows"] if key == "rows" else r.get("cgroup_rows", {}).get(key, [])) for m, r in res.items()}
            names = list(dict.fromkeys(c for m in modes for c in (
                [x["counter"] for x in per[m]] if m in res else [c for t, c in cols[m][1] if t == title])))
            for counter in names:
                cells = []
                for m in modes:
                    if m not in res:
                        text = cols[m][1].get((title, counter), "")
                        cells.append(text)
                        k, g, z = tally(text)
                        met, graded, zeros = met + k, graded + g, zeros + z
                        continue
                    row = next((x for x in per[m] if x["counter"] == counter), None)
                    cells.append(cell(row) if row else "")
                    if row and row.get("met") is not None:
                        graded += 1
                        met += bool(row["met"])
                        zeros += not row["real_mean"] and not row["sim"]
                lines.append(f"| {title} | {counter} | " + " | ".join(cells) + " |")
        lines.append("")
    note = "" if not carried else f" Not booted for this render, their rows as rendered before: {', '.join(carried)}."
    modes = [json.loads(p.read_text()).get("kswapd_wakeup") for p in out.glob("*-mglru-*.json")]
    note += (" " + wakeup_note(modes)) if wakeup_note(modes) else ""
    lines.insert(0, f"{met} of {graded} graded cells met, {zeros} of them zero on both sides (a counter the "
                    f"workload never moves, e.g. an idle cgroup's refaults).{note}\n")
    return "\n".join(lines)


def main(doc=None, workloads=None, setup=None, default_out="validation-runs-tenants", markers=(BEGIN, END),
         extra=None, kswapd_wakeup="model") -> int:
    """The command line of this script and of those that reuse it with their own workloads
    (``setup`` builds a configuration's Setup, ``markers`` delimit their block, ``extra(out,
    previous)`` renders more markdown after the tables, given the block as rendered before
    ("" if the doc has none)."""
    ap = argparse.ArgumentParser(description=(doc or __doc__).split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(default_out))
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--resimulate", action="store_true")
    ap.add_argument("--doc", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "validation.md")
    ap.add_argument("--only", metavar="NAME", action="append",
                    help="only this workload (repeatable); its table is printed, the document is left alone")
    ap.add_argument("--wb-sample", action="store_true",
                    help="boot with the disk and writeback sampler (reclaimlab validate --wb-sample)")
    ap.add_argument("--kswapd-wakeup", choices=KSWAPD_WAKEUP_MODES, default=kswapd_wakeup, help=KSWAPD_WAKEUP_HELP)
    a = ap.parse_args()
    workloads = workloads or WORKLOADS
    if a.only:
        unknown = set(a.only) - {w[0] for w in workloads}
        if unknown:
            ap.error(f"--only: no workload {', '.join(sorted(unknown))} (known: {', '.join(w[0] for w in workloads)})")
        workloads = [w for w in workloads if w[0] in a.only]
    if a.wb_sample or a.kswapd_wakeup != "model":
        base = setup or setup_of

        def setup(out, name, mglru, boots, base=base):
            s = base(out, name, mglru, boots)
            s.wb_sample = s.wb_sample or a.wb_sample
            s.kswapd_wakeup = a.kswapd_wakeup
            return s
    if a.resimulate:
        resimulate(a.out, workloads, setup)
    elif not a.render_only:
        run(a.out, a.boots, workloads, setup)
    text = a.doc.read_text()
    begin, end = markers
    # A full render keeps the previous rows of a workload that has no results in --out.
    previous = _doc.block(text, begin, end)
    kept = old_sections(previous) if previous is not None and not a.only else None
    table = render(a.out, workloads, kept) + (extra(a.out, previous or "") if extra else "")
    if not a.only and begin in text and end in text:
        a.doc.write_text(_doc.place(text, table, begin, end))
        print(f"updated {a.doc}", file=sys.stderr)
    else:
        print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(kswapd_wakeup="measured"))
