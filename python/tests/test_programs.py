"""Built-in real programs (python/reclaimlab/programs): deterministic inputs, a recording
that keeps only the inputs, the guest's root in which the program runs as on the host,
bad specs, and on the real kernel two programs whose counters must match their
recordings' replay. Recording needs Valgrind (scripts/install-test-deps.sh)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from reclaimlab.programs import PROGRAMS, inputs
from reclaimlab.programs.prepare import ENV, GUEST_CWD, interpreter, program_file, recorded, stage_root

from conftest import assert_user_error, cli


@pytest.fixture(autouse=True)
def program_cache(tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.getbasetemp() / "program-cache"
    monkeypatch.setenv("RECLAIMLAB_PROGRAM_CACHE", str(cache))
    return cache


def _digest(d: Path) -> dict[str, str]:
    return {p.relative_to(d).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inputs_are_the_same_bytes_for_the_same_seed(name, tmp_path):
    made = {}
    for tag, seed in (("a", 7), ("b", 7), ("c", 8)):
        d = tmp_path / tag
        d.mkdir()
        PROGRAMS[name].make(d, 1 << 20, seed)
        made[tag] = _digest(d)
    assert made["a"] == made["b"]
    assert made["a"] != made["c"]
    # the main input is the size asked for (sqlite's query file comes on top)
    biggest = max((tmp_path / "a" / f).stat().st_size for f in made["a"])
    total = sum((tmp_path / "a" / f).stat().st_size for f in made["a"])
    assert (1 << 20) * 0.9 <= (total if name == "grep" else biggest) <= (1 << 20) * 1.1, (biggest, total)


def test_generated_inputs_hold_what_the_programs_look_for(tmp_path):
    n = inputs.source_tree(tmp_path / "src", 2 << 20, 1)
    assert n > 40 and len({p.parent for p in (tmp_path / "src").rglob("*.c")}) > 30
    hits = sum(p.read_bytes().count(inputs.NEEDLE) for p in (tmp_path / "src").rglob("*.c"))
    assert 0 < hits < (2 << 20) // 48 // 1000  # rare: about one line in 4,096
    inputs.words(tmp_path / "w.txt", 1 << 20, 1)
    keys = [line.split(b" ")[0] for line in (tmp_path / "w.txt").read_bytes().splitlines()]
    assert len(keys) == len(set(keys)) == (1 << 20) // 65


def test_a_recording_keeps_the_inputs_only_and_is_cached():
    rec = recorded("sort", 2 << 20, progress=False)
    assert sorted(p.relative_to(rec.work).as_posix() for p in rec.work.rglob("*")) == ["big.txt", "tmp"]
    names = {n for n, _, _ in rec.files}
    assert {rec.binary, str(rec.work / "big.txt"), str(rec.work / "out.txt")} <= names
    assert rec.writes and rec.anon_pages > 0
    # big.txt's pages: every page of the 2 MiB input
    (first, n), = [(f, n) for name, f, n in rec.files if name.endswith("/big.txt")]
    assert n == (2 << 20) // 4096
    stamp = rec.trace.stat().st_mtime_ns
    again = recorded("sort", 2 << 20, progress=False)
    assert again.trace == rec.trace and again.trace.stat().st_mtime_ns == stamp
    assert again.files == rec.files


def test_the_guest_root_runs_the_program_as_on_the_host(tmp_path):
    rec = recorded("grep", 1 << 20, progress=False)
    assert not rec.writes
    root = tmp_path / "root"
    stage_root(rec, root)
    inside = root / rec.binary.lstrip("/")
    assert inside.is_file() and os.access(inside, os.X_OK)
    # The loader as the binary names it (/lib64/... on Debian: two links deep) resolves
    # inside the root, and each library the loader opens by its soname is there.
    loader = interpreter(rec.binary)
    path = root / loader.lstrip("/")
    while path.is_symlink():
        target = os.readlink(path)
        path = (root / target.lstrip("/")) if target.startswith("/") else (path.parent / target)
    assert path.is_file()
    libs = [n for n, _, _ in rec.files if ".so" in n and "valgrind" not in n]
    assert libs and all((root / n.lstrip("/")).is_file() for n in libs)
    assert sorted(p.relative_to(root / "work").as_posix() for p in (root / "work").rglob("*.c")) == \
        sorted(p.relative_to(rec.work).as_posix() for p in rec.work.rglob("*.c"))
    assert program_file(rec).splitlines() == [GUEST_CWD, rec.binary, *PROGRAMS["grep"].argv[1:]]
    if os.geteuid() != 0:
        pytest.skip("chroot needs root; the guest's own run is test_programs_on_the_real_kernel")
    host = subprocess.run(rec.argv(), cwd=rec.work, env=ENV, capture_output=True, text=True)

    def enter() -> None:
        os.chroot(root)
        os.chdir(GUEST_CWD)

    with pytest.raises(FileNotFoundError):  # nothing but what the program needs: no shell
        subprocess.run(["/bin/sh", "-c", "true"], preexec_fn=enter)
    guest = subprocess.run(rec.argv(), env=ENV, capture_output=True, text=True, preexec_fn=enter)
    assert guest.returncode == host.returncode == 0, guest.stderr
    assert guest.stdout == host.stdout and host.stdout.count("\n") > 10


@pytest.mark.parametrize("spec, needles", [
    ("program:", ["program:NAME", "grep"]),
    ("program:nope", ["unknown program 'nope'", "sort"]),
    ("program:sort,bogus=1", ["size=SIZE or seed=N", "bogus"]),
    ("program:sort,seed=x", ["seed='x'"]),
    ("program:sort,size=lots", ["size='lots'", "not a size"]),
    ("program:sort,size=4K", ["below 1 MiB"]),
])
def test_bad_program_specs_are_one_line(spec, needles):
    assert_user_error(cli("kernel", "run", spec, "--boots", "1"), *needles)


@pytest.mark.kernel
def test_programs_on_the_real_kernel_match_their_recordings(kernel_tree, tmp_path):
    # md5sum reads a 16 MiB file twice through read() in an 8 MiB cgroup with the
    # kernel's readahead: every page of the second pass is a refault in both. grep searches
    # a 16 MiB tree of small files twice, chrooted, its library found by soname: the
    # pages read and stolen match (its refaults depend on the shadow-node shrinker,
    # docs/validation.md "Real programs").
    from reclaimlab.kernel.experiment import validate
    from reclaimlab.kernel.run import Setup

    for name, graded in (("checksum", ("pgpgin", "workingset_refault_file", "pgsteal_file")),
                         ("grep", ("pgpgin", "pgsteal_file"))):
        res = validate(Setup(workload=f"program:{name},size=16M", memory="8M", boots=1), tmp_path / name,
                       progress=False)
        rows = {r["counter"]: r for r in res["rows"]}
        assert rows["pgpgin"]["real_mean"] >= 2 * (16 << 10) * 0.95, rows["pgpgin"]
        for c in graded:
            assert rows[c]["met"], (name, rows[c])
    assert rows["pgsteal_file"]["real_mean"] >= 0.8 * (16 << 20) // 4096
