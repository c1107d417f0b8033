#!/usr/bin/python3
"""Scaling curves on simulated clusters (SimGrid SMPI, scripts/simulate.sh): every strategy
of the trainer at each P on each platform, and allreduce_bench's algorithms further out.

Trainer (URL-like rows, default step flags, every epoch evaluated): the simulated epoch
time (median over the epochs), its communication share, the bytes a rank sent per epoch,
and the simulated training time until the test accuracy is within --within (default 1
point) of LIBLINEAR's `-s 0` on the same files (loading left out: SMPI does not simulate
it). allreduce_bench: each algorithm's median time and bytes per rank per call at P up to
--bench-ranks' largest, beside its analytical volume.

usage: scripts/bench_scaling.py [--platforms gbe,aries] [--ranks 8,16,32,64,128,256]
         [--strategies all|a,b,...] [--rows 200000] [--test-rows 20000] [--epochs 5]
         [--within 0.01] [--bench-ranks 8,16,...,1024] [--bench-dim 1048576] [--no-bench]
         [--dir out/scaling]
Writes DIR/trainer.csv, DIR/bench.csv and DIR/scaling_<platform>.png (epoch time and
speed-up over allreduce against P per strategy, bytes against P, time to accuracy
against P) and DIR/bench_<platform>.png (time and bytes per call against P, bytes beside
the analytical volume). Needs `make SIM=1` and `make` (this script runs both); it first
measures this machine's speed (`simulate.sh --calibrate`), by which the ranks' compute is
scaled to the platforms' nodes."""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_time_to_accuracy import files, liblinear  # the same generated sets and LIBLINEAR's target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIMULATE = os.path.join(ROOT, "scripts/simulate.sh")
STRATEGIES = ["allreduce", "ssar-rec-dbl", "ssar-split-ag", "dsar-split-ag", "dsar-early", "sparse-auto",
              "topk-ag", "topk-dsa", "gtopk", "oktopk", "ps-sync", "ps-async", "local-sgd"]
TRAINER_FIELDS = ["platform", "ranks", "strategy", "epoch_s", "comm_s", "bytes_per_rank", "accuracy",
                  "target", "seconds_to_target", "epochs_to_target", "simulation_wall_s"]


def ints(text):
    return [int(x) for x in text.split(",") if x]


def trainer_run(platform, ranks, strategy, train, test, args, target):
    profile = os.path.join(args.dir, f"profile_{platform}_p{ranks}_{strategy}.csv")
    cmd = [SIMULATE, "--platform", platform, "-np", str(ranks), "--", os.path.join(ROOT, "build-sim/mpisgd"),
           "train", "--data", train, "--test", test, "--strategy", strategy, "--epochs", str(args.epochs),
           "--no-early-stop", "--no-progress", "--profile", profile]
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        print(f"  {platform} P={ranks} {strategy}: failed (exit {run.returncode}):\n{run.stderr[-2000:]}",
              file=sys.stderr)
        return None
    with open(profile) as f:
        epochs = list(csv.DictReader(f))
    spent, reached = 0.0, None
    for n, e in enumerate(epochs, 1):
        spent += float(e["wall_s_max"])
        if reached is None and float(e["test_accuracy"]) >= target:
            reached = (spent, n)
    return {
        "platform": platform, "ranks": ranks, "strategy": strategy,
        "epoch_s": statistics.median(float(e["wall_s_max"]) for e in epochs),
        "comm_s": statistics.median(float(e["comm_s_mean"]) for e in epochs),
        "bytes_per_rank": statistics.median(float(e["bytes_sent_mean"]) for e in epochs),
        "accuracy": float(epochs[-1]["test_accuracy"]), "target": target,
        "seconds_to_target": reached[0] if reached else "", "epochs_to_target": reached[1] if reached else "",
        "simulation_wall_s": round(wall, 1),
    }


