"""Summarises an `ncu --csv` file of bench/profile.sh: per kernel name, the
launches, GPU time, DRAM bytes and bandwidth per profiled run, largest first.

    python3 bench/profile_summary.py profile.csv [RUNS]"""
import csv
import sys
from collections import defaultdict


def load(path):
    launches = defaultdict(dict)  # launch id -> metric -> value
    names = {}
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and r[0] != "==PROF=="]
    header = None
    for r in rows:
        if header is None:
            if "Metric Name" in r:
                header = {k: i for i, k in enumerate(r)}
            continue
        if len(r) < len(header):
            continue
        lid = r[header["ID"]]
        names[lid] = r[header["Kernel Name"]]
        val = r[header["Metric Value"]].replace(",", "")
        unit = r[header["Metric Unit"]]
        try:
            v = float(val)
        except ValueError:
            continue
        scale = {"ns": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0,
                 "nsecond": 1e-6, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
        launches[lid][r[header["Metric Name"]]] = v * scale.get(unit, 1)
    return names, launches


def main():
    path = sys.argv[1]
    runs = float(sys.argv[2]) if len(sys.argv) > 2 else 1
    names, launches = load(path)
    agg = defaultdict(lambda: [0, 0.0, 0.0])
    for lid, m in launches.items():
        short = names[lid].split("(")[0][:60]
        a = agg[short]
        a[0] += 1
        a[1] += m.get("gpu__time_duration.sum", 0)
        a[2] += m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0)
    total = sum(a[1] for a in agg.values()) / runs
    print(f"{'kernel':60s} {'calls':>6s} {'ms/run':>8s} {'GB/s':>7s}")
    for k, (n, ms, by) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        gbs = by / (ms * 1e-3) / 1e9 if ms > 0 else 0
        print(f"{k:60s} {n / runs:6.0f} {ms / runs:8.3f} {gbs:7.0f}")
    print(f"{'total':60s} {'':6s} {total:8.3f}")
    top = sorted(launches.items(), key=lambda kv: -kv[1].get("gpu__time_duration.sum", 0))[:25]
    print("slowest launches: ms, grid, block, MB moved, occupancy %")
    for lid, m in top:
        print(f"  {m.get('gpu__time_duration.sum', 0):.4f} {m.get('launch__grid_size', 0):8.0f} "
              f"{m.get('launch__block_size', 0):5.0f} "
              f"{(m.get('dram__bytes_read.sum', 0) + m.get('dram__bytes_write.sum', 0)) / 1e6:8.1f} "
              f"{m.get('sm__warps_active.avg.pct_of_peak_sustained_active', 0):5.1f} "
              f"{names[lid].split('(')[0][:50]}")


if __name__ == "__main__":
    main()
