#!/usr/bin/python3
"""Trainer benchmark of the communication strategies: the same logreg run (URL-like or
Webspam-like data, batch 1000 per rank and lr 5 unless given) with each strategy,
optionally over the emulated slow network of scripts/slow_network.sh. Prints, per strategy, the mean epoch time, the
mean communication time per epoch, the bytes each rank sent per epoch (mean, the least
busy rank, under a parameter server a worker, and the busiest, a server), the density of the
combined update, the test accuracy after the last epoch and the speed-up over `allreduce`.

usage: scripts/bench_strategies.py [--kind url|webspam] [--ranks 4] [--rows 200000]
         [--test-rows 0] [--epochs 2] [--batch 1000|auto] [--lr 5|auto] [--rounds 1] [--network none|shared|per-rank]
         [--rate 1gbit] [--strategies a,b,...]
         [--dense-switch D]   (passed to every strategy; sparse-auto derives its own)
         [--density D]        (passed to the top-k strategies)
A strategy may carry its own flags after colons, e.g. ps-async:servers=2:drop-rate=0.99
(--servers 2 --drop-rate 0.99) or ps-sync:overlap (a flag without a value).
Profiles go to out/bench/strategies_<network>_<strategy>.csv."""
import argparse
import csv
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
ALL = ["allreduce", "ssar-rec-dbl", "ssar-split-ag", "dsar-split-ag", "dsar-early", "sparse-auto"]
TOPK = ["topk-ag", "topk-dsa", "gtopk", "gaussiank", "oktopk"]


def dataset(kind, rows, out, first_row=0):
    """A generated set as a binary cache, made again when mpisgd is newer (its cache format
    may have changed); rows from `first_row` on (a test set follows the training rows)."""
    cache = os.path.join(out, f"{kind}{rows}_{first_row}.bin")
    if not os.path.exists(cache) or os.path.getmtime(cache) < os.path.getmtime(os.path.join(BUILD, "mpisgd")):
        text = os.path.join(out, f"{kind}{rows}_{first_row}.svm")
        subprocess.run([os.path.join(BUILD, "gen_data"), "--kind", kind, "--rows", str(rows), "--seed", "7",
                        "--first-row", str(first_row), "--out", text], check=True)
        subprocess.run([os.path.join(ROOT, "scripts/mpirun_local.sh"), "-np", "1", os.path.join(BUILD, "mpisgd"),
                        "convert", "--data", text, "--out", cache], check=True, capture_output=True)
        os.remove(text)
    return cache


def launcher(args):
    if args.network == "none":
        return [os.path.join(ROOT, "scripts/mpirun_local.sh")]
    return [os.path.join(ROOT, "scripts/slow_network.sh"), "--mode", args.network, "--rate", args.rate, "--"]


def spec_flags(spec):
    """The strategy of `spec` (name:flag=value:flag...) and its own flags."""
    name, *options = spec.split(":")
    flags = []
    for o in options:
        key, _, value = o.partition("=")
        flags += ["--" + key] + ([value] if value else [])
    return name, flags


def run(args, data, test, spec, out):
    strategy, own_flags = spec_flags(spec)
    profile = os.path.join(out, f"strategies_{args.network}_{spec.replace(':', '_').replace('=', '')}.csv")
    cmd = launcher(args) + ["-np", str(args.ranks), os.path.join(BUILD, "mpisgd"), "train", "--data", data,
                            "--strategy", strategy, "--epochs", str(args.epochs), "--batch", args.batch, "--lr", args.lr,
                            "--lr-schedule", "invscaling", "--no-progress", "--profile", profile, "--log-level", "warn"]
    cmd += own_flags
    if args.dense_switch is not None:
        cmd += ["--dense-switch", str(args.dense_switch)]
    if args.density is not None and strategy in TOPK:
        cmd += ["--density", str(args.density)]
    if test:
        cmd += ["--test", test]
    subprocess.run(cmd, check=True)
    with open(profile) as f:
        rows = list(csv.DictReader(f))
    mean = lambda key: sum(float(r[key]) for r in rows) / len(rows)
    return {"wall": mean("wall_s_max"), "comm": mean("comm_s_mean"), "sent": mean("bytes_sent_mean") / 1e6,
            "sent_min": mean("bytes_sent_min") / 1e6, "sent_max": mean("bytes_sent_max") / 1e6,
            "density": mean("density"), "loss": float(rows[-1]["train_loss"]),
            "acc": float(rows[-1]["test_accuracy"]) if test else float("nan")}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=["url", "webspam"], default="url")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--rows", type=int, default=200000)
    p.add_argument("--test-rows", type=int, default=0)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch", default="1000", help="rows per worker step, or auto (mpisgd's default)")
    p.add_argument("--lr", default="5", help="learning rate, or auto (mpisgd's default)")
    p.add_argument("--network", choices=["none", "shared", "per-rank"], default="none")
    p.add_argument("--rate", default="1gbit")
    p.add_argument("--strategies", default=",".join(ALL))
    p.add_argument("--dense-switch", type=float)
    p.add_argument("--density", type=float)
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    out = os.path.join(ROOT, "out/bench")
    os.makedirs(out, exist_ok=True)
    data = dataset(args.kind, args.rows, out)
    test = dataset(args.kind, args.test_rows, out, first_row=args.rows) if args.test_rows else None

    # In rounds over the strategies, so that a slow spell of the machine falls on all;
    # each figure is the median over the rounds (the round of the median epoch time).
    strategies = args.strategies.split(",")
    runs = {s: [] for s in strategies}
    for _ in range(args.rounds):
        for s in strategies:
            runs[s].append(run(args, data, test, s, out))
    results = {s: sorted(rs, key=lambda r: r["wall"])[len(rs) // 2] for s, rs in runs.items()}
    base = results.get("allreduce")
    net = "shared memory" if args.network == "none" else f"{args.network} {args.rate}"
    if args.dense_switch is not None:
        net += f", --dense-switch {args.dense_switch}"
    print(f"\nP={args.ranks}, {args.rows} {args.kind}-like rows, logreg, batch {args.batch}/rank, lr {args.lr} invscaling, {net}; means over "
          f"{args.epochs} epochs, median of {args.rounds} round(s)")
    width = max(14, *(len(s) for s in results))
    print(f"{'strategy':<{width}} {'epoch s':>9} {'comm s':>9} {'sent MB/rank':>13} {'min rank':>9} {'max rank':>9} {'density':>9} {'loss':>8} "
          f"{'test acc':>9} {'speed-up':>9}")
    for s, r in results.items():
        speedup = f"{base['wall'] / r['wall']:.1f}x" if base else "-"
        print(f"{s:<{width}} {r['wall']:>9.3f} {r['comm']:>9.3f} {r['sent']:>13.1f} {r['sent_min']:>9.2f} {r['sent_max']:>9.1f} {r['density']:>9.2e} "
              f"{r['loss']:>8.4f} {r['acc']:>9.4f} {speedup:>9}")


if __name__ == "__main__":
    sys.exit(main())
