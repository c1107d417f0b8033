#!/usr/bin/python3
"""The simulated 1 GbE platform against the emulated one: the same programs, side by side,
under scripts/slow_network.sh --mode per-rank --rate 1gbit (real ranks, real TCP over a
shaped veth per rank) and under scripts/simulate.sh --platform gbe (SMPI).

  pingpong_bench at P = 4: one-way time per message size, the curve a platform's link
      model (bandwidth, and SMPI's bandwidth factor by size) is read from; printed first,
      not counted in the verdict
  allreduce_bench at P = 4 and 8: each algorithm's median time per call and bytes per rank
  trainer at P = 4, 3 epochs, URL-like rows, each --strategy given: median epoch time,
      bytes per rank per epoch, and whether the model files are identical

Prints one table with the ratio simulated / emulated per row; the platform holds where the
ratios lie within 1 +- --tolerance (default 0.25) and the bytes and models are equal.
Timing on the emulated side is wall time: run it on an otherwise idle machine.

usage: scripts/calibrate_sim.py [--platform gbe] [--rows 40000] [--strategies a,b,...]
         [--dim 1048576] [--dir out/calibrate]
Needs root (slow_network.sh), `make` and `make SIM=1` (this script runs both)."""
import argparse
import csv
import filecmp
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def emulate(ranks):
    return [os.path.join(ROOT, "scripts/slow_network.sh"), "--mode", "per-rank", "--rate", "1gbit", "--", "-np",
            str(ranks)]


def simulator(platform):
    # The emulated ranks compute on this machine, so the simulated ones take the compute
    # time measured here unscaled (a node of the platform is this machine).
    return lambda ranks: [os.path.join(ROOT, "scripts/simulate.sh"), "--platform", platform, "-np", str(ranks),
                          "--host-speed", "node", "--"]


def bench(launch, build, ranks, args, out):
    if os.path.exists(out):
        os.remove(out)
    subprocess.run(launch(ranks) + [os.path.join(ROOT, build, "allreduce_bench"), "--dim", str(args.dim), "--csv",
                                    out], check=True, capture_output=True)
    with open(out) as f:
        return {r["algo"]: r for r in csv.DictReader(f)}


def pingpong(launch, build, out):
    if os.path.exists(out):
        os.remove(out)
    subprocess.run(launch(4) + [os.path.join(ROOT, build, "pingpong_bench"), "--csv", out], check=True,
                   capture_output=True)
    with open(out) as f:
        return {int(r["bytes"]): float(r["one_way_s"]) for r in csv.DictReader(f)}


def train(launch, build, strategy, data, out):
    train_file, test_file = data
    profile, model = out + ".csv", out + ".model"
    # A fixed dense switch: the derived one comes from summation speed measured at start-up,
    # which differs between runs, and with it the bytes (never the sums).
    subprocess.run(launch(4) + [os.path.join(ROOT, build, "mpisgd"), "train", "--data", train_file, "--test",
                                    test_file, "--strategy", strategy, "--epochs", "3", "--no-early-stop", "--no-progress",
                                    "--dense-switch", "0.25", "--profile", profile, "--save-model", model],
                   check=True, capture_output=True)
    with open(profile) as f:
        epochs = list(csv.DictReader(f))
    return (statistics.median(float(e["wall_s_max"]) for e in epochs),
            statistics.median(float(e["bytes_sent_mean"]) for e in epochs), model)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default="gbe")
    ap.add_argument("--rows", type=int, default=40000)
    ap.add_argument("--strategies", default="ssar-split-ag,sparse-auto,topk-ag,allreduce")
    ap.add_argument("--dim", type=int, default=1048576)
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("--dir", default=os.path.join(ROOT, "out/calibrate"))
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    subprocess.run(["make", "-C", ROOT, "build/mpisgd", "build/allreduce_bench", "build/pingpong_bench",
                    "build/gen_data"], check=True, capture_output=True)
    subprocess.run(["make", "-C", ROOT, "SIM=1", "build-sim/mpisgd", "build-sim/allreduce_bench",
                    "build-sim/pingpong_bench"], check=True, capture_output=True)
    data = []
    for name, rows, first in (("train", args.rows, 0), ("test", args.rows // 5, args.rows)):
        path = os.path.join(args.dir, f"url{args.rows}_{name}.svm")
        if not os.path.exists(path):
            subprocess.run([os.path.join(ROOT, "build/gen_data"), "--kind", "url", "--rows", str(rows), "--first-row",
                            str(first), "--seed", "13", "--out", path], check=True, capture_output=True)
        data.append(path)

    emulated = pingpong(emulate, "build", os.path.join(args.dir, "emulated_pingpong.csv"))
    simulated = pingpong(simulator(args.platform), "build-sim", os.path.join(args.dir, "simulated_pingpong.csv"))
    print("link: pingpong_bench at P = 4, one-way time (not counted in the verdict)")
    print(f"{'bytes':>10} {'emulated s':>11} {'simulated s':>12} {'ratio':>6}")
    for size, e in emulated.items():
        print(f"{size:>10} {e:>11.3e} {simulated[size]:>12.3e} {simulated[size] / e:>6.2f}")
    print()

    table = []  # (what, emulated s, simulated s, emulated bytes, simulated bytes, same model)
    for ranks in (4, 8):
        emulated = bench(emulate, "build", ranks, args, os.path.join(args.dir, f"emulated_p{ranks}.csv"))
        simulated = bench(simulator(args.platform), "build-sim", ranks, args,
                          os.path.join(args.dir, f"simulated_p{ranks}.csv"))
        for algo, e in emulated.items():
            s = simulated.get(algo)
            if s:
                table.append((f"allreduce_bench P={ranks} {algo}", float(e["median_s"]), float(s["median_s"]),
                              float(e["sent_bytes"]), float(s["sent_bytes"]), None))
    for strategy in args.strategies.split(","):
        e_time, e_bytes, e_model = train(emulate, "build", strategy, data,
                                         os.path.join(args.dir, f"emulated_train_{strategy}"))
        s_time, s_bytes, s_model = train(simulator(args.platform), "build-sim", strategy, data,
                                         os.path.join(args.dir, f"simulated_train_{strategy}"))
        table.append((f"trainer P=4 {strategy} epoch", e_time, s_time, e_bytes, s_bytes,
                      filecmp.cmp(e_model, s_model, shallow=False)))

    print(f"{'':<40} {'emulated s':>11} {'simulated s':>12} {'ratio':>6} {'bytes':>10} {'model':>6}")
    misses = 0
    for what, e, s, eb, sb, same in table:
        ratio = s / e
        ok = abs(ratio - 1) <= args.tolerance
        misses += not ok
        bytes_note = "equal" if eb == sb else f"{sb / eb:.3f}x"
        model_note = "-" if same is None else ("same" if same else "DIFFER")
        print(f"{what:<40} {e:>11.5f} {s:>12.5f} {ratio:>6.2f} {bytes_note:>10} {model_note:>6}"
              f"{'' if ok else '  outside 1 +- ' + str(args.tolerance)}")
    print(f"{len(table) - misses} of {len(table)} within {args.tolerance:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
