"""LRU through cache_ext's hooks: the built-in ``cache:lru`` re-expressed in Python.

Gives the same counters as ``--policy cache:lru`` (python/tests/test_policy.py checks it
counter for counter): the least recently added or accessed folio goes first; a candidate
whose accessed bit is set is kept (the kernel tells us through ``folio_accessed``, which
moves it to the MRU end) and we are asked again.
"""

from collections import OrderedDict
from itertools import islice

from reclaimlab import Policy


class LRU(Policy):
    def __init__(self):
        self.lru = OrderedDict()  # oldest first

    def folio_added(self, folio):
        self.lru[folio] = None

    def folio_accessed(self, folio):
        self.lru.move_to_end(folio)

    def folio_removed(self, folio):
        del self.lru[folio]

    def evict_folios(self, nr):
        return list(islice(self.lru, nr))
