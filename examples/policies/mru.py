"""MRU, cache_ext's file-search policy (paper_examples/mru.bpf.c): one list, a folio
added or accessed goes to its head, eviction takes folios from the head. A cyclic scan
larger than memory (``grep -r`` over a tree, the ``file-search`` scenario) then keeps the
folios it read first and refaults only the rest, where LRU refaults everything.
"""

from collections import OrderedDict
from itertools import islice

from reclaimlab import Policy


class MRU(Policy):
    def __init__(self):
        self.list = OrderedDict()  # head = last item

    def folio_added(self, folio):
        self.list[folio] = None

    def folio_accessed(self, folio):
        self.list.move_to_end(folio)

    def folio_removed(self, folio):
        del self.list[folio]

    def evict_folios(self, nr):
        return list(islice(reversed(self.list), nr))
