"""``kernel run --vmscan-trace``: the guest's per-pass reclaim sums as the console carries them."""
from reclaimlab.kernel import console
from types import SimpleNamespace

from reclaimlab.kernel.run import Setup, kernel_args


def test_vmpass_lines_parse():
    c = console.parse("@@vmpass 1442 1 0 2 0 54 968 968 0 968 0 0 0 10 0 0\n"
                      "@@vmpass 2000 3 0 1 3 0 0 0 0 0 0 0 0 99 0 0\n"
                      "@@vmdirect 205 12869 12869 0 12869 0\n@@lru_activate wl 366\n"
                      "@@pcp 48310 0 35 267 845\n@@vmtrace_lost 0\n@@refill 0 480 23\n@@refill 0 15 153\n"
                      "@@shrink ffffffff811c5a30 1 12 256 0\n@@ksym deferred_split_scan ffffffff811c5a30\n")
    assert [p["reclaimed"] for p in c.vmscan_passes] == [968, 0]
    assert c.vmscan_passes[1]["min_priority"] == 99 and c.vmscan_passes[0]["zid"] == 1
    assert c.vmscan_direct["reclaimed"] == 12869
    assert c.lru_activate == {"wl": 366}
    assert c.pcp_samples == [(48310, 0, 35, 267, 845)]
    assert c.pcp_refills == {(0, 480): 23, (0, 15): 153}
    assert c.shrinkers[(c.ksyms["deferred_split_scan"], 1)] == {"calls": 12, "scanned": 256, "freed": 0}


def test_vmscan_trace_is_a_kernel_parameter_only_when_asked():
    def args(**kw):
        p = SimpleNamespace(setup=Setup(workload="seqloop", **kw), zram=0, read_ahead_kb=128, fault_around_bytes=65536,
                            wl=SimpleNamespace(writes_files=False), damon_reclaim=None)
        return kernel_args(p, None)

    assert not any(a.startswith("lab.vmtrace") for a in args())
    assert "lab.vmtrace=1" in args(vmscan_trace=True)
    assert "lab.vmtrace=2" in args(vmscan_trace=2)
    assert "lab.vmtrace=3" in args(vmscan_trace=3)
