"""Workload specs -> the exact page sequence both the guest and the simulator replay.

A spec is ``NAME[:key=value,...]``; sizes default relative to the cgroup's memory limit
(``--memory-max``). The generators run on the host only: the guest program replays the
sequence access by access (docs/kernel.md, "One sequence, two replays").

- ``seqloop``: ``pages`` (1.5 x memory), ``passes`` (3): a cyclic scan through ``pread``
  (the crates' ``loop`` generator).
- ``zipf``: ``pages`` (1.5 x memory), ``reads`` (8 x pages), ``s`` (0.9), ``seed`` (42):
  4 KiB ``pread``s with Zipf(s) ranks (the crates' ``zipf`` generator).
- ``zipfmap``: the same sequence through a shared read-only mmap (major faults).
- ``anon``: ``pages`` (1.5 x memory), ``hot`` (0.5, fraction of pages), ``rounds`` (10),
  ``cold`` (0.05, fraction of the cold pages read per round), ``seed`` (42): write every
  page once, then per round read the hot set in shuffled 2 MiB chunks plus a random
  sample of cold pages.
- ``hotcold``: ``pages`` (memory / 4), ``hot`` (0.1), ``warm`` (0.3) fractions of the pages,
  the rest cold; ``period_ms`` (100), ``warm_period_ms`` (5000), ``duration_s`` (60),
  ``seed`` (42): write every page once, then every ``period_ms`` read the hot set (shuffled
  2 MiB chunks) and sleep, every ``warm_period_ms`` also sweep the warm set; the cold set
  is never touched again. Idle memory on a real clock, for DAMON_RECLAIM: the guest
  sleeps, the simulator's trace carries the same time.
- ``trace``: ``path``, ``format``, ``kind``, ``access_us``: any trace reclaimlab reads.
  Its file pages become one data file in the order of their page ids (runs of consecutive
  pages stay runs, so readahead sees them); a read() or write() of several pages is
  replayed one page at a time; writes dirty the data file (the guest's disk is writable
  for the boot, each boot starts from the same contents). Its cgroups (up to
  ``MAX_CGROUPS``) become cgroups of the guest, one process each, taking turns in the
  trace's order; an anonymous page belongs to one cgroup's process. The trace's
  ``memory.reclaim`` writes (crates/trace/FORMAT.md, "Op table") run at the same points,
  written by the process whose turn it is. A timed
  trace's gaps, or ``access_us`` per access of an untimed one, become sleeps of at least
  1 ms in the guest and the same time in the simulator's trace (as ``hotcold``'s).
- ``program:NAME``: ``size`` (the program's factor x memory), ``seed`` (42): a real
  program (python/reclaimlab/programs, docs/programs.md) run in the guest itself, chrooted
  in a root that holds its binary, libraries and generated input; the simulator replays
  its recording (``reclaimlab record``, made once and cached).
- ``thpscale``: ``threads`` (``1+4``: thread counts joined by ``+``, run in order in one
  boot), ``madvise`` (1), ``mapsize_pct`` (80): mmtests' thpscale (Mel Gorman's __GFP_THISNODE mmtests report (Dec 2018)) run by the
  guest program ``guest/thp.c`` itself, not replayed: per thread count fill anonymous
  memory, punch a hole in every 2 MiB, read a file into the page cache, then fault a
  (``MADV_HUGEPAGE``) region stride by stride. Sizes follow the guest's MemTotal; the
  model is crates/core's ``thpscale`` scenario with the same parameters
  (:mod:`reclaimlab.kernel.thp_compare`). Whole machine (``--memory-max none``). Both THP
  workloads take ``proactiveness`` (-1: the kernel's vm.compaction_proactiveness, 20).
- ``usemem``: ``threads`` (1), ``cache_pct`` (50), ``usemem_pct`` (70), ``passes`` (10),
  ``defrag`` (always): ``usemem-stress-numa-compact``: page cache on every node, then
  ``threads`` tasks on node 0 write an anonymous region larger than a node. Also run by
  ``guest/thp.c``; whole machine.
- ``scenario``: ``name``, ``scale`` (1), ``seed`` (42), ``access_us`` (the scenario's
  ``cost.access_ns``) and the scenario's workload parameters (e.g. ``workload=canneal``
  for ``damon-reclaim-parsec``): a built-in scenario's access stream, as ``trace``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..programs.prepare import Recorded
from . import KernelError

PAGE = 4096
# Access flags (crates/trace/src/record.rs).
WRITE, FILE, SYSCALL, READ_CONT = 1, 2, 4, 8
#: The guest program's page field is 28 bits (guest/wl.c).
MAX_PAGES = 1 << 28

NAMES = ("seqloop", "zipf", "zipfmap", "anon", "hotcold", "trace", "scenario", "program", "thpscale", "usemem")
#: Workloads the guest program guest/thp.c runs itself (no page sequence to replay).
THP_WORKLOADS = ("thpscale", "usemem")
#: transparent_hugepage/defrag's modes (mm/huge_memory.c defrag_store, 6.12).
DEFRAG_MODES = ("always", "defer", "defer+madvise", "madvise", "never")
#: Cgroups a workload may use (one guest process each; guest/wl.c's MAXCG).
MAX_CGROUPS = 8
#: The cgroup of a workload that names none (the simulator's name for it too).
CGROUP = "wl"
#: The longest sleep one op holds (the simulator's gap is a u32 of nanoseconds).
MAX_SLEEP_US = 4_000_000


@dataclass
class Workload:
    """A page sequence: ``pages[i]`` (file pages 0..file_pages, anon pages 0..anon_pages,
    two separate spaces) with ``flags[i]``; ``phases`` names the phases, ``bounds`` their
    end indices."""

    spec: str
    pages: np.ndarray
    flags: np.ndarray
    file_pages: int
    anon_pages: int
    phases: list[str] = field(default_factory=list)
    bounds: list[int] = field(default_factory=list)
    #: Microseconds the program sleeps before each access (None: it never sleeps).
    sleep_us: np.ndarray | None = None
    #: The cgroups, by index; ``cgroup_ids[i]`` is access i's (None: all in ``cgroups[0]``).
    #: The root cgroup is ``""`` (the guest runs its process outside any child cgroup).
    cgroups: list[str] = field(default_factory=lambda: [CGROUP])
    cgroup_ids: np.ndarray | None = None
    #: A real program (``program:NAME``): the guest runs it, the simulator replays its
    #: recording; ``pages`` and ``flags`` are then empty.
    program: Recorded | None = None
    #: The trace's ``memory.reclaim`` writes: ``(before access, cgroup index, bytes,
    #: swappiness or None)``, in order.
    reclaims: list[tuple[int, int, int, int | None]] = field(default_factory=list)
    #: A THP workload (``thpscale``, ``usemem``): its parameters (``kind`` and the model
    #: scenario's), which the guest's /thp and the model both take; ``pages`` is empty.
    thp: dict | None = None

    def thp_argv(self, data: str = "/data/data") -> list[str]:
        """The guest's ``/thp`` command line (guest/thp.c) for a THP workload."""
        t = self.thp or {}
        proact = str(t.get("proactiveness", -1))
        if t.get("kind") == "thpscale":
            return ["thpscale", data, str(int(t["madvise"])), str(t["mapsize_pct"]), ",".join(map(str, t["threads"])),
                    proact]
        return ["usemem", data, t["defrag"], str(t["threads"]), str(t["cache_pct"]), str(t["usemem_pct"]),
                str(t["passes"]), proact]

    @property
    def writes_files(self) -> bool:
        """True when some access writes a file page (the data disk must be writable; a
        real program's always is)."""
        if self.program is not None:
            return True
        return bool(np.any((self.flags & FILE) != 0) and np.any(self.flags[(self.flags & FILE) != 0] & WRITE))

    def __len__(self) -> int:
        return self.program.records if self.program is not None else int(self.pages.size)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.partition(":")
    name = name.strip()
    if name not in NAMES:
        raise KernelError(f"unknown workload {name!r} (known: {', '.join(NAMES)})")
    params: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        k, eq, v = item.partition("=")
        if not eq:
            raise KernelError(f"workload {spec!r}: expected key=value, got {item!r}")
        params[k.strip()] = v.strip()
    return name, params


