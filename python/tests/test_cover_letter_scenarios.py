"""The 2026 refault-distance RFC's workloads run as `reclaimlab run NAME` and print the
comparison of the four policies they declare (docs/scenarios.md)."""

from __future__ import annotations

import json

from conftest import cli

POLICIES = ["classic@6.15", "mglru@6.15", "mglru+refault-distance-rfc-v3", "mglru+refault-distance-2026"]


def test_file_search_compares_the_four_policies():
    p = cli("run", "file-search", "--json", "-q", timeout=300)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert list(d["policies"]) == POLICIES and d["baseline"] == "mglru@6.15"
    runs = d["policies"]
    # A cyclic scan 1.5x memory, read four times: every pass after the first refaults,
    # and no policy activates a refault (no active set to compete with).
    for name in POLICIES:
        v = runs[name]["vmstat"]
        assert v["workingset_refault_file"] > 0 and v["workingset_activate_file"] == 0, name
    # The 2023 reconstruction and the 2026 re-post decide the same.
    assert runs["mglru+refault-distance-rfc-v3"]["vmstat"] == runs["mglru+refault-distance-2026"]["vmstat"]


def test_the_table_names_every_policy():
    p = cli("run", "file-search", "-q", timeout=300)
    assert p.returncode == 0, p.stderr
    assert "speed (1/runtime) relative to mglru@6.15" in p.stdout
    for name in POLICIES:
        assert name in p.stdout
