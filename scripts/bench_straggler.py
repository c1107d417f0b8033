#!/usr/bin/python3
"""What one slow worker costs each strategy, the reason asynchronous SGD exists.

First `allreduce` trains without a straggler for --target-epochs epochs; its test loss
then is the target. Then every strategy trains with rank 0 slowed --slow-factor times
(`mpisgd train --slow-rank 0:F`, a benchmark aid: its steps take F times as long)
for up to --epochs epochs, and the script reports the training time (the slowest rank's
epoch times summed, evaluation left out) until the test loss first reaches the target,
the epochs that took, and the ratio to ps-sync's and allreduce's times. Rounds alternate
the strategies; each figure is the median over the rounds, with the range beside it.

usage: scripts/bench_straggler.py [--ranks 4] [--rows 200000] [--test-rows 50000]
         [--slow-factor 2] [--batch 100] [--lr 1] [--epochs 6] [--target-epochs 3] [--rounds 3]
         [--network none|shared|per-rank] [--rate 1gbit]
         [--strategies allreduce,sparse-auto,ps-sync,ps-async]
Strategies take their own flags after colons, as in scripts/bench_strategies.py.
Profiles go to out/bench/straggler_<strategy>.csv."""
import argparse
import csv
import os
import statistics
import subprocess
import sys

from bench_strategies import BUILD, ROOT, dataset, launcher, spec_flags



def train(args, data, test, spec, epochs, slow, out):
    """The per-epoch (training seconds, test loss) of one run."""
    strategy, own = spec_flags(spec)
    profile = os.path.join(out, f"straggler_{spec.replace(':', '_').replace('=', '')}.csv")
    cmd = launcher(args) + ["-np", str(args.ranks), os.path.join(BUILD, "mpisgd"), "train", "--data", data,
                            "--test", test, "--strategy", strategy, "--epochs", str(epochs), "--profile", profile]
    cmd += ["--batch", str(args.batch), "--lr", str(args.lr), "--lr-schedule", "invscaling", "--no-progress"] + own
    if slow:
        cmd += ["--slow-rank", f"0:{args.slow_factor}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(profile) as f:
        return [(float(r["wall_s_max"]), float(r["test_loss"])) for r in csv.DictReader(f)]


def time_to(target, epochs):
    """Training seconds and epochs until the test loss first reaches `target` (None if never)."""
    spent = 0.0
    for n, (wall, loss) in enumerate(epochs, 1):
        spent += wall
        if loss <= target:
            return spent, n
    return None, None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--rows", type=int, default=200000)
    p.add_argument("--test-rows", type=int, default=50000)
    p.add_argument("--slow-factor", type=float, default=2)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--lr", type=float, default=1)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--target-epochs", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--network", choices=["none", "shared", "per-rank"], default="none")
    p.add_argument("--rate", default="1gbit")
    p.add_argument("--strategies", default="allreduce,sparse-auto,ps-sync,ps-async")
    args = p.parse_args()
    out = os.path.join(ROOT, "out/bench")
    os.makedirs(out, exist_ok=True)
    data = dataset("url", args.rows, out)
    test = dataset("url", args.test_rows, out, first_row=args.rows)

    target = train(args, data, test, "allreduce", args.target_epochs, False, out)[-1][1]
    specs = args.strategies.split(",")
    times = {s: [] for s in specs}
    reached = {s: [] for s in specs}
    for _ in range(args.rounds):
        for s in specs:
            seconds, epochs = time_to(target, train(args, data, test, s, args.epochs, True, out))
            times[s].append(seconds)
            reached[s].append(epochs)

    net = "shared memory" if args.network == "none" else f"{args.network} {args.rate}"
    print(f"\nP={args.ranks}, {args.rows} URL-like rows, logreg, batch {args.batch}/rank, lr {args.lr:g} invscaling, {net}; rank 0 slowed "
          f"{args.slow_factor:g}x; target: allreduce's test loss after {args.target_epochs} epochs without it, "
          f"{target:.5f}; median of {args.rounds} round(s)")
    print(f"{'strategy':<28} {'seconds to target':>18} {'range':>15} {'epochs':>7} {'vs ps-sync':>11} "
          f"{'vs allreduce':>13}")
    medians = {}
    for s in specs:
        done = [t for t in times[s] if t is not None]
        medians[s] = statistics.median(done) if len(done) == len(times[s]) else None
    for s in specs:
        m = medians[s]
        if m is None:
            print(f"{s:<28} {'not reached':>18} in {args.epochs} epochs in some round")
            continue
        ratio = lambda base: f"{m / medians[base]:.2f}x" if medians.get(base) else "-"
        print(f"{s:<28} {m:>18.2f} {min(times[s]):>7.2f}-{max(times[s]):<7.2f} "
              f"{statistics.median(reached[s]):>7g} {ratio('ps-sync'):>11} {ratio('allreduce'):>13}")


if __name__ == "__main__":
    sys.exit(main())
