"""S3-FIFO as cache_ext's cache_ext_s3fifo.bpf.c implements it (Yang et al., SOSP '23):
a small FIFO S (10% of the folios held) for new folios, a main FIFO M, and a ghost FIFO
G of folios evicted from S (as many as the folios held). A folio found in G when added
goes to M. Each folio has a frequency (0..3, +1 per ``folio_accessed``). Eviction: while
S holds more than 10%, its oldest folio moves to M if it was accessed more than once or
is named for eviction (and remembered in G); else M's oldest folio is named unless its
frequency is above 0, in which case it is reinserted with one less.

Named folios leave their queue at once. Reclaim may not take them all (it stops once it
has enough, and keeps a folio whose accessed bit is set: ``folio_accessed``), so those
it did not take go back to the old end of their queue at the next call.
"""

from collections import OrderedDict, deque

from reclaimlab import Policy


class S3FIFO(Policy):
    def __init__(self):
        self.small = deque()
        self.main = deque()
        self.where = {}  # folio -> "S" | "M" | None (named)
        self.freq = {}
        self.ghost = OrderedDict()
        self.pending = {}  # named folios not yet removed -> the queue they left

    def folio_added(self, folio):
        if self.ghost.pop(folio, False) is None:
            self.main.append(folio)
            self.where[folio] = "M"
        else:
            self.small.append(folio)
            self.where[folio] = "S"
        self.freq[folio] = 0

    def folio_accessed(self, folio):
        self.freq[folio] = min(self.freq[folio] + 1, 3)
        if self.pending.pop(folio, None) is not None:  # kept by reclaim: referenced
            self.main.append(folio)
            self.where[folio] = "M"

    def folio_removed(self, folio):
        q = self.where.pop(folio)
        del self.freq[folio]
        if self.pending.pop(folio, None) == "S":
            self.ghost[folio] = None
            while len(self.ghost) > max(len(self.where), 1):
                self.ghost.popitem(last=False)
        elif q is not None:  # taken by the kernel's fallback, not named by us
            (self.small if q == "S" else self.main).remove(folio)

    def evict_folios(self, nr):
        for f, q in reversed(list(self.pending.items())):
            (self.small if q == "S" else self.main).appendleft(f)
            self.where[f] = q
        self.pending.clear()
        out = []
        held = len(self.where)
        while len(out) < nr and (self.small or self.main):
            if self.small and len(self.small) * 10 > held:
                f = self.small.popleft()
                if self.freq[f] > 1:
                    self.main.append(f)
                    self.where[f] = "M"
                    self.freq[f] = 0
                    continue
                q = "S"
            else:
                f = self.main.popleft()
                if self.freq[f] > 0:
                    self.freq[f] -= 1
                    self.main.append(f)
                    continue
                q = "M"
            out.append(f)
            self.pending[f] = q
            self.where[f] = None
        return out
