"""The generated blocks of docs/validation.md: one place that swaps a block between its
markers, and the command line of the scripts that boot configurations, store one JSON per
configuration and render them (validate_damon.py, validate_thp.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable, Sequence

from reclaimlab.kernel import KSWAPD_WAKEUP_MODES
from reclaimlab.kernel.experiment import KSWAPD_WAKEUP_HELP


def block(text: str, begin: str, end: str) -> str | None:
    """What lies between ``begin`` and ``end`` in ``text`` (None without both markers)."""
    if begin not in text or end not in text:
        return None
    return text.split(begin, 1)[1].split(end, 1)[0]


def place(text: str, block: str, begin: str, end: str) -> str:
    """``text`` with what lies between ``begin`` and ``end`` replaced by ``block``."""
    if begin not in text or end not in text:
        raise SystemExit(f"docs/validation.md has no {begin} ... {end} markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}\n{end}{tail}"


def main(description: str, names: Sequence[str], run: Callable[..., None], resimulate: Callable[..., None],
         render: Callable[[list[dict[str, Any]]], str], begin: str, end: str, kswapd_wakeup: str = "model") -> int:
    """``--out DIR [--boots N] [--render-only | --resimulate] [--doc FILE] [--kswapd-wakeup
    MODE]`` (``kswapd_wakeup`` its default): boot what is missing (``run(out, boots, kswapd_wakeup=MODE)``) or simulate the
    stored boots again (``resimulate(out, kswapd_wakeup=MODE)``), then render OUT/NAME.json
    of every configuration ``names`` into the doc between the markers."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", type=Path, required=True, help="results directory (git-ignored)")
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--render-only", action="store_true", help="render what OUT holds; boot nothing")
    ap.add_argument("--resimulate", action="store_true",
                    help="simulate the stored configurations again against their boots; boot nothing")
    ap.add_argument("--doc", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "validation.md")
    ap.add_argument("--kswapd-wakeup", choices=KSWAPD_WAKEUP_MODES, default=kswapd_wakeup, help=KSWAPD_WAKEUP_HELP)
    a = ap.parse_args()
    if a.resimulate:
        resimulate(a.out, kswapd_wakeup=a.kswapd_wakeup)
    elif not a.render_only:
        run(a.out, a.boots, kswapd_wakeup=a.kswapd_wakeup)
    results = [json.loads(p.read_text()) for p in (a.out / f"{n}.json" for n in names) if p.exists()]
    if not results:
        raise SystemExit(f"{a.out}: no results")
    block = render(results)
    print(block)
    a.doc.write_text(place(a.doc.read_text(), block, begin, end))
    return 0
