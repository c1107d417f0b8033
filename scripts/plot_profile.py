#!/usr/bin/python3
"""Draws an mpisgd profile (CSV or JSON lines): per-epoch compute vs communication time
(mean over ranks, with the max as a whisker) and the loss curves.

usage: plot_profile.py PROFILE [PROFILE ...] -o out.png [--x epoch|time]
Several profiles (e.g. one per strategy) are drawn side by side for comparison. With
--x time the losses are drawn against training time (the slowest rank's epochs summed,
loading and evaluation left out): time to a loss is what tells strategies apart, as a
strategy with cheaper epochs may need more of them."""
import argparse
import csv
import itertools
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_profile(path):
    with open(path) as f:
        if path.endswith(".csv"):
            rows = list(csv.DictReader(f))
        else:
            rows = [json.loads(line) for line in f if line.strip()]
    if not rows:
        sys.exit(f"{path}: no epochs in profile")

    def column(name):
        return [float(r[name]) if r.get(name) not in (None, "") else None for r in rows]

    return rows, column


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profiles", nargs="+")
    ap.add_argument("-o", "--out", required=True, help="PNG to write")
    ap.add_argument("--x", choices=("epoch", "time"), default="epoch", help="the loss panel's x axis")
    args = ap.parse_args()

    fig, (ax_time, ax_loss) = plt.subplots(1, 2, figsize=(13, 4.8))
    width = 0.8 / len(args.profiles)
    for k, path in enumerate(args.profiles):
        rows, col = read_profile(path)
        epochs = [int(r["epoch"]) for r in rows]
        label = f'{rows[0]["strategy"]} P={rows[0]["ranks"]}'
        x = [e + (k - (len(args.profiles) - 1) / 2) * width for e in epochs]
        compute, comm = col("compute_s_mean"), col("comm_s_mean")
        ax_time.bar(x, compute, width, label=f"{label} compute", alpha=0.9)
        ax_time.bar(x, comm, width, bottom=compute, label=f"{label} communication", alpha=0.9, hatch="//")
        ax_time.errorbar(x, col("wall_s_mean"), yerr=[[0] * len(x), [m - w for m, w in zip(col("wall_s_max"), col("wall_s_mean"))]],
                         fmt="none", ecolor="black", capsize=3)
        at = epochs if args.x == "epoch" else list(itertools.accumulate(col("wall_s_max")))
        ax_loss.plot(at, col("train_loss"), marker="o", label=f"{label} train loss")
        test = col("test_loss")
        if any(v is not None for v in test):
            ax_loss.plot(at, test, marker="s", linestyle="--", label=f"{label} test loss")
            metric = "test_accuracy" if "test_accuracy" in rows[0] else "test_rmse"
            last = col(metric)[-1]
            ax_loss.annotate(f"{metric} {last:.4f}", (at[-1], test[-1]), textcoords="offset points", xytext=(-60, 10))

    ax_time.set_xlabel("epoch")
    ax_time.set_ylabel("seconds (mean over ranks; whisker: slowest rank)")
    ax_time.set_title("time per epoch")
    ax_time.legend(fontsize=8)
    ax_loss.set_xlabel("epoch" if args.x == "epoch" else "training seconds (slowest rank)")
    ax_loss.set_ylabel("loss")
    ax_loss.set_title("loss")
    ax_loss.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot written to {args.out}")


if __name__ == "__main__":
    main()
