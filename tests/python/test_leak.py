"""No memory grows over many compile-run cycles (resident set size)."""
import resource

import hbg

TEXT = """model Leak {
    parameter R = 1.0;
    Se s(1); R r(R); C c(1) { q0 = 0; } 1 j;
    bond s -> j; bond j -> r; bond j -> c;
    output c.q;
    experiment { t_end = 1; dt_out = 0.1; }
}
"""


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def cycle():
    model = hbg.compile(TEXT)
    r = model.simulate()
    assert r["c.q"][-1] > 0.6


def test_no_leak_over_10000_compile_run_cycles():
    for _ in range(500):  # caches and allocator pools settle
        cycle()
    before = rss_kib()
    for _ in range(10000):
        cycle()
    grown = rss_kib() - before
    # A leak of even 1 KiB a cycle would be 10 MB.
    assert grown < 4096, "RSS grew by %d KiB over 10,000 cycles" % grown
