"""Importing real-kernel boots into the results store (reclaimlab.kernel.store): the
schema of simulated runs, per-phase time series, one row per boot, resumable numbering."""

from __future__ import annotations

from reclaimlab.kernel import store
from reclaimlab.kernel.console import parse
from reclaimlab.results import Store

LOG = ("@@boot 6.12.117+deb12-amd64 2.9\n@@lru_gen 0x0007\n"
       "@@phase 0 2000000000\n@@vm pgpgin 98304\n@@vm pgsteal_file 8576\n@@phase-end 0\n"
       "@@phase 1 1000000000\n@@vm pgpgin 98236\n@@vm pgsteal_file 24576\n@@vm workingset_refault_file 24559\n"
       "@@phase-end 1\n@@done 0\n@@memory.events max 518\n@@exit 0\n")
KEY = {"kernel": "6.12.117+deb12-amd64", "mglru": "on", "workload": "seqloop:passes=2", "memory.max": "67108864"}


def boot(rep: int) -> dict:
    return store.boot_run(parse(LOG), key=KEY, params={"source": "kernel", "mglru": "on", "workload": "seqloop"},
                          config={"policy": "mglru@6.15", "cgroup.wl.memory.max": "67108864"}, repetition=rep,
                          workload="seqloop:passes=2", policy="kernel 6.12.117 (mglru@6.15)", started=1.0,
                          finished=20.0, phase_names=["pass1", "pass2"], log="/x/boot0.console.log")


def test_boot_is_stored_like_a_simulated_run(tmp_path):
    assert store.next_repetition(tmp_path, KEY) == 0
    assert store.add_boot(tmp_path, boot(0))
    assert not store.add_boot(tmp_path, boot(0))  # the same boot again: kept once
    assert store.next_repetition(tmp_path, KEY) == 1
    assert store.add_boot(tmp_path, boot(1))
    with Store(tmp_path) as s:
        vm = s.vmstat()
        assert vm.height == 2
        row = vm.row(0, named=True)
        assert row["variant"] == "kernel" and row["mglru"] == "on"
        # Totals over the phases, as a simulated run's vmstat holds totals.
        assert row["pgpgin"] == 98304 + 98236 and row["pgsteal_file"] == 8576 + 24576
        assert row["workingset_refault_file"] == 24559
        m = s.metrics().row(0, named=True)
        assert m["wall_s"] == 3.0 and m["phase.pass1.wall_s"] == 2.0 and m["phase.pass2.wall_s"] == 1.0
        assert m["memory.events.max"] == 518
        ts = s.timeseries(row["run_id"])
        # One row per phase, each counter's delta in that phase.
        assert ts["phase"].to_list() == [0.0, 1.0]
        assert ts["pgpgin"].to_list() == [98304.0, 98236.0]
        assert ts["workingset_refault_file"].to_list() == [0.0, 24559.0]


def test_load_boots_filters_by_params(tmp_path):
    store.add_boot(tmp_path, boot(0))
    got = store.load_boots(tmp_path, {"source": "kernel", "mglru": "on", "workload": "seqloop"})
    assert len(got) == 1 and got[0]["vmstat"]["pgpgin"] == 196540
    assert got[0]["config"]["kernel.console_log"] == "/x/boot0.console.log"
    assert store.load_boots(tmp_path, {"source": "kernel", "mglru": "off", "workload": "seqloop"}) == []
    assert store.load_boots(tmp_path, {"mglru": "on"}) == []  # exact params, not a subset


def test_the_hosts_load_while_a_boot_ran_is_kept_with_its_metrics(tmp_path):
    run = store.boot_run(parse(LOG), key=KEY, params={"source": "kernel", "mglru": "on", "workload": "seqloop"},
                         config={}, repetition=0, workload="seqloop:passes=2", policy="kernel", started=1.0,
                         finished=20.0, host={"host.other_cpus": 0.75, "host.qemu_cpu_s": None})
    assert run["metrics"]["host.other_cpus"] == 0.75
    assert "host.qemu_cpu_s" not in run["metrics"]  # unknown: not stored as a number
    store.add_boot(tmp_path, run)
    assert store.load_boots(tmp_path, {"source": "kernel", "mglru": "on", "workload": "seqloop"})[0]["metrics"][
        "host.other_cpus"] == 0.75
