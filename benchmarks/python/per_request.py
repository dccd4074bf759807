"""bench.py's per-request rows (RQ0, RQV, and SG for scale) for tether and dishka only, 9 repeats
interleaved, so two versions of the tether package compare on a busy machine: the package is the
one PYTHONPATH names first (bench.py's own scenarios, checks and timing loop).

    PYTHONPATH=bindings/python TETHER_LIBRARY=build/lib/libtether.so \\
        benchmarks/python/.venv/bin/python benchmarks/python/per_request.py
"""

from __future__ import annotations

import statistics

import bench


def main() -> None:
    bench.REPEATS = 9
    tether, dishka = bench.contender_tether(), bench.contender_dishka()
    ops = {}
    for shape in ("RQ0", "RQV", "SG"):
        ops["tether", shape], ops["dishka", shape] = tether[shape][0], dishka[shape][0]
    samples, failed = bench.time_ops(ops)
    print("| shape | tether | dishka | tether / dishka |\n|---|---:|---:|---:|")
    for shape in ("RQ0", "RQV", "SG"):
        if ("tether", shape) in failed or ("dishka", shape) in failed:
            print(f"| {shape} | failed | | |")
            continue
        ours, peer = statistics.median(samples["tether", shape]), statistics.median(samples["dishka", shape])
        ratio = bench.ratio(samples, ("tether", shape), ("dishka", shape))
        print(f"| {shape} | {bench.fmt(ours)} | {bench.fmt(peer)} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