def _num(params: dict[str, str], key: str, default: float, name: str, integer: bool = True,
         lo: float = 0, hi: float = float("inf")) -> float:
    raw = params.pop(key, None)
    try:
        v = default if raw is None else (int(raw) if integer else float(raw))
    except ValueError:
        raise KernelError(f"workload {name}: {key}={raw!r} is not a number") from None
    if not lo <= v <= hi:
        raise KernelError(f"workload {name}: {key}={v} out of range [{lo}, {hi}]")
    return v


def _gen(pages: int, accesses: int, pattern: str, kind: str, seed: int) -> np.ndarray:
    from .. import generate

    src = generate({"regions": [{"name": "data", "pages": pages, "kind": kind}],
                    "phases": [{"name": "p", "accesses": accesses, "streams": [{"region": "data", "pattern": pattern}]}]},
                   seed)
    out = np.empty(accesses, dtype=np.uint32)
    n = 0
    while n < accesses:
        recs = src.take(min(1 << 20, accesses - n))
        if not recs:
            break
        out[n:n + len(recs)] = [r[0] for r in recs]
        n += len(recs)
    return out[:n]


def build(spec: str, memory: int, guest_bytes: int | None = None) -> Workload:
    """The page sequence of ``spec`` for a cgroup limit of ``memory`` bytes (a THP
    workload's data file follows ``guest_bytes``, the guest's RAM: its sizes are shares
    of the guest's MemTotal, which is less)."""
    if spec.split(":", 1)[0].strip() == "program":
        return _from_program(spec, memory)
    name, params = parse_spec(spec)
    if name in THP_WORKLOADS:
        wl = _thp_workload(spec, name, params, guest_bytes or memory)
        if params:
            raise KernelError(f"workload {name}: unknown parameter(s) {', '.join(sorted(params))}")
        return wl
    default_pages = int(1.5 * memory) // PAGE
    if name == "trace":
        wl = _from_trace(spec, params)
    elif name == "scenario":
        wl = _from_scenario(spec, params)
    elif name == "seqloop":
        pages = int(_num(params, "pages", default_pages, name, lo=1, hi=MAX_PAGES - 1))
        passes = int(_num(params, "passes", 3, name, lo=1, hi=1000))
        seq = np.tile(np.arange(pages, dtype=np.uint32), passes)
        wl = Workload(spec, seq, np.full(seq.size, FILE | SYSCALL, np.uint8), pages, 0,
                      [f"pass{i + 1}" for i in range(passes)], [pages * (i + 1) for i in range(passes)])
    elif name in ("zipf", "zipfmap"):
        pages = int(_num(params, "pages", default_pages, name, lo=1, hi=MAX_PAGES - 1))
        reads = int(_num(params, "reads", 8 * pages, name, lo=1, hi=1 << 31))
        s = _num(params, "s", 0.9, name, integer=False, lo=0.01, hi=10)
        seed = int(_num(params, "seed", 42, name, hi=2**63))
        mapped = name == "zipfmap"
        seq = _gen(pages, reads, f"zipf:{s}", "file-mapped" if mapped else "file-read", seed)
        fl = FILE if mapped else FILE | SYSCALL
        wl = Workload(spec, seq, np.full(seq.size, fl, np.uint8), pages, 0, [name], [seq.size])
    elif name == "hotcold":
        wl = _hotcold(spec, params, memory)
    else:  # anon
        pages = int(_num(params, "pages", default_pages, name, lo=1, hi=MAX_PAGES - 1))
        hot = _num(params, "hot", 0.5, name, integer=False, lo=0, hi=1)
        rounds = int(_num(params, "rounds", 10, name, lo=0, hi=10000))
        cold = _num(params, "cold", 0.05, name, integer=False, lo=0, hi=1)
        seed = int(_num(params, "seed", 42, name, hi=2**63))
        wl = _anon(spec, pages, hot, rounds, cold, seed)
    if params:
        raise KernelError(f"workload {name}: unknown parameter(s) {', '.join(sorted(params))}")
    if len(wl) == 0:
        raise KernelError(f"workload {spec!r} has no accesses")
    return wl


