"""validate --cpu-cost measured (reclaimlab.kernel.cpu_cost): the guest's task and kswapd
speeds from its console, the factor on the model's reclaim costs, and its fixed point."""

import pytest

from reclaimlab.kernel import KernelError, console, cpu_cost
from reclaimlab.kernel.run import Setup, prepare


def boot(wcpu_ms: int, dreclaim_ms: int, ticks: int, scanned: int) -> console.Console:
    # kswapd0 ran TICKS clock ticks (10 ms) over the workload and scanned SCANNED pages.
    return console.parse(f"@@kthread start kswapd0 100\n@@kthread end kswapd0 {100 + ticks}\n"
                         f"@@dreclaim 12 {dreclaim_ms * 1000} 900\n@@wcpu {wcpu_ms * 1_000_000}\n"
                         f"@@phase 0 1000\n@@vm pgscan_kswapd {scanned}\n@@phase-end 0\n")


def test_the_guest_reports_its_workloads_cpu_time():
    assert console.parse("@@wcpu 2370000000\n").workload_cpu_ns == 2_370_000_000
    assert console.parse("@@done 0\n").workload_cpu_ns is None


def test_guest_speeds_are_the_boots_means_outside_direct_reclaim():
    # Boot 1: 3.0 s of CPU, 1.0 s in direct reclaim, kswapd 200 ticks (2 s) for 40,000
    # pages: 50 us a page. Boot 2: 2.6 s, 0.6 s, 300 ticks for 60,000 pages.
    g = cpu_cost.guest_speeds([boot(3000, 1000, 200, 40_000), boot(2600, 600, 300, 60_000)])
    assert g["task_cpu_s"] == pytest.approx(2.0)
    assert g["kswapd_ns_per_scan"] == pytest.approx(2.5e9 / 50_000)
    with pytest.raises(KernelError, match="@@wcpu"):
        cpu_cost.guest_speeds([console.parse("@@kthread start kswapd0 1\n@@kthread end kswapd0 2\n")])
    no_kswapd = console.parse("@@dreclaim 0 0 0\n@@wcpu 5\n")
    with pytest.raises(KernelError, match="@@kthread"):
        cpu_cost.guest_speeds([no_kswapd])


def sim(task_cpu_s: float, direct_s: float, kswapd_cpu_s: float, scanned: int, config: dict) -> dict:
    return {"metrics": {"task_cpu_s": task_cpu_s, "direct_reclaim_s": direct_s, "reclaim_throttle_s": 0.0,
                        "kswapd_cpu_s": kswapd_cpu_s},
            "vmstat": {"pgscan_kswapd": scanned}, "config": config}


def test_the_factor_puts_kswapds_cost_per_page_in_units_of_the_tasks_work():
    guest = {"task_cpu_s": 2.0, "kswapd_ns_per_scan": 50_000.0}
    # The model's task: 0.2 s outside direct reclaim (the guest's task is 10x slower);
    # its kswapd 4 us a page (in the guest's units 40 us): reclaim must cost 1.25x.
    m = cpu_cost.model_speeds(sim(0.25, 0.05, 0.4, 100_000, {}))
    assert m["task_cpu_s"] == pytest.approx(0.2) and m["kswapd_ns_per_scan"] == pytest.approx(4000)
    assert cpu_cost.factor(guest, m) == pytest.approx(1.25)
    assert cpu_cost.factor(guest, cpu_cost.model_speeds(sim(0.25, 0.05, 0.0, 0, {}))) is None
    assert cpu_cost.factor({"task_cpu_s": 2.0}, m) is None


def test_measured_scales_the_reclaim_costs_until_kswapd_runs_at_the_guests_relative_speed():
    consoles = [boot(2500, 500, 250, 50_000)]  # task 2 s, kswapd 50 us a page
    config = {"cost.scan_ns": "100", "cost.rmap_ns": "400", "cost.unmap_ns": "500", "cost.free_ns": "100",
              "cost.walk_pte_ns": "10", "swap.zram.compress_ns": "6000", "cost.minor_fault_ns": "1000"}
    calls = []

    def simulate(settings):
        # A model whose kswapd costs 4 us a page at the default costs and scans fewer pages
        # (less work done per wake-up) as they grow; the task's work stays 0.2 s.
        calls.append(settings)
        k = int(settings["cost.scan_ns"]) / 100
        return sim(0.2 + 0.01 * k, 0.01 * k, 0.4 * k * 0.9, int(100_000 * 0.9), {**config, **settings})

    first = sim(0.21, 0.01, 0.4, 100_000, config)
    run, settings, fig = cpu_cost.measured(consoles, {"policy": "classic@6.15"}, first, simulate)
    assert fig["factor"] == pytest.approx(1.25, rel=0.05)
    assert abs(fig["residual"] - 1) <= cpu_cost.CPU_COST_TOLERANCE
    assert settings["cost.rmap_ns"] == str(round(400 * fig["factor"]))
    assert settings["swap.zram.compress_ns"] == str(round(6000 * fig["factor"]))
    assert "cost.minor_fault_ns" not in settings, "the task's costs stay the model's"
    assert run["config"]["cost.scan_ns"] == settings["cost.scan_ns"] and len(calls) == len(fig["runs"]) - 1
    # Neither side's kswapd scanned a page: the model's run as it was.
    same = cpu_cost.measured([boot(2500, 500, 0, 0)], {"policy": "x"}, first, simulate)
    assert same[0] is first and same[2]["factor"] is None


@pytest.mark.parametrize("spec, setup, what", [
    ("hotcold", {}, "sleeps"),
    ("seqloop", {}, "file pages"),
])
def test_cpu_cost_measured_is_refused_where_it_compares_nothing(spec, setup, what):
    with pytest.raises(KernelError, match=f"--cpu-cost measured: not for .*{what}"):
        prepare(Setup(workload=spec, cpu_cost="measured", **setup))
    with pytest.raises(KernelError, match="--cpu-cost must be"):
        prepare(Setup(workload="anon", cpu_cost="fast"))
    # The THP workloads measure their THP faults instead (test_kernel_thp.py).
    assert prepare(Setup(workload="thpscale", cpu_cost="measured", memory="none", guest_mb=1024)).wl.thp
