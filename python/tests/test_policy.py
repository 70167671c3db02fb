"""Python policies through cache_ext's hooks (reclaimlab.Policy, docs/plugins.md): the
built-in cache:lru re-expressed in Python matches it counter for counter; the CLI and the
API run a policy from a user's file or module; a broken policy is one error line naming
the hook and the folio, exit 2, no traceback."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

import reclaimlab
from reclaimlab import ConfigError, Policy, ReclaimlabError

from conftest import assert_user_error, cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "policies"


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """The example policies copied to a scratch directory that is the cwd."""
    for f in EXAMPLES.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("scenario", ["file-search", "leveldb-getscan"])
def test_python_lru_matches_cache_lru_counter_for_counter(examples, scenario):
    builtin = reclaimlab.run(scenario=scenario, policy="cache:lru")
    ours = reclaimlab.run(scenario=scenario, policy="python:lru:LRU")
    assert ours.policy == "python:lru:LRU"
    assert ours.vmstat == builtin.vmstat
    assert {k: v for k, v in ours.metrics.items() if not k.startswith("ext.")} == builtin.metrics
    assert ours.metrics["ext.policy_reclaimed_pages"] > 0
    assert ours.metrics["ext.fallback_reclaimed_pages"] == 0


def test_mru_instance_through_the_api_beats_lru_on_file_search(examples):
    from mru import MRU

    mru = reclaimlab.run(scenario="file-search", policy=MRU())
    lru = reclaimlab.run(scenario="file-search", policy="cache:lru")
    assert mru.policy == "python:mru:MRU"
    read = lambda r: r.vmstat["pgpgin"]  # noqa: E731
    assert read(mru) < 0.8 * read(lru), (read(mru), read(lru))


@pytest.mark.parametrize("spec", ["python:lfu:LFU", "python:./s3fifo.py:S3FIFO", "python:getscan:GetScan", "python:fifo:FIFOBatched"])
def test_the_examples_run_and_repeat(examples, spec):
    a = reclaimlab.run(scenario="file-search", policy=spec)
    b = reclaimlab.run(scenario="file-search", policy=spec)
    assert a.vmstat == b.vmstat and a.metrics == b.metrics
    assert a.metrics["ext.policy_reclaimed_pages"] > 0


def test_cli_runs_a_policy_from_a_file_path_with_json(examples):
    p = cli("run", "file-search", "--policy", "python:./mru.py:MRU", "--json", cwd=examples)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["policy"] == f"python:{examples / 'mru.py'}:MRU"
    assert out["vmstat"]["workingset_refault_file"] is None  # no shadow entries


def test_a_comparison_runs_python_policies_in_worker_processes(examples):
    c = reclaimlab.compare("file-search", policies=["cache:lru", "python:lru:LRU"], workers=2)
    assert c.results["python:lru:LRU"].vmstat == c.results["cache:lru"].vmstat


BROKEN = '''
from collections import OrderedDict  # noqa: F401 (not a policy: a test names it)

from lru import LRU as Base
from reclaimlab import Policy

class Twice(Base):
    def evict_folios(self, nr):
        out = super().evict_folios(nr)
        return out + out[:1] if len(out) < 32 else out[:31] + out[:1]

class Stranger(Base):
    def evict_folios(self, nr):
        return [10**9]

class Raises(Base):
    def evict_folios(self, nr):
        return 1 // 0

class BadAccess(Base):
    def folio_accessed(self, folio):
        raise KeyError(folio)

class NotAList(Base):
    def evict_folios(self, nr):
        return 3

class Missing(Policy):
    pass

class Nothing(Base):
    def evict_folios(self, nr):
        return []

class Forever(Base):
    hook_timeout_s = 1
    def evict_folios(self, nr):
        while True:
            try:
                pass
            except Exception:
                pass
'''


@pytest.fixture
def broken(tmp_path, monkeypatch):
    (tmp_path / "mypol.py").write_text(textwrap.dedent(BROKEN))
    shutil.copy(EXAMPLES / "lru.py", tmp_path / "lru.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "cls, needles",
    [
        ("Twice", ["policy python:mypol:Twice: evict_folios: returned folio ", " twice"]),
        ("Stranger", ["policy python:mypol:Stranger: evict_folios: returned folio 1000000000, which it was not offered"]),
        ("Raises", ["policy python:mypol:Raises: evict_folios: ZeroDivisionError: integer division or modulo by zero"]),
        ("BadAccess", ["policy python:mypol:BadAccess: folio_accessed: folio ", ": KeyError: "]),
        ("NotAList", ["evict_folios: returned a int, not an iterable of folios"]),
        ("Missing", ["evict_folios: NotImplementedError: Missing does not implement evict_folios"]),
        # A hook that never returns (its own `except Exception` cannot hold the alarm).
        ("Forever", ["policy python:mypol:Forever: evict_folios: did not return within 1 s (hook_timeout_s)"]),
    ],
)
def test_a_broken_policy_is_one_error_line_naming_the_hook(broken, cls, needles):
    p = cli("run", "file-search", "--policy", f"python:mypol:{cls}", cwd=broken)
    err = assert_user_error(p, *needles)
    assert "\n" not in err


def test_a_policy_that_names_nothing_falls_back_to_the_kernel_order(broken):
    r = reclaimlab.run(scenario="file-search", policy="python:mypol:Nothing")
    lru = reclaimlab.run(scenario="file-search", policy="cache:lru")
    assert r.metrics["ext.policy_reclaimed_pages"] == 0
    assert r.metrics["ext.fallback_reclaimed_pages"] > 0
    assert r.vmstat == lru.vmstat


@pytest.mark.parametrize(
    "spec, needle",
    [
        ("python:nosuchmodule:X", "policy python:nosuchmodule:X: cannot import nosuchmodule: ModuleNotFoundError"),
        ("python:mypol:Nope", "policy python:mypol:Nope: mypol has no Nope"),
        ("python:mypol:OrderedDict", "OrderedDict is not a reclaimlab.Policy subclass"),
        ("python:./nofile.py:X", "no such file"),
        ("python:justone", "expected python:MODULE:CLASS or python:PATH.py:CLASS"),
    ],
)
def test_a_bad_policy_name_is_a_config_error(broken, spec, needle):
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(".", r"\.")):
        reclaimlab.run(scenario="file-search", policy=spec)
    assert_user_error(cli("run", "file-search", "--policy", spec, cwd=broken), needle)


def test_the_api_raises_a_reclaimlab_error_for_a_broken_policy():
    class Boom(Policy):
        def evict_folios(self, nr):
            raise RuntimeError("boom")

    with pytest.raises(ReclaimlabError, match=r"evict_folios: RuntimeError: boom$"):
        reclaimlab.run(scenario="file-search", policy=Boom)


def test_admit_folio_refusals_never_reach_the_other_hooks():
    class Refuse(Policy):
        added = 0

        def admit_folio(self, folio):
            return False

        def folio_added(self, folio):
            Refuse.added += 1

        def evict_folios(self, nr):
            return []

    r = reclaimlab.run(scenario="file-search", policy=Refuse())
    assert Refuse.added == 0
    assert r.metrics["ext.evict_folios_calls"] == 0
    assert r.vmstat["pgsteal_kswapd"] + r.vmstat["pgsteal_direct"] > 0


def test_an_experiment_matrix_runs_python_policies(examples):
    (examples / "exp.toml").write_text(textwrap.dedent('''
        name = "plugins"
        repetitions = 1
        seed = 1
        baseline = "cache:lru"
        [workload]
        scenario = "file-search"
        [noise]
        model = "none"
        [matrix]
        policy = ["cache:lru", "python:lru:LRU", "python:./mru.py:MRU"]
    '''))
    p = cli("experiment", "run", "exp.toml", "--out-dir", "out", "--jobs", "2", cwd=examples)
    assert p.returncode == 0, p.stderr
    from reclaimlab.results import Store

    with Store(examples / "out", create=False) as st:
        vm = {row["policy"]: row for row in st.vmstat().iter_rows(named=True)}
    assert set(vm) == {"cache:lru", "python:lru:LRU", f"python:{examples / 'mru.py'}:MRU"}
    counters = [k for k in vm["cache:lru"] if k.startswith(("pg", "nr_", "pswp"))]
    assert counters and all(vm["python:lru:LRU"][k] == vm["cache:lru"][k] for k in counters)
    assert vm[f"python:{examples / 'mru.py'}:MRU"]["pgpgin"] < vm["cache:lru"]["pgpgin"]


def test_one_instance_per_cgroup_each_seeing_only_its_own_folios(examples):
    """A passed instance serves the first lruvec; copies of it (taken before the run)
    the others, each initialised with its cgroup and told only of its folios."""
    from lru import LRU

    class Tracked(LRU):
        def __init__(self):
            super().__init__()
            self.cgroup, self.seen = None, set()

        def init(self, cgroup, node):
            self.cgroup = cgroup
            attached.append(self)

        def folio_added(self, folio):
            self.seen.add(folio)
            super().folio_added(folio)

    attached: list = []
    program = {
        "regions": [
            {"name": "a", "pages": 2048, "kind": "file-read", "cgroup": "a"},
            {"name": "b", "pages": 2048, "kind": "file-read", "cgroup": "b"},
        ],
        "phases": [{"accesses": 40_000, "streams": [{"region": "a", "pattern": "seq"}, {"region": "b", "pattern": "seq"}]}],
    }
    cfg = reclaimlab.Config()
    cfg.set("machine.memory", "8M")
    first = Tracked()
    raw = reclaimlab.replay(cfg, reclaimlab.generate(program, 1), policy=first)
    assert raw["policy"].startswith("python:") and raw["policy"].endswith(".<locals>.Tracked")
    by_cgroup = {p.cgroup: p for p in attached}
    assert set(by_cgroup) == {"", "a", "b"} and len(attached) == 3
    assert attached[0] is first
    a, b = by_cgroup["a"].seen, by_cgroup["b"].seen
    assert len(a) >= 2048 and len(b) >= 2048 and not (a & b)
    assert max(a) < min(b)  # region a's pages come first


@pytest.fixture(scope="module")
def example_cdylib():
    """examples/policy-crate's shared library, built by cargo (a no-op after CI's
    `cargo test --workspace`, which builds it)."""
    import subprocess

    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed")
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([cargo, "build", "-p", "reclaimlab-policy-example", "--lib", "--message-format=json"],
                       cwd=root, capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    for line in p.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and "cdylib" in msg["target"]["crate_types"]:
            return next(f for f in msg["filenames"] if f.endswith((".so", ".dylib", ".dll")))
    raise AssertionError("cargo built no cdylib")


def test_a_rust_policy_from_a_shared_library_runs_like_its_python_twin(examples, example_cdylib):
    rust = reclaimlab.run(scenario="file-search", policy=f"rust:{example_cdylib}:MRU")
    python = reclaimlab.run(scenario="file-search", policy="python:mru:MRU")
    assert rust.policy == f"rust:{example_cdylib}:MRU"
    assert rust.vmstat == python.vmstat and rust.metrics == python.metrics
    c = reclaimlab.compare("file-search", policies=["cache:lru", f"rust:{example_cdylib}:MRU"], workers=2)
    assert c.results[f"rust:{example_cdylib}:MRU"].vmstat == rust.vmstat


def test_a_bad_rust_policy_is_one_error_line(examples, example_cdylib):
    assert_user_error(cli("run", "file-search", "--policy", f"rust:{example_cdylib}:Nope", cwd=examples),
                      f"policy rust:{example_cdylib}:Nope: init: memcg '' node 0: no policy Nope in this library (it has: MRU)")
    (examples / "notalib.so").write_text("")
    assert_user_error(cli("run", "file-search", "--policy", "rust:./notalib.so:MRU", cwd=examples),
                      f"policy rust:{examples / 'notalib.so'}:MRU: cannot load")
    assert_user_error(cli("run", "file-search", "--policy", "rust:./nofile.so:MRU", cwd=examples), "no such file")