def bench_runs(platform, ranks, args):
    """allreduce_bench's rows for one platform and P, from its own --csv output."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.csv")
        cmd = [SIMULATE, "--platform", platform, "-np", str(ranks), "--", os.path.join(ROOT, "build-sim/allreduce_bench"),
               "--dim", str(args.bench_dim), "--reps", "3", "--min-time", "0", "--rounds", "1", "--csv", out]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0 or not os.path.exists(out):
            print(f"  bench {platform} P={ranks}: failed (exit {run.returncode}):\n{run.stderr[-2000:]}",
                  file=sys.stderr)
            return []
        with open(out) as f:
            return [dict(r, platform=platform) for r in csv.DictReader(f)]


def plot(platform, rows, bench, target, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mine = [r for r in rows if r["platform"] == platform]
    strategies = [s for s in STRATEGIES if any(r["strategy"] == s for r in mine)]
    dense = {r["ranks"]: r["epoch_s"] for r in mine if r["strategy"] == "allreduce"}
    fig, ax = plt.subplots(2, 2, figsize=(13, 9))
    for s in strategies:
        pts = sorted((r["ranks"], r) for r in mine if r["strategy"] == s)
        p = [x for x, _ in pts]
        ax[0][0].plot(p, [r["epoch_s"] for _, r in pts], marker="o", label=s)
        speedup = [(x, dense[x] / r["epoch_s"]) for x, r in pts if x in dense]
        if speedup:  # only where allreduce ran at that P
            ax[0][1].plot([x for x, _ in speedup], [v for _, v in speedup], marker="o", label=s)
        ax[1][0].plot(p, [r["bytes_per_rank"] for _, r in pts], marker="o", label=s)
        reached = [(x, r["seconds_to_target"]) for x, r in pts if r["seconds_to_target"] != ""]
        if reached:
            ax[1][1].plot([x for x, _ in reached], [t for _, t in reached], marker="o", label=s)
    titles = ["simulated epoch time (s)", "speed-up over allreduce", "bytes sent per rank per epoch",
              f"simulated training time to accuracy {target:.4f} (s)"]
    for a, title in zip(ax.flat, titles):
        if a.lines:  # no points: no run reached the target, or allreduce did not run
            a.set_xscale("log", base=2)
            a.set_yscale("log")
        a.set_xlabel("ranks P")
        a.set_title(title)
        a.grid(True, which="both", alpha=0.3)
    ax[0][0].legend(fontsize=7, ncol=2)
    fig.suptitle(f"mpisgd on the simulated {platform} platform (URL-like rows)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"scaling_{platform}.png"), dpi=110)
    mine = [b for b in bench if b["platform"] == platform]
    if mine:
        fig, (t, v) = plt.subplots(1, 2, figsize=(14, 5))
        for n, algo in enumerate(sorted({b["algo"] for b in mine})):
            pts = sorted((int(b["ranks"]), b) for b in mine if b["algo"] == algo)
            p = [x for x, _ in pts]
            line = t.plot(p, [1e3 * float(b["median_s"]) for _, b in pts], marker="o", label=algo)[0]
            v.plot(p, [float(b["sent_bytes"]) for _, b in pts], marker="o", color=line.get_color(), label=algo)
            if all(float(b["analytical_bytes"]) > 0 for _, b in pts):
                v.plot(p, [float(b["analytical_bytes"]) for _, b in pts], ls=":", color=line.get_color())
        t.set_ylabel("median ms per call")
        v.set_ylabel("bytes sent per rank per call (dotted: analytical)")
        for a in (t, v):
            a.set_xscale("log", base=2)
            a.set_yscale("log")
            a.set_xlabel("ranks P")
            a.grid(True, which="both", alpha=0.3)
        t.legend(fontsize=7, ncol=2)
        fig.suptitle(f"allreduce_bench on the simulated {platform} platform")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"bench_{platform}.png"), dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platforms", default="gbe,aries")
    ap.add_argument("--ranks", type=ints, default=ints("8,16,32,64,128,256"))
    ap.add_argument("--strategies", default="all")
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--test-rows", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--within", type=float, default=0.01)
    ap.add_argument("--bench-ranks", type=ints, default=ints("8,16,32,64,128,256,512,1024"))
    ap.add_argument("--bench-dim", type=int, default=1048576)
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--dir", default=os.path.join(ROOT, "out/scaling"))
    args = ap.parse_args()
    strategies = STRATEGIES if args.strategies == "all" else args.strategies.split(",")
    os.makedirs(args.dir, exist_ok=True)
    subprocess.run(["make", "-C", ROOT, "SIM=1", "build-sim/mpisgd", "build-sim/allreduce_bench", "build-sim/gen_data"],
                   check=True)
    subprocess.run(["make", "-C", ROOT, "build/gen_data"], check=True)
    # Calibrated now, so this sweep's simulated compute is a platform node's, not this
    # machine's in whatever state it is in today.
    subprocess.run([SIMULATE, "--calibrate"], check=True)

    train, test = files("url", args.rows, args.test_rows, args.dir)
    target = liblinear(train, test)[1] - args.within
    print(f"URL-like {args.rows} train / {args.test_rows} test rows; target accuracy {target:.4f} "
          f"(LIBLINEAR -s 0 less {args.within})")
    rows, bench = [], []
    # Rows are written as they come: a sweep to P = 256 runs for hours.
    trainer_csv = open(os.path.join(args.dir, "trainer.csv"), "w", newline="")
    trainer_out = csv.DictWriter(trainer_csv, fieldnames=TRAINER_FIELDS)
    trainer_out.writeheader()
    for platform in args.platforms.split(","):
        for ranks in args.ranks:
            for strategy in strategies:
                r = trainer_run(platform, ranks, strategy, train, test, args, target)
                if r:
                    rows.append(r)
                    trainer_out.writerow(r)
                    trainer_csv.flush()
                    reached = f"{r['seconds_to_target']:.2f} s" if r["seconds_to_target"] != "" else "not reached"
                    print(f"  {platform:>6} P={ranks:<4} {strategy:<14} epoch {r['epoch_s']:.3f} s "
                          f"(comm {r['comm_s']:.3f}), {r['bytes_per_rank'] / 1e6:.2f} MB/rank, acc "
                          f"{r['accuracy']:.4f}, to target {reached}  [{r['simulation_wall_s']} s of wall]",
                          flush=True)
        if not args.no_bench:
            for ranks in args.bench_ranks:
                got = bench_runs(platform, ranks, args)
                bench += got
                print(f"  bench {platform} P={ranks}: {len(got)} algorithms", flush=True)
    trainer_csv.close()
    if bench:
        with open(os.path.join(args.dir, "bench.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(bench[0].keys()))
            w.writeheader()
            w.writerows(bench)
    for platform in args.platforms.split(","):
        plot(platform, rows, bench, target, args.dir)
    print(f"wrote trainer.csv{', bench.csv' if bench else ''} and the plots to {args.dir}")


if __name__ == "__main__":
    main()
