"""TOML configs: flattening to kernel-named keys, and errors naming file, key and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reclaimlab
from reclaimlab import config as rconfig
from reclaimlab.exceptions import ConfigError, ReclaimlabError

from conftest import assert_user_error, cli

EXAMPLE = """\
policy = "classic@6.15"
seed = 7

[machine]
memory = "2G"

[vm]
swappiness = 10
watermark_scale_factor = 100

[swap]
device = "ssd"
size = "1G"

[cgroup.db]
"memory.max" = "512M"

[cgroup.web]
memory.high = "256M"

[trace]
path = "traces/app.trace"
format = "lirs"
kind = "file-read"
"""


def write(tmp_path: Path, text: str, name: str = "machine.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_tables_flatten_to_dotted_kernel_keys(tmp_path):
    cf = rconfig.load(write(tmp_path, EXAMPLE))
    assert cf.settings == {
        "policy": "classic@6.15",
        "seed": "7",
        "machine.memory": "2G",
        "vm.swappiness": "10",
        "vm.watermark_scale_factor": "100",
        "swap.device": "ssd",
        "swap.size": "1G",
        "cgroup.db.memory.max": "512M",
        "cgroup.web.memory.high": "256M",
    }
    assert cf.trace == {"path": str(tmp_path / "traces" / "app.trace"), "format": "lirs", "kind": "file-read"}
    assert cf.scenario is None
    assert cf.lines["vm.swappiness"] == 8
    assert cf.lines["cgroup.db.memory.max"] == 16
    assert cf.lines["cgroup.web.memory.high"] == 19


def test_flattened_settings_reach_the_engine_config(tmp_path):
    cf = rconfig.load(write(tmp_path, EXAMPLE))
    cfg = reclaimlab.Config()
    rconfig.apply(cfg, cf.settings, cf)
    cfg.validate()
    items = cfg.items()
    assert items["vm.swappiness"] == "10"
    assert items["machine.memory"] == "2G"
    assert items["swap.device"] == "ssd"
    assert items["cgroup.db.memory.max"] == "512M"
    assert items["cgroup.db.memory.high"] == "max"
    assert items["cgroup.web.memory.high"] == "256M"


def test_build_applies_file_then_options_then_set(tmp_path, gen_trace):
    trace = gen_trace("uniform", 100, 1000, name="app.trace")
    cfg_path = write(tmp_path, "[vm]\nswappiness = 10\nwatermark_scale_factor = 50\n[trace]\npath = \"app.trace\"\n")
    cfg, src, workload = reclaimlab.build(cfg_path, swappiness=30, set={"vm.watermark_scale_factor": 70, "seed": 3})
    assert cfg.get("vm.swappiness") == "30"
    assert cfg.get("vm.watermark_scale_factor") == "70"
    assert cfg.get("seed") == "3"
    assert workload == f"trace {trace} (native)"
    assert src.meta()["records"] == 1000


def test_unknown_key_names_file_key_and_line(tmp_path):
    path = write(tmp_path, "[machine]\nmemory = \"1G\"\n\n[vm]\nswapiness = 10\n")
    with pytest.raises(ConfigError) as ei:
        reclaimlab.build(path)
    e = ei.value
    assert e.key == "vm.swapiness" and e.line == 5 and e.path == str(path)
    assert "did you mean 'vm.swappiness'" in str(e)
    p = cli("run", path)
    assert_user_error(p, "machine.toml", "line 5", "vm.swapiness")


def test_unknown_cgroup_file_names_line(tmp_path):
    path = write(tmp_path, "[cgroup.db]\nmemory.maxx = \"1G\"\n")
    assert_user_error(cli("run", path), "machine.toml, line 2", "cgroup.db.memory.maxx")


def test_unknown_key_in_trace_table(tmp_path):
    path = write(tmp_path, "[trace]\npath = \"x.trace\"\nformt = \"lirs\"\n")
    assert_user_error(cli("run", path), "machine.toml, line 3", "trace.formt")


def test_toml_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path, "[vm]\nswappiness = 10\nwatermark_scale_factor 10\n")
    assert_user_error(cli("run", path), "machine.toml, line 3", "invalid TOML")


def test_negative_swappiness_option():
    assert_user_error(cli("run", "--swappiness=-5"), "vm.swappiness", "non-negative")


def test_negative_swappiness_in_file_names_line(tmp_path):
    path = write(tmp_path, "[vm]\nswappiness = -5\n")
    assert_user_error(cli("run", path), "line 2", "vm.swappiness")


def test_swappiness_above_200_fails_validation_at_its_line(tmp_path):
    path = write(tmp_path, "seed = 1\n[vm]\nswappiness = 201\n")
    assert_user_error(cli("run", path), "machine.toml, line 3", "vm.swappiness", "0..200")


def test_memory_below_min_watermark_is_rejected():
    assert_user_error(cli("run", "--memory", "1M"), "machine.memory", "too small")


def test_unknown_policy():
    err = assert_user_error(cli("run", "--policy", "lru@9.99"), "lru@9.99")
    assert "classic@6.15" in err  # the message lists what exists


def test_bad_set_syntax():
    assert_user_error(cli("run", "--set", "vm.swappiness"), "KEY=VALUE")


def test_unknown_set_key():
    assert_user_error(cli("run", "--set", "vm.swapiness=5"), "vm.swapiness", "did you mean 'vm.swappiness'")


def test_scenario_and_trace_together_is_an_error(tmp_path):
    path = write(tmp_path, "scenario = \"default\"\n[trace]\npath = \"a.trace\"\n")
    assert_user_error(cli("run", path), "machine.toml, line 1", "not both")


def test_missing_config_file(tmp_path):
    assert_user_error(cli("run", tmp_path / "nope.toml"), "nope.toml", "No such file")


def test_config_error_attributes_from_engine():
    cfg = reclaimlab.Config()
    with pytest.raises(ConfigError) as ei:
        cfg.set("vm.swappiness", "lots")
    assert ei.value.key == "vm.swappiness"
    assert isinstance(ei.value, ReclaimlabError)
    assert cfg.get("vm.swappiness") == "60"
    cfg.set("vm.swappiness", "200")
    assert cfg.get("vm.swappiness") == "200"


_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_values = st.one_of(st.integers(-10**6, 10**6), st.text("abcxyz019", min_size=0, max_size=6))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_names, st.dictionaries(_names, _values, min_size=1, max_size=4), min_size=1, max_size=4),
       st.booleans())
def test_flatten_and_line_finder_agree_with_toml(tmp_path_factory, tables, dotted_style):
    """Any doc of [table] key = value entries: every flattened key is found at the line it was written on."""
    lines, expected = [], {}
    for table, kv in tables.items():
        if not dotted_style:
            lines.append(f"[{table}]")
        for k, v in kv.items():
            lit = str(v) if isinstance(v, int) else f'"{v}"'
            lines.append(f"{table}.{k} = {lit}" if dotted_style else f"{k} = {lit}")
            expected[f"{table}.{k}"] = (str(v), len(lines))
    path = tmp_path_factory.mktemp("c") / "c.toml"
    path.write_text("\n".join(lines) + "\n")
    cf = rconfig.load(path)
    assert cf.settings == {k: v for k, (v, _) in expected.items()}
    assert {k: cf.lines[k] for k in expected} == {k: n for k, (_, n) in expected.items()}


def test_binary_config_file_is_named(tmp_path):
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert_user_error(cli("run", path), "bin.toml", "UTF-8")