def thread_counts(raw: str, name: str, hi: int = 64) -> list[int]:
    """``1+4+8`` -> [1, 4, 8]: thread counts joined by ``+`` (a spec's items are split at
    commas), each 1..hi."""
    try:
        counts = [int(x) for x in raw.split("+")]
    except ValueError:
        raise KernelError(f"workload {name}: threads={raw!r}: give thread counts joined by '+', e.g. 1+4") from None
    bad = [n for n in counts if not 1 <= n <= hi]
    if bad:
        raise KernelError(f"workload {name}: threads={raw!r}: each count must be 1..{hi} (guest/thp.c's MAXT)")
    return counts


def _thp_workload(spec: str, name: str, params: dict[str, str], guest_bytes: int) -> Workload:
    """thpscale/usemem: no page sequence, the guest's /thp runs them (guest/thp.c). The
    data file holds what they read: MAPSIZE + 16 MiB (thpscale's work file,
    ``THPSCALE_MAPSIZE`` = ``mapsize_pct`` % of MemTotal) or ``cache_pct`` % of MemTotal,
    sized from the guest's RAM (MemTotal is less)."""
    empty = np.empty(0, dtype=np.uint32)
    if name == "thpscale":
        threads = thread_counts(params.pop("threads", "1+4"), name)
        madvise = int(_num(params, "madvise", 1, name, lo=0, hi=1))
        mapsize_pct = int(_num(params, "mapsize_pct", 80, name, lo=1, hi=100))
        t = {"kind": name, "threads": threads, "madvise": bool(madvise), "mapsize_pct": mapsize_pct}
        file_pages = (guest_bytes * mapsize_pct // 100 + (16 << 20)) // PAGE
        phases = [f"threads{n}" for n in threads]
    else:
        threads = int(_num(params, "threads", 1, name, lo=1, hi=64))
        cache_pct = int(_num(params, "cache_pct", 50, name, lo=0, hi=100))
        usemem_pct = int(_num(params, "usemem_pct", 70, name, lo=1, hi=100))
        passes = int(_num(params, "passes", 10, name, lo=0, hi=1000))
        defrag = params.pop("defrag", "always")
        if defrag not in DEFRAG_MODES:
            raise KernelError(f"workload usemem: defrag={defrag!r}: transparent_hugepage/defrag takes "
                              f"{', '.join(DEFRAG_MODES)}")
        t = {"kind": name, "threads": threads, "cache_pct": cache_pct, "usemem_pct": usemem_pct, "passes": passes,
             "defrag": defrag}
        file_pages = max(1, guest_bytes * cache_pct // 100 // PAGE)
        phases = ["cache", "usemem"]
    # vm.compaction_proactiveness (0..100, mm/compaction.c proc_dointvec_minmax, 6.12);
    # -1 keeps the kernel's (20).
    t["proactiveness"] = int(_num(params, "proactiveness", -1, name, lo=-1, hi=100))
    return Workload(spec, empty, empty.astype(np.uint8), file_pages, 0, phases, [0] * len(phases), cgroups=[""], thp=t)


def _hot_rounds(rng: np.random.Generator, nhot: int) -> np.ndarray:
    """The hot set [0, nhot) in shuffled 2 MiB chunks."""
    chunk = (2 << 20) // PAGE
    starts = np.arange(0, nhot, chunk)
    rng.shuffle(starts)
    return np.concatenate([np.arange(s, min(s + chunk, nhot), dtype=np.uint32) for s in starts])


def _anon(spec: str, pages: int, hot: float, rounds: int, cold: float, seed: int) -> Workload:
    rng = np.random.Generator(np.random.PCG64(seed))
    nhot = int(round(hot * pages))
    parts = [np.arange(pages, dtype=np.uint32)]
    flags = [np.full(pages, WRITE, np.uint8)]
    names, bounds = ["fill"], [pages]
    coldpages = np.arange(nhot, pages, dtype=np.uint32)
    for r in range(rounds):
        hotseq = _hot_rounds(rng, nhot) if nhot else np.empty(0, np.uint32)
        k = int(round(cold * coldpages.size))
        coldseq = np.sort(rng.choice(coldpages, size=k, replace=False)).astype(np.uint32) if k else np.empty(0, np.uint32)
        seq = np.concatenate([hotseq, coldseq])
        parts.append(seq)
        flags.append(np.zeros(seq.size, np.uint8))
        names.append(f"round{r + 1}")
        bounds.append(bounds[-1] + seq.size)
    return Workload(spec, np.concatenate(parts), np.concatenate(flags), 0, pages, names, bounds)


def _hotcold(spec: str, params: dict[str, str], memory: int) -> Workload:
    name = "hotcold"
    pages = int(_num(params, "pages", max(64, memory // 4 // PAGE), name, lo=64, hi=MAX_PAGES - 1))
    hot = _num(params, "hot", 0.1, name, integer=False, lo=0, hi=1)
    warm = _num(params, "warm", 0.3, name, integer=False, lo=0, hi=1)
    if hot + warm > 1:
        raise KernelError(f"workload {name}: hot + warm = {hot + warm:g} > 1")
    period = int(_num(params, "period_ms", 100, name, lo=1, hi=MAX_SLEEP_US // 1000))
    warm_period = int(_num(params, "warm_period_ms", 5000, name, lo=period, hi=1 << 31))
    duration = _num(params, "duration_s", 60, name, integer=False, lo=0.001, hi=86400)
    seed = int(_num(params, "seed", 42, name, hi=2**63))
    rng = np.random.Generator(np.random.PCG64(seed))
    nhot, nwarm = max(1, int(round(hot * pages))), int(round(warm * pages))
    rounds = max(1, int(duration * 1000 // period))
    every = max(1, warm_period // period)
    # Pages: hot [0, nhot), warm [nhot, nhot + nwarm), cold after; a 10 s phase each.
    parts, sleeps = [np.arange(pages, dtype=np.uint32)], [np.zeros(pages, np.uint32)]
    flags = [np.full(pages, WRITE, np.uint8)]
    names, bounds, n = ["fill"], [pages], pages
    per_phase = max(1, 10_000 // period)
    for r in range(rounds):
        seq = _hot_rounds(rng, nhot)
        if r and r % every == 0 and nwarm:
            seq = np.concatenate([seq, np.arange(nhot, nhot + nwarm, dtype=np.uint32)])
        sl = np.zeros(seq.size, np.uint32)
        sl[0] = period * 1000
        parts.append(seq)
        sleeps.append(sl)
        flags.append(np.zeros(seq.size, np.uint8))
        n += seq.size
        if (r + 1) % per_phase == 0 or r == rounds - 1:
            names.append(f"t{(r + 1) * period / 1000:g}s")
            bounds.append(n)
    return Workload(spec, np.concatenate(parts), np.concatenate(flags), 0, pages, names, bounds,
                    sleep_us=np.concatenate(sleeps))


#: A workload's think time is slept in pieces of at least this much (nanosleep's own cost
#: under TCG is tens of microseconds).
SLEEP_QUANTUM_NS = 1_000_000


def sleeps_of(dur_ns: np.ndarray) -> np.ndarray:
    """Per access, the microseconds to sleep before it: the time each access takes
    (``dur_ns``, since the one before) gathered into sleeps of at least
    :data:`SLEEP_QUANTUM_NS`, each before the access at which its quantum ends."""
    t = np.cumsum(dur_ns.astype(np.uint64))
    q = t // SLEEP_QUANTUM_NS
    at = np.flatnonzero(np.diff(q, prepend=np.uint64(0)) > 0)
    out = np.zeros(dur_ns.size, np.uint32)
    if at.size:
        amounts = np.diff(t[at], prepend=np.uint64(0)) // 1000
        out[at] = np.minimum(amounts, MAX_SLEEP_US).astype(np.uint32)
    return out


def _access_us(params: dict[str, str], name: str, default: float | None) -> float | None:
    """``access_us`` if given (µs per access), else ``default``."""
    if "access_us" not in params:
        return default
    return _num(params, "access_us", 0, name, integer=False, lo=0, hi=1e6)


def _from_trace(spec: str, params: dict[str, str]) -> Workload:
    from .. import open_trace

    path = params.pop("path", None)
    if not path:
        raise KernelError("workload trace: give path=FILE")
    src = open_trace(path, params.pop("format", None), params.pop("kind", None))
    return _from_source(spec, src, path, _access_us(params, "trace", None))


def _from_program(spec: str, memory: int) -> Workload:
    """``program:NAME[,size=SIZE,seed=N]`` (size: the program's factor x ``memory``)."""
    from ..exceptions import ReclaimlabError
    from ..programs import prepare, scenario

    try:
        name, size, seed = scenario.parse(spec)
        nbytes = scenario.input_bytes(spec, name, size, memory)
    except ReclaimlabError as e:
        raise KernelError(f"workload {e}") from None
    try:
        rec = prepare.recorded(name, nbytes, seed)
    except ReclaimlabError as e:
        raise KernelError(str(e)) from None
    empty = np.empty(0, dtype=np.uint32)
    return Workload(spec, empty, empty.astype(np.uint8), rec.file_pages, rec.anon_pages, ["run"], [0], program=rec)


def _from_scenario(spec: str, params: dict[str, str]) -> Workload:
    from .. import _core

    name = params.pop("name", None)
    if not name:
        raise KernelError("workload scenario: give name=SCENARIO (reclaimlab scenarios)")
    scale = _num(params, "scale", 1.0, "scenario", integer=False, lo=1e-6, hi=1e6)
    seed = int(_num(params, "seed", 42, "scenario", hi=2**63))
    try:
        access_ns = float(_core.scenario_config(name, scale).get("cost.access_ns"))
        wl_params = {k: params.pop(k) for k in list(params) if k != "access_us"}
        src = _core.scenario_source(name, seed, scale, wl_params)
    except Exception as e:  # unknown scenario or parameter: the core's message names it
        raise KernelError(f"workload {spec!r}: {e}") from None
    return _from_source(spec, src, f"scenario {name}", _access_us(params, "scenario", access_ns / 1000))


def _from_source(spec: str, src, label: str, access_us: float | None) -> Workload:
    """A source's accesses as the guest's page spaces; its time (a timed trace's gaps,
    else ``access_us`` per access, else none) as sleeps."""
    pages, flags, gaps, cgs = [], [], [], []
    while True:
        recs = src.take(1 << 20)
        if not recs:
            break
        pages.extend(r[0] for r in recs)
        cgs.extend(r[1] for r in recs)
        flags.extend(r[2] for r in recs)
        gaps.extend(r[3] for r in recs)
    meta = src.meta()  # after the records: a text source learns its cgroups as it reads
    p = np.asarray(pages, dtype=np.uint64)
    f = np.asarray(flags, dtype=np.uint8)
    tick_ps = int(meta.get("tick_ps") or 0)
    if tick_ps:
        sleep = sleeps_of(np.asarray(gaps, dtype=np.uint64) * tick_ps // 1000)
    elif access_us:
        sleep = sleeps_of(np.full(p.size, round(access_us * 1000), np.uint64))
    else:
        sleep = None
    is_file = (f & FILE) != 0
    _check_writes(label, p, f, meta.get("files") or [])
    # A read() of several pages (READ_CONT) runs as one pread per page in the guest.
    f &= np.uint8(~READ_CONT & 0xFF)
    # Two dense spaces. File pages keep their order (a page's offset in the guest's one
    # data file is its rank among the trace's file pages), so readahead sees the trace's
    # runs of consecutive pages; anon pages are numbered in order of first appearance.
    out = np.empty(p.size, dtype=np.uint32)
    uniq, inv = np.unique(p[is_file], return_inverse=True)
    out[is_file] = inv.astype(np.uint32)
    nfile = int(uniq.size)
    uniq, first, inv = np.unique(p[~is_file], return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.size, dtype=np.uint32)
    rank[order] = np.arange(order.size, dtype=np.uint32)
    out[~is_file] = rank[inv]
    nanon = int(uniq.size)
    # An anon page's first access runs as a write: a first read would map the shared zero
    # page in the guest, which allocates nothing (the simulator allocates a page).
    anon_idx = np.flatnonzero(~is_file)
    if anon_idx.size:
        _, first = np.unique(out[anon_idx], return_index=True)
        f[anon_idx[first]] |= WRITE
    if max(nfile, nanon) >= MAX_PAGES:
        raise KernelError(f"{label}: {max(nfile, nanon)} pages exceed the guest program's {MAX_PAGES}")
    if meta.get("madvise"):
        # The guest renumbers anonymous pages densely, so a madvise range has no place there yet.
        raise KernelError(f"{label}: the trace has {len(meta['madvise'])} madvise op(s), which the guest program "
                          f"does not replay; validate the trace without them")
    ops = meta.get("ops") or []
    all_names = list(meta.get("cgroups") or [""])
    op_ids = np.asarray([all_names.index(op[1]) for op in ops], dtype=np.uint16)
    names, ids = _cgroups_of(label, np.asarray(cgs, dtype=np.uint16), all_names, op_ids)
    reclaims = []
    for (at, cg, nbytes, swappiness), cid in zip(ops, op_ids.tolist()):
        idx = names.index(all_names[cid]) if ids is not None else 0
        if nbytes // PAGE >= MAX_PAGES:
            raise KernelError(f"{label}: memory.reclaim of {nbytes} bytes for cgroup {cg!r} exceeds the guest "
                              f"program's {MAX_PAGES} pages")
        reclaims.append((int(at), idx, int(nbytes), swappiness))
    if ids is not None and anon_idx.size:
        # An anon page lives in one process's address space: one cgroup's.
        pairs = np.unique(np.stack([out[anon_idx].astype(np.int64), ids[anon_idx].astype(np.int64)]), axis=1)
        shared = np.unique(pairs[0][np.flatnonzero(np.diff(pairs[0]) == 0)])
        if shared.size:
            raise KernelError(f"{label}: {shared.size} anonymous page(s) are accessed from several cgroups (e.g. the "
                              f"page first touched at access {int(np.flatnonzero(~is_file & (out == shared[0]))[0])}); "
                              f"in the guest each cgroup runs its own process, whose anonymous memory is its own")
    return Workload(spec, out, f, nfile, nanon, ["trace"], [int(p.size)],
                    sleep_us=sleep if sleep is not None and sleep.any() else None, cgroups=names, cgroup_ids=ids,
                    reclaims=reclaims)


def _cgroups_of(label: str, ids: np.ndarray, names: list[str],
                op_ids: np.ndarray | None = None) -> tuple[list[str], np.ndarray | None]:
    """The trace's cgroups as the guest's: ``([CGROUP], None)`` for a trace in one cgroup
    (its name does not matter: the guest's cgroup carries the limit), else the names of
    the cgroups used (by accesses or by ``memory.reclaim`` writes, ``op_ids``) and each
    access's index among them."""
    used = np.unique(np.concatenate([ids, op_ids if op_ids is not None else np.zeros(0, np.uint16)]))
    dense = np.searchsorted(used, ids)
    if used.size <= 1:
        return [CGROUP], None
    named = [names[c] if c < len(names) else str(c) for c in used.tolist()]
    if used.size > MAX_CGROUPS:
        raise KernelError(f"{label}: accesses in {used.size} cgroups ({', '.join(map(repr, named))}); the guest "
                          f"runs at most {MAX_CGROUPS}")
    for n in named:
        if n and (not re.fullmatch(r"[A-Za-z0-9_.-]+", n) or n in (".", "..")):
            raise KernelError(f"{label}: cgroup {n!r} cannot be a guest cgroup (one level, letters, digits, '_', '.', '-')")
    return named, dense.astype(np.uint8)


def _check_writes(label: str, p: np.ndarray, f: np.ndarray, files: list) -> None:
    """A write to a file page must fall in a file the trace declares (its file table), if
    it has one: the guest writes into the data file, which holds only the trace's files."""
    w = ((f & FILE) != 0) & ((f & WRITE) != 0)
    if not files or not w.any():
        return
    first = np.array([x[1] for x in files], dtype=np.uint64)
    end = first + np.array([x[2] for x in files], dtype=np.uint64)
    pw = p[w]
    k = np.searchsorted(first, pw, side="right") - 1
    outside = (k < 0) | (pw >= end[np.maximum(k, 0)])
    if outside.any():
        at = int(np.flatnonzero(w)[np.flatnonzero(outside)[0]])
        raise KernelError(f"{label}: access {at} writes page {int(p[at])}, which no file of the trace holds "
                          f"(its file table names {len(files)} file(s)); a write needs a file the trace created")
