#!/usr/bin/python3
"""Training quality with default flags, side by side with LIBLINEAR on the same files.

For each set and model, mpisgd runs with no step flags (`--batch auto --lr auto`,
invscaling, early stopping, at most --epochs 20) at each P, and LIBLINEAR with its
default C: logreg against `-s 0`, svm against `-s 3`, linreg against `-s 11` (the
regression target being the +-1 label). Prints the test accuracy (RMSE for linreg)
each reaches, mpisgd's epochs run and wall time, and the gap to LIBLINEAR; the issue's
bar is 1 point of accuracy and 5% of RMSE.

Sets: url and webspam are written with build/gen_data (--url-rows / --webspam-rows
training rows, a quarter of that for testing); breast_cancer and digits0 come from
scripts/small_sets.py. At P > 1 the default strategy, the lossless `sparse-auto`,
combines the updates.

usage: scripts/bench_defaults.py [--sets url,webspam,breast_cancer,digits0]
         [--models logreg,svm,linreg] [--ranks 1,4,8] [--url-rows 200000]
         [--webspam-rows 16000] [--dir out/bench]
"""
import argparse
import csv
import math
import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
MPIRUN = os.path.join(ROOT, "scripts/mpirun_local.sh")
SOLVER = {"logreg": "0", "svm": "3", "linreg": "11"}


def generated(kind, rows, out):
    paths = []
    for name, n, first in (("train", rows, 0), ("test", rows // 4, rows)):
        path = os.path.join(out, f"defaults_{kind}{rows}_{name}.svm")
        if not os.path.exists(path):
            subprocess.run([os.path.join(BUILD, "gen_data"), "--kind", kind, "--rows", str(n), "--first-row",
                            str(first), "--seed", "11", "--out", path], check=True, capture_output=True)
        paths.append(path)
    return paths


def small(name, out):
    folder = os.path.join(out, "small")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts/small_sets.py"), "--out", folder], check=True,
                   capture_output=True)
    return [os.path.join(folder, f"{name}_{split}.svm") for split in ("train", "test")]


def liblinear(model, train, test):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model")
        start = time.perf_counter()
        subprocess.run(["liblinear-train", "-s", SOLVER[model], "-q", train, path], check=True)
        seconds = time.perf_counter() - start
        out = subprocess.run(["liblinear-predict", test, path, os.path.join(tmp, "pred")], check=True,
                             capture_output=True, text=True).stdout
    if model == "linreg":
        return seconds, math.sqrt(float(re.search(r"Mean squared error = ([0-9.eE+-]+)", out).group(1)))
    return seconds, float(re.search(r"Accuracy = ([0-9.]+)%", out).group(1)) / 100


def mpisgd(model, train, test, ranks, out):
    profile = os.path.join(out, f"defaults_{model}_p{ranks}.csv")
    cmd = [MPIRUN, "-np", str(ranks), os.path.join(BUILD, "mpisgd"), "train", "--data", train, "--test", test,
           "--model", model, "--profile", profile, "--no-progress"]
    start = time.perf_counter()
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    step = re.search(r"step: (.*)", run.stderr).group(1)
    with open(profile) as f:
        rows = list(csv.DictReader(f))
    metric = float(rows[-1]["test_rmse" if model == "linreg" else "test_accuracy"])
    return seconds, metric, len(rows), step


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="url,webspam,breast_cancer,digits0")
    ap.add_argument("--models", default="logreg,svm,linreg")
    ap.add_argument("--ranks", default="1,4,8")
    ap.add_argument("--url-rows", type=int, default=200000)
    ap.add_argument("--webspam-rows", type=int, default=16000)
    ap.add_argument("--dir", default=os.path.join(ROOT, "out/bench"))
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    print(f"{'set':<14} {'model':<7} {'peer':>8} {'peer s':>7} {'P':>2} {'mpisgd':>8} {'gap':>8} {'epochs':>6} "
          f"{'wall s':>7}  step")
    for name in args.sets.split(","):
        if name in ("url", "webspam"):
            train, test = generated(name, args.url_rows if name == "url" else args.webspam_rows, args.dir)
        else:
            train, test = small(name, args.dir)
        for model in args.models.split(","):
            peer_s, peer = liblinear(model, train, test)
            for ranks in map(int, args.ranks.split(",")):
                seconds, metric, epochs, step = mpisgd(model, train, test, ranks, args.dir)
                # mpisgd against LIBLINEAR: accuracy points (negative: behind), RMSE's
                # relative excess (positive: behind).
                gap = f"{(metric - peer) * 100:+.2f}pt" if model != "linreg" else f"{metric / peer - 1:+.1%}"
                print(f"{name:<14} {model:<7} {peer:8.4f} {peer_s:7.1f} {ranks:2d} {metric:8.4f} {gap:>8} {epochs:6d} "
                      f"{seconds:7.1f}  {step}", flush=True)


if __name__ == "__main__":
    main()
