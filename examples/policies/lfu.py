"""LFU as cache_ext implements it (cache_ext_sampling.bpf.c's LFU score): a frequency per
folio (1 when added, +1 per ``folio_accessed``), eviction by sampling: for each candidate,
draw ``SAMPLE`` folios of the list and name the least frequently used
(``bpf_cache_ext_list_sample``). The draws come from a seeded generator, so runs repeat.
"""

import random

from reclaimlab import Policy

SAMPLE = 5


class LFU(Policy):
    def __init__(self):
        self.freq = {}
        self.folios = []  # sampling array
        self.index = {}  # folio -> position in self.folios
        self.rng = random.Random(0)

    def folio_added(self, folio):
        self.freq[folio] = 1
        self.index[folio] = len(self.folios)
        self.folios.append(folio)

    def folio_accessed(self, folio):
        self.freq[folio] += 1

    def folio_removed(self, folio):
        del self.freq[folio]
        i = self.index.pop(folio)
        last = self.folios.pop()
        if last != folio:
            self.folios[i] = last
            self.index[last] = i

    def evict_folios(self, nr):
        out = []
        n = len(self.folios)
        for _ in range(min(nr, n)):
            best = None
            for _ in range(SAMPLE):
                f = self.folios[self.rng.randrange(n)]
                if f not in out and (best is None or self.freq[f] < self.freq[best]):
                    best = f
            if best is not None:
                out.append(best)
        return out
