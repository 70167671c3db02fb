"""reclaimlab.trace (the public Python API of `trace info|convert|gen`): the same results
as the CLI, with the CLI's option names; trace.write's ops; scenario_source."""

from __future__ import annotations

import json

import pytest

import reclaimlab
from reclaimlab import trace
from reclaimlab.cli import main


def cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["trace", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_generate_and_info_are_the_cli(tmp_path, capsys):
    api, cli = tmp_path / "api.trace", tmp_path / "cli.trace"
    n = trace.generate("zipf", api, pages=400, accesses=5000, alpha=0.8, trace_kind="file-read", write_ratio=0.1,
                       seed=7)
    assert main(["trace", "gen", "zipf", "--pages", "400", "--accesses", "5000", "--alpha", "0.8", "--trace-kind",
                 "file-read", "--write-ratio", "0.1", "--seed", "7", "-o", str(cli)]) == 0
    assert n == 5000 and api.read_bytes() == cli.read_bytes()
    info = trace.info(api)
    assert json.loads(json.dumps(info)) == cli_json(capsys, "info", str(api))
    assert info["records"] == 5000 and info["file"] == 5000 and 0 < info["writes"] < 5000
    assert info["storage"]["compressed"] is False


def test_generate_program_from_a_dict_or_toml(tmp_path):
    program = {"regions": [{"name": "heap", "pages": 64, "kind": "anon"}],
               "phases": [{"name": "warm", "accesses": 300, "streams": [{"region": "heap", "pattern": "seq"}]}],
               "repeat": 2}
    assert trace.generate("program", tmp_path / "d.trace", program=program, seed=3) == 600
    toml = tmp_path / "p.toml"
    toml.write_text('repeat = 2\n[[region]]\nname = "heap"\npages = 64\nkind = "anon"\n'
                    '[[phase]]\nname = "warm"\naccesses = 300\n[[phase.stream]]\nregion = "heap"\npattern = "seq"\n')
    assert trace.generate("program", tmp_path / "t.trace", program=toml, seed=3) == 600
    assert (tmp_path / "d.trace").read_bytes() == (tmp_path / "t.trace").read_bytes()


def test_convert_is_the_cli(tmp_path, capsys):
    lirs = tmp_path / "t.lirs"
    lirs.write_text("".join(f"{(i * 37) % 101}\n" for i in range(2000)))
    assert trace.convert(lirs, tmp_path / "a.trace", trace_format="lirs", compress=True) == 2000
    assert main(["trace", "convert", str(lirs), str(tmp_path / "c.trace"), "--trace-format", "lirs", "--compress"]) == 0
    assert (tmp_path / "a.trace").read_bytes() == (tmp_path / "c.trace").read_bytes()
    assert trace.info(tmp_path / "a.trace")["storage"]["compressed"] is True
    # oracle by the output's name, then back: the same block sequence
    assert trace.convert(lirs, tmp_path / "t.oracleGeneral") == 2000
    assert cli_json(capsys, "info", str(tmp_path / "t.oracleGeneral"))["format"] == "oracle"
    a = reclaimlab.cachesim(lirs, "lru", [10, 50])
    b = reclaimlab.cachesim(tmp_path / "t.oracleGeneral", "lru", [10, 50])
    assert a["misses"].to_list() == b["misses"].to_list()


def test_write_carries_ops_that_info_lists(tmp_path):
    out = tmp_path / "w.trace"
    n = trace.write(out, [0, 1, 2, 3, 1], writes=[True, False, False, False, True], trace_kind="anon", cgroup="app",
                    reclaims=[(2, "app", 8192, 0)], madvise=[(0, 0, 4, "hugepage"), (4, 2, 2, "dontneed")])
    assert n == 5
    info = trace.info(out)
    assert (info["records"], info["writes"], info["anon"], info["cgroups"]) == (5, 2, 5, ["", "app"])
    assert [list(op) for op in info["ops"]] == [[2, "app", 8192, 0]]
    assert [list(m) for m in info["madvise"]] == [[0, 0, 4, "hugepage"], [4, 2, 2, "dontneed"]]


@pytest.mark.parametrize("call, match", [
    (lambda p: trace.generate("zipf", p, pages=10), "accesses is required"),
    (lambda p: trace.generate("zipf", p, pages=-1, accesses=5), "pages must be a non-negative integer"),
    (lambda p: trace.generate("spiral", p, pages=1, accesses=1), "pattern 'spiral': expected one of"),
    (lambda p: trace.generate("program", p), "program .* is required"),
    (lambda p: trace.info(p, trace_format="nope"), "trace_format 'nope'"),
    (lambda p: trace.info(p), "No such file|cannot open|not found"),
    (lambda p: trace.convert(p, p, to="arrow"), "to 'arrow'"),
    (lambda p: trace.write(p, [1, -2]), "page numbers"),
    (lambda p: trace.write(p, [1, 2], writes=[True]), "1 flags for 2 pages"),
])
def test_bad_input_is_a_reclaimlab_error(tmp_path, call, match):
    with pytest.raises(reclaimlab.ReclaimlabError, match=match):
        call(tmp_path / "missing.trace")
    assert not (tmp_path / "missing.trace").exists()


def test_scenario_source_takes_workload_params():
    info = reclaimlab.scenario_info("hadoop-terasort")
    assert "tasks_per_cpu" in [p[0] if isinstance(p, (list, tuple)) else p["name"] for p in info["params"]]
    src = reclaimlab.scenario_source("hadoop-terasort", seed=2, scale=0.05, params={"tasks_per_cpu": 2})
    assert len(src.take(10)) == 10
    with pytest.raises(reclaimlab.ReclaimlabError, match="nope"):
        reclaimlab.scenario_source("hadoop-terasort", params={"nope": 1})
