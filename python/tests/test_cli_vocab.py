"""The CLI's flag vocabulary: every subcommand spells each concept the one way
reclaimlab.cli.vocab names it, old spellings are hidden deprecated aliases, and
docs/cli.md's table is the vocabulary's."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from reclaimlab.cli import build_parser, main
from reclaimlab.cli.vocab import VOCAB, flush_notes, markdown
from reclaimlab.cli.vocab import walk as parsers

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_every_concept_is_spelled_one_way():
    spellings = {s: c.name for c in VOCAB.values() for s in (*c.flags, *c.old)}
    bad = []
    for name, p in parsers(build_parser()):
        for a in p._actions:
            if not a.option_strings or a.help == argparse.SUPPRESS and hasattr(a, "concept"):
                continue
            concept = getattr(a, "concept", None)
            if concept is None:
                shared = [s for s in a.option_strings if s in spellings]
                if shared:
                    bad.append(f"{name}: {'/'.join(a.option_strings)} is the vocabulary's "
                               f"{spellings[shared[0]]!r} but not added with vocab.add")
            elif tuple(a.option_strings) != VOCAB[concept].flags:
                bad.append(f"{name}: {concept} spelled {a.option_strings}")
    assert not bad, "\n".join(bad)


def test_old_spellings_are_hidden():
    for name, p in parsers(build_parser()):
        for a in p._actions:
            concept = getattr(a, "concept", None)
            if concept and set(a.option_strings) - set(VOCAB[concept].flags):
                assert a.help == argparse.SUPPRESS, (name, a.option_strings)
                assert set(a.option_strings) <= set(VOCAB[concept].old), (name, a.option_strings)
        assert "--no-progress" not in p.format_help() and "--sizes" not in p.format_help(), name


@pytest.mark.parametrize("argv, dest, value, note", [
    (["experiment", "run", "x", "--no-progress"], "no_progress", True, "--no-progress is deprecated; use --quiet"),
    (["experiment", "run", "x", "-q"], "no_progress", True, None),
    (["experiment", "run", "x", "--out", "d"], "out", "d", "--out is deprecated; use --out-dir"),
    (["mrc", "--trace", "t", "--sizes", "5,6"], "sizes", "5,6", "--sizes is deprecated; use --size"),
    (["mrc", "--trace", "t", "-o", "a.png"], "output", "a.png", "-o is deprecated; use --plot"),
    (["trace", "info", "f", "--format", "lirs"], "trace_format", "lirs", "--format is deprecated"),
    (["trace", "info", "f", "--trace-kind", "anon"], "trace_kind", "anon", None),
    (["validate", "w", "--memory", "64M"], "memory", "64M", "--memory is deprecated; use --memory-max"),
    (["validate", "w"], "memory", "128M", None),
])
def test_aliases_still_work_with_a_note(capsys, argv, dest, value, note):
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == value
    assert capsys.readouterr().err == "", "the note waits until the command goes on"
    flush_notes(args)
    flush_notes(args)
    err = capsys.readouterr().err
    assert (err.count(note) == 1) if note else err == ""


@pytest.mark.parametrize("argv", [
    ["experiment", "run", "no-such-experiment", "--no-progress"],
    ["experiment", "run", "hadoop-terasort", "--out", "x", "--jobs", "0"],
    ["trace", "info", "/nonexistent/t.trace", "--format", "lirs"],
    ["trace", "info", "f", "--format", "nope"],
])
def test_bad_input_with_an_old_spelling_is_one_line(capsys, argv):
    try:
        status = main(argv)
    except SystemExit as e:  # argparse's own errors (cli.Parser.error)
        status = e.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("reclaimlab: error: "), err


def test_the_note_comes_when_the_command_goes_on(capsys, tmp_path):
    trace = tmp_path / "t.lirs"
    trace.write_text("1\n2\n1\n")
    assert main(["trace", "info", str(trace), "--format", "lirs", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["records"] == 3
    assert err == "reclaimlab: note: --format is deprecated; use --trace-format\n"


def test_alias_keeps_choices(capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["trace", "info", "f", "--format", "nope"])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_docs_table_is_the_vocabulary():
    text = DOCS.read_text()
    begin, end = "<!-- vocabulary: begin -->\n", "<!-- vocabulary: end -->"
    assert begin in text and end in text
    assert text.split(begin, 1)[1].split(end, 1)[0] == markdown(), (
        "docs/cli.md's shared-options table differs from reclaimlab.cli.vocab; regenerate it with "
        "python -c 'from reclaimlab.cli.vocab import markdown; print(markdown(), end=\"\")'")


def test_a_shortcut_flags_help_is_its_knob_row():
    # --swappiness restates nothing: the help is vm.swappiness's row (meaning, default).
    from reclaimlab import _core
    from reclaimlab.cli.vocab import knob_help

    (default, meaning), = [(d, m) for k, d, _u, m in _core.knobs() if k == "vm.swappiness"]
    run = dict(parsers(build_parser()))["reclaimlab run"]
    (action,) = [a for a in run._actions if "--swappiness" in a.option_strings]
    assert action.help == knob_help(["vm.swappiness"]) == f"{meaning} (default {default})"
    with pytest.raises(KeyError):
        knob_help(["vm.no_such_knob"])


def test_run_shortcuts_and_help_come_from_the_alias_rows():
    # Every alias row with a flag is a `run` option whose help is its knobs' rows, and
    # every row's keys are in run's epilog; the flags set exactly the rows' keys.
    from reclaimlab import _core
    from reclaimlab.cli.vocab import knob_help
    from reclaimlab.config import alias_settings

    run = dict(parsers(build_parser()))["reclaimlab run"]
    for flag, metavar, keys in _core.knob_aliases():
        for k in keys:
            assert f"  {k}=" in run.epilog, k
        if not flag:
            continue
        (action,) = [a for a in run._actions if f"--{flag}" in a.option_strings]
        assert (action.metavar, action.help) == (metavar, knob_help(keys))
        value = ":".join(["v"] * len(keys))
        assert alias_settings({flag: value}) == dict.fromkeys(keys, "v")
        # docs/cli.md's "Single runs" table names the flag and its keys.
        (line,) = [ln for ln in DOCS.read_text().splitlines() if ln.startswith(f"| `--{flag} {metavar}` |")]
        assert all(f"`{k}`" in line for k in keys), line
