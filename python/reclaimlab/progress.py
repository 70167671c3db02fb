"""A tqdm progress bar (stderr) that appears only once a run has taken ~2 seconds."""

from __future__ import annotations

import sys
import time
from typing import Any

DELAY_S = 2.0


class Progress:
    """``update(accesses, source)`` after each chunk; draws nothing when disabled,
    when stderr is not a terminal, or for runs shorter than ``DELAY_S``."""

    def __init__(self, enabled: bool = True, delay: float = DELAY_S):
        self.enabled = enabled and sys.stderr.isatty()
        self.delay = delay
        self.start = time.monotonic()
        self.bar = None
        self.total: int | None = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()

    def update(self, accesses: int, source: Any) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < self.delay:
                return
            from tqdm import tqdm

            self.total = source.meta().get("records")
            total = self.total if self.total else 1000
            unit = "acc" if self.total else "‰"
            # Start at what is already done, so the rate counts only what follows.
            done = min(accesses, self.total) if self.total else int((source.progress() or 0.0) * 1000)
            self.bar = tqdm(total=total, initial=done, unit=unit, unit_scale=bool(self.total), file=sys.stderr, leave=False, dynamic_ncols=True)
        if self.total:
            self.bar.update(min(accesses, self.total) - self.bar.n)
        else:
            frac = source.progress()
            if frac is not None:
                self.bar.update(int(frac * 1000) - self.bar.n)
            self.bar.set_postfix_str(f"{accesses:,} accesses", refresh=False)
