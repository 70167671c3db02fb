"""GET-SCAN, cache_ext's policy for LevelDB's mixed GETs and SCANs
(cache_ext_get_scan.bpf.c): folios a scan brings in go on a list of their own; while
that list holds at least 1000 x the sampling rate (5) folios, eviction samples it,
otherwise the general list, naming the sampled folio with the fewest accesses
(``bpf_cache_ext_list_sample`` with an LFU score).

cache_ext knows a scan by its thread (the application registers its scan threads'
pids in a BPF map). A trace carries no threads, so here a scan is recognised by what
it does: a folio extending a run of at least ``RUN`` ascending pages added one after the
other, with gaps of at most ``GAP`` pages (pages a point read brought in already), among
the ``RUNS_KEPT`` most recent runs (readahead's windows of a point read are shorter). The draws come from a
seeded generator, so runs repeat.
"""

import random

from reclaimlab import Policy

SAMPLE = 5
SCAN_LIST_MIN = 1000 * SAMPLE
RUN = 64
GAP = 8
RUNS_KEPT = 256


class _Sampled:
    """A list that can be sampled: an array plus each folio's position."""

    def __init__(self):
        self.folios = []
        self.index = {}

    def add(self, f):
        self.index[f] = len(self.folios)
        self.folios.append(f)

    def remove(self, f):
        i = self.index.pop(f)
        last = self.folios.pop()
        if last != f:
            self.folios[i] = last
            self.index[last] = i


class GetScan(Policy):
    def __init__(self):
        self.general = _Sampled()
        self.scans = _Sampled()
        self.accesses = {}
        self.list_of = {}
        self.runs = {}  # next page id expected -> length of the run so far
        self.rng = random.Random(0)

    def folio_added(self, folio):
        # The run this folio extends: one expecting it, or a few pages before it (pages
        # a point read brought in already are skipped over).
        n = 1
        for gap in range(GAP + 1):
            if folio - gap in self.runs:
                n = self.runs.pop(folio - gap) + 1
                break
        self.runs[folio + 1] = n
        if len(self.runs) > RUNS_KEPT:
            del self.runs[next(iter(self.runs))]
        lst = self.scans if n >= RUN else self.general
        lst.add(folio)
        self.list_of[folio] = lst
        self.accesses[folio] = 1

    def folio_accessed(self, folio):
        self.accesses[folio] += 1

    def folio_removed(self, folio):
        self.list_of.pop(folio).remove(folio)
        del self.accesses[folio]

    def evict_folios(self, nr):
        lst = self.scans if len(self.scans.folios) >= SCAN_LIST_MIN else self.general
        if not lst.folios:
            lst = self.scans
        out = []
        n = len(lst.folios)
        for _ in range(min(nr, n)):
            best = None
            for _ in range(SAMPLE):
                f = lst.folios[self.rng.randrange(n)]
                if f not in out and (best is None or self.accesses[f] < self.accesses[best]):
                    best = f
            if best is not None:
                out.append(best)
        return out
