"""The cheapest useful policy: FIFO, with the batched hooks handled in one method.

``Policy._events`` receives each batch of ``folio_added``/``folio_accessed``/
``folio_removed`` as bytes (little-endian u64 ``folio << 2 | kind``) and calls the three
hooks; overriding it skips those calls. BENCHMARKS.md ("Python policies") times this
and the plain-hook FIFO below against ``cache:lru`` (a FIFO through the hooks
still gives a referenced candidate a second chance, so it is not ``cache:fifo``).
"""

from collections import OrderedDict
from itertools import islice

from reclaimlab import Policy


class FIFO(Policy):
    """FIFO with the three hooks: the oldest added folio goes first."""

    def __init__(self):
        self.fifo = OrderedDict()

    def folio_added(self, folio):
        self.fifo[folio] = None

    def folio_removed(self, folio):
        del self.fifo[folio]

    def evict_folios(self, nr):
        return list(islice(self.fifo, nr))


class FIFOBatched(FIFO):
    """The same FIFO, one Python loop per batch (and no ``folio_accessed`` events)."""

    _has_folio_accessed = False

    def _events(self, buf):
        fifo = self.fifo
        for e in memoryview(buf).cast("Q"):
            kind = e & 3
            if kind == 0:
                fifo[e >> 2] = None
            elif kind == 2:
                del fifo[e >> 2]
