"""mmtests result directories as measurements, so real runs and simulated ones go through
one `compare`.

An mmtests results tree is ``work/log/<kernel>/iter-<i>/<benchmark>/logs/...``
(``run-mmtests.sh --run-monitor <kernel>``); compare-kernels.sh hands it, one benchmark at
a time, to ``compare-mmtests.pl``, whose per-benchmark ``Extract<Bench>.pm`` modules parse
the logs. Those parsers are mmtests' own and many, so reclaimlab does not rewrite them: it
runs mmtests' ``bin/extract-mmtests.pl -d DIR -b BENCH -n KERNEL --print-json`` (from
``$MMTESTS``, the mmtests checkout, or ``PATH``) and reads the modules it exports, or a
file of that JSON directly. A module's ``_ResultData`` is ``{op: [{SampleNrs: [...],
Values: [...]} per iteration]}``; each value becomes one measurement: metric = the
benchmark, variant = the kernel (the run name, in compare-kernels.sh's order: the first
is the baseline), column ``op``, repetition = its index over the op's iterations and
samples.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..exceptions import ConfigError

__all__ = ["is_results_tree", "kernels", "benchmarks", "from_modules", "load_tree", "load_json", "extractor"]


def _root(path: Path) -> Path:
    """``work/log`` under an mmtests checkout, else the directory itself."""
    return path / "work" / "log" if (path / "work" / "log").is_dir() else path


def kernels(path: Path) -> list[str]:
    """The run names of a results tree (directories holding ``iter-*``), sorted as
    compare-kernels.sh's ``run_results`` lists them (by name)."""
    root = _root(path)
    return sorted(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("iter-*")))


def is_results_tree(path: Path) -> bool:
    return path.is_dir() and not (path / "results.sqlite").exists() and bool(kernels(path))


def benchmarks(path: Path, kernel: str) -> list[str]:
    """Benchmarks of a run: ``iter-0/<bench>/`` directories that have ``logs``."""
    it0 = _root(path) / kernel / "iter-0"
    return sorted(d.name for d in it0.iterdir() if d.is_dir() and (d / "logs").is_dir()) if it0.is_dir() else []


def extractor() -> str | None:
    """mmtests' ``extract-mmtests.pl``: ``$MMTESTS/bin/``, else on ``PATH``."""
    home = os.environ.get("MMTESTS")
    if home and (Path(home) / "bin" / "extract-mmtests.pl").is_file():
        return str(Path(home) / "bin" / "extract-mmtests.pl")
    return shutil.which("extract-mmtests.pl")


def from_modules(modules: list[dict[str, Any]], benchmark: str, names: list[str] | None = None):
    """Measurements (metric, variant, op, repetition, value) from exported Extract modules;
    ``names`` the kernels in order (default: each module's ``_TestName``)."""
    import polars as pl

    rows = []
    for i, mod in enumerate(modules):
        if not isinstance(mod, dict) or not isinstance(mod.get("_ResultData"), dict):
            raise ConfigError(f"mmtests module {i}: no _ResultData (not extract-mmtests.pl --print-json output)")
        kernel = names[i] if names else str(mod.get("_TestName") or f"kernel{i}")
        data = mod["_ResultData"]
        for op in _op_order(mod):
            iters = data[op]
            rep = 0
            for it in iters or []:
                for v in (it or {}).get("Values", []):
                    rows.append({"metric": benchmark, "variant": kernel, "op": str(op), "repetition": rep,
                                 "value": float(v)})
                    rep += 1
    if not rows:
        raise ConfigError(f"mmtests {benchmark}: the extracted modules hold no values")
    return pl.DataFrame(rows, schema={"metric": pl.Utf8, "variant": pl.Utf8, "op": pl.Utf8, "repetition": pl.Int64,
                                      "value": pl.Float64})


def _op_order(mod: dict[str, Any]) -> list[str]:
    """The module's ops in mmtests' order (``_Operations``, else ``_GeneratedOperations``),
    the rest in natural order (``Elapsed-2`` before ``Elapsed-10``): a Perl hash's key
    order changes from run to run, the output must not."""
    import re

    data = mod["_ResultData"]
    first = [op for op in (mod.get("_Operations") or mod.get("_GeneratedOperations") or []) if op in data]
    natural = lambda op: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(op))]  # noqa: E731
    return list(dict.fromkeys(first)) + sorted((op for op in data if op not in first), key=natural)


def load_json(path: Path):
    """A file of ``extract-mmtests.pl --print-json`` output (one module or a list)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: not mmtests JSON ({e})") from None
    mods = data if isinstance(data, list) else [data]
    bench = str((mods[0] or {}).get("_ModuleName", "mmtests")).removeprefix("Extract").lower() if mods else "mmtests"
    return from_modules(mods, bench)


def load_tree(path: Path, benchmark: str | None = None):
    """Every kernel of the tree at ``path`` for ``benchmark`` (default: the one benchmark
    the baseline ran), through mmtests' own extractor."""
    import polars as pl

    ks = kernels(path)
    bench = benchmark
    if bench is None:
        found = benchmarks(path, ks[0])
        if len(found) != 1:
            raise ConfigError(f"{path}: {ks[0]} ran {', '.join(found) or 'no benchmark'}; pick one with --metric BENCH")
        bench = found[0]
    tool = extractor()
    if tool is None:
        raise ConfigError(f"{path}: an mmtests result tree; reading it needs mmtests' bin/extract-mmtests.pl "
                          f"(set MMTESTS to the mmtests checkout, or put it on PATH)")
    frames = []
    for k in ks:
        p = subprocess.run([tool, "-d", str(_root(path)), "-b", bench, "-n", k, "--print-json"],
                           capture_output=True, text=True, cwd=str(Path(tool).resolve().parent.parent))
        if p.returncode != 0:
            msg = (p.stderr.strip().splitlines() or ["failed"])[-1]
            raise ConfigError(f"{path}: extract-mmtests.pl -b {bench} -n {k}: {msg}")
        try:
            mod = json.loads(p.stdout)
        except ValueError:
            raise ConfigError(f"{path}: extract-mmtests.pl -b {bench} -n {k} printed no JSON") from None
        frames.append(from_modules(mod if isinstance(mod, list) else [mod], bench, [k]))
    return pl.concat(frames)
