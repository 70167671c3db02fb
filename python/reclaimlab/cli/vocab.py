"""The CLI's one flag vocabulary: each concept spelled once, for every subcommand.

Subcommands add a shared concept with :func:`add` instead of ``add_argument``; the
spelling and metavar come from :data:`VOCAB`, and the spellings a concept had before
are registered as hidden aliases that still work but print a one-line deprecation note
once the command goes on (:func:`flush_notes`; bad input is the one error line alone).
docs/cli.md's "Shared options" table is :func:`markdown` (checked by a test), and
python/tests/test_cli_vocab.py walks every parser for a concept spelled two ways.
Regenerate it with
``python -c 'from reclaimlab.cli.vocab import markdown; print(markdown(), end="")'``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, Iterator, Sequence


@dataclass(frozen=True)
class Concept:
    name: str
    flags: tuple[str, ...]  # the spellings shown in --help
    metavar: str | None  # None: a switch (store_true)
    meaning: str  # one line, for docs/cli.md
    old: tuple[str, ...] = ()  # earlier spellings: hidden, deprecated aliases


VOCAB: dict[str, Concept] = {c.name: c for c in (
    Concept("trace", ("--trace",), "FILE", "a page-access trace to replay (any readable format)"),
    Concept("trace-format", ("--trace-format",), "F", "the trace's format: native, lirs, address, csv, oracle, damo "
            "(default: detect)", ("--format",)),
    Concept("trace-kind", ("--trace-kind",), "K", "what records lacking it are: file-read, file-mapped, anon",
            ("--kind",)),
    Concept("scenario", ("--scenario",), "NAME", "a built-in scenario (`reclaimlab scenarios`)"),
    Concept("workload-param", ("--workload-param",), "NAME=VALUE",
            "a built-in scenario's workload parameter (`reclaimlab scenarios NAME` lists them); repeatable"),
    Concept("policy", ("--policy",), "NAME", "a reclaim policy model (`reclaimlab policies`), python:MODULE:CLASS or rust:PATH:NAME (docs/plugins.md)"),
    Concept("memory", ("--memory",), "SIZE", "the simulated machine's physical memory (`machine.memory`)"),
    Concept("memory-max", ("--memory-max",), "SIZE", "a cgroup's `memory.max` (kernel runs: the workload's cgroup)",
            ("--memory",)),
    Concept("swap", ("--swap",), "DEV[:SIZE]", "swap device: zram:SIZE, ssd:SIZE or none"),
    Concept("seed", ("--seed",), "N", "seed of generated workloads (the engine itself is deterministic)"),
    Concept("set", ("--set",), "KEY=VALUE", "any config key (`reclaimlab knobs`); repeatable"),
    Concept("size", ("--size",), "N|P%[,...]", "cache sizes in pages, or P% of the trace's distinct pages",
            ("--sizes",)),
    Concept("jobs", ("-j", "--jobs"), "N", "parallel worker processes (default: the CPU count)"),
    Concept("quiet", ("-q", "--quiet"), None, "no progress bar", ("--no-progress",)),
    Concept("json", ("--json",), None, "print JSON instead of tables (docs/cli.md, \"JSON output\")"),
    Concept("csv", ("--csv",), "FILE", "also write the data as CSV"),
    Concept("plot", ("--plot",), "FILE", "draw a figure to FILE (.png, .svg, .pdf; needs matplotlib)",
            ("-o", "--output")),
    Concept("output", ("-o", "--output"), "FILE", "the file the command produces (a trace, a report)"),
    Concept("out-dir", ("--out-dir",), "DIR", "a results directory (resumable store of runs)", ("--out", "-o")),
    Concept("metric", ("--metric",), "M", "the metric to compare"),
    Concept("baseline", ("--baseline",), "NAME|COLUMN=VALUE", "the configuration the others are compared with"),
)}


NOTES = "_deprecation_notes"  # the namespace attribute the notes wait in


class _Deprecated(argparse.Action):
    """A hidden old spelling: stores like the concept's option, with a note kept on the
    namespace for :func:`flush_notes` (so bad input later on is one line, the error)."""

    def __init__(self, option_strings: Sequence[str], dest: str, use: str = "", **kwargs: Any) -> None:
        self.use = use
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # type: ignore[override]
        notes = getattr(namespace, NOTES, None) or []
        setattr(namespace, NOTES, [*notes, f"reclaimlab: note: {option_string} is deprecated; use {self.use}"])
        if self.nargs == 0:
            values = self.const
        if getattr(self, "append", False):
            values = [*(getattr(namespace, self.dest, None) or []), values]
        setattr(namespace, self.dest, values)


def add(parser: Any, concept: str, help: str | None = None, *, aliases: Sequence[str] | None = None,
        **kwargs: Any) -> argparse.Action:
    """Add ``concept``'s option to ``parser`` (a parser or argument group), plus its old
    spellings (``aliases``, default: the table's) as hidden deprecated aliases. Other
    keyword arguments go to ``add_argument`` (``dest``, ``type``, ``default``, ...)."""
    c = VOCAB[concept]
    if c.metavar is None:
        kwargs.setdefault("action", "store_true")
    else:
        kwargs.setdefault("metavar", c.metavar)
    action = parser.add_argument(*c.flags, help=help if help is not None else c.meaning, **kwargs)
    action.concept = concept  # type: ignore[attr-defined]
    old = c.old if aliases is None else tuple(aliases)
    if old:
        alias_kwargs: dict[str, Any] = {"dest": action.dest, "help": argparse.SUPPRESS, "use": c.flags[-1],
                                        "default": argparse.SUPPRESS}
        if c.metavar is None:
            alias_kwargs.update(nargs=0, const=True)
        else:
            alias_kwargs.update(type=kwargs.get("type"), choices=kwargs.get("choices"), metavar=c.metavar)
        alias = parser.add_argument(*old, action=_Deprecated, **alias_kwargs)
        alias.concept = concept  # type: ignore[attr-defined]
        alias.append = kwargs.get("action") == "append"  # type: ignore[attr-defined]
    return action


def knob_help(keys: Sequence[str]) -> str:
    """A shortcut flag's help from its knobs' rows (crates/core/src/config.rs ``KNOBS``):
    each key's meaning (range included) and the default, so the flag never restates them.
    A key not in the table is a KeyError."""
    from .. import _core

    rows = {k: (default, meaning) for k, default, _unit, meaning in _core.knobs()}
    said = [rows[k][1] if rows[k][1].startswith(k) else f"{k}: {rows[k][1]}" for k in keys]
    return f"{'; '.join(said)} (default {':'.join(rows[k][0] for k in keys)})"


def add_shortcuts(parser: Any) -> None:
    """``reclaimlab run``'s shortcut flags, one per alias row with a flag
    (crates/core/src/config.rs ``KNOB_ALIASES``), help from the knobs' rows; a flag the
    vocabulary knows keeps its concept (and deprecated spellings)."""
    from .. import _core

    for flag, metavar, keys in _core.knob_aliases():
        if not flag:
            continue
        if flag in VOCAB:
            add(parser, flag, knob_help(keys), metavar=metavar)
        else:
            parser.add_argument(f"--{flag}", metavar=metavar, help=knob_help(keys))


def shortcut_values(args: argparse.Namespace) -> dict[str, Any]:
    """The shortcut flags' values by flag name (None: not given), for
    ``reclaimlab.prepare``/``compare``'s keyword arguments."""
    from .. import _core

    return {flag: getattr(args, flag.replace("-", "_")) for flag, _m, _k in _core.knob_aliases() if flag}


def common_keys() -> str:
    """``run --help``'s list of common keys for ``--set``: every alias row's keys with
    their defaults and meanings, then the cgroup family."""
    import textwrap

    from .. import _core

    rows = {k: (default, meaning) for k, default, _unit, meaning in _core.knobs()}
    items = [(f"{k}={rows[k][0]}", rows[k][1]) for _f, _m, keys in _core.knob_aliases() for k in keys]
    files = ", ".join(f for f, _d, _m in _core.cgroup_knobs())
    items.append(("cgroup.NAME.FILE=VALUE", f"a cgroup's {files}"))
    width = max(len(a) for a, _ in items) + 2
    lines = []
    for a, meaning in items:
        wrapped = textwrap.wrap(meaning, 88 - 2 - width) or [""]
        lines.append(f"  {a:<{width}}{wrapped[0]}")
        lines += [" " * (2 + width) + w for w in wrapped[1:]]
    return "\n".join(lines)


def flush_notes(args: argparse.Namespace) -> None:
    """Print the deprecation notes the command line earned, once: a command calls this when
    its input is checked and the work starts; ``reclaimlab.cli.main`` calls it when the
    command succeeds and drops the notes when it ends in an error."""
    for note in getattr(args, NOTES, None) or []:
        print(note, file=sys.stderr)
    setattr(args, NOTES, [])


def check_jobs(jobs: int | None) -> None:
    """``--jobs`` below 1 is one error line, whichever command took it."""
    if jobs is not None and jobs < 1:
        from ..exceptions import ConfigError

        raise ConfigError("--jobs must be at least 1")


def check_figure(path: str | None, flag: str = "--plot") -> None:
    """A figure path checked before the work (its directory exists, matplotlib is there)."""
    if path:
        from ..plot import check_path, require_matplotlib

        check_path(path, flag)
        require_matplotlib()


def walk(parser: argparse.ArgumentParser, name: str = "reclaimlab") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (command line, parser) under ``parser``, itself first."""
    yield name, parser
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub, p in a.choices.items():
                yield from walk(p, f"{name} {sub}")


def markdown() -> str:
    """docs/cli.md's table of shared options."""
    rows = ["| concept | option | meaning | deprecated spellings |", "| --- | --- | --- | --- |"]
    for c in VOCAB.values():
        flag = ", ".join(f"`{f}{'' if c.metavar is None else ' ' + c.metavar}`" for f in c.flags)
        old = ", ".join(f"`{o}`" for o in c.old)
        cells = (c.name, flag, c.meaning, old)
        rows.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(rows) + "\n"
