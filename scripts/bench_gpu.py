#!/usr/bin/python3
"""The GPU path against the CPU path, side by side in one run on one machine: a logreg
epoch at P = 1 on a URL-like file (200k rows, 3.2M features, ~115 non-zeros a row) and a
Webspam-like one (20k rows, 16.6M features, ~3,700 a row), at batch 1000 and the default
batch, with `--device cpu` on T threads (default: every core) and `--device gpu` (one
GPU, the same T threads for the host's share). Per run: the median epoch after the first
(the first pays the device's warm-up) and the range of those epochs, the load, the
set-up and, for the GPU, the shares of the epoch spent in its batch calls and in moving
the model it holds up and back, and the bytes it moved each way an epoch.

With --strategies, each file and batch also runs under those strategies (one rank: the
default's update passes straight to the step; a top-k strategy such as
"topk-dsa --density 0.001" selects every step, on the device under --device gpu), so the
held model and the selection on the device are timed beside the host's.

usage: scripts/bench_gpu.py [--build build-gpu] [--threads T] [--epochs 4] [--dir out/bench_gpu]
                            [--kinds url,webspam] [--batches 1000,auto]
                            [--strategies "default;topk-dsa --density 0.001"]
Needs a `make GPU=1` build and a GPU (`make GPU=omp` runs it on the CPU, as a check of
the script, not a figure). Single rank, no mpirun."""
import argparse
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {"url": 200000, "webspam": 20000}


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def make_file(build, kind, rows, path):
    if not os.path.exists(path):
        subprocess.run([os.path.join(build, "gen_data"), "--kind", kind, "--rows", str(rows), "--seed", "1",
                        "--out", path], check=True, capture_output=True)


def train(build, data, device, threads, epochs, batch, profile, strategy):
    cmd = [os.path.join(build, "mpisgd"), "train", "--data", data, "--device", device, "--threads", str(threads),
           "--epochs", str(epochs), "--no-progress", "--profile", profile]
    if strategy != "default":
        cmd += ["--strategy"] + strategy.split()
    if batch != "auto":
        cmd += ["--batch", batch]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    log = out.stdout + out.stderr
    with open(profile) as f:
        epochs_seen = list(csv.DictReader(f))
    walls = [float(e["wall_s_mean"]) for e in epochs_seen[1:]] or [float(epochs_seen[0]["wall_s_mean"])]
    row = {
        "load": float(re.search(r"loaded in ([0-9.]+) s", log).group(1)),
        "setup": float(re.search(r"set up in ([0-9.]+) s", log).group(1)),
        "epoch": median(walls), "low": min(walls), "high": max(walls),
        "batch": re.search(r"batch (\d+)/worker", log).group(1),
    }
    if device == "gpu":
        last = epochs_seen[-1]
        row["device_share"] = float(last["device_s_mean"]) / float(last["wall_s_mean"])
        row["trip_share"] = float(last["model_trip_s_mean"]) / float(last["wall_s_mean"])
        row["up_mb"] = float(last["to_device_bytes"]) / 1e6
        row["down_mb"] = float(last["from_device_bytes"]) / 1e6
        row["gpu"] = re.search(r"--device gpu, rank 0: (.*)", log).group(1)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build-gpu"))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--dir", default=os.path.join(ROOT, "out/bench_gpu"))
    p.add_argument("--kinds", default="url,webspam")
    p.add_argument("--batches", default="1000,auto")
    p.add_argument("--url-rows", type=int, default=SHAPES["url"])
    p.add_argument("--webspam-rows", type=int, default=SHAPES["webspam"])
    p.add_argument("--strategies", default="default",
                   help='";"-separated: "default", or a strategy and its flags, e.g. "topk-dsa --density 0.001"')
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    rows = {"url": args.url_rows, "webspam": args.webspam_rows}
    print(f"{'file':>8} {'batch':>5} {'strategy':>24} {'device':>6} {'epoch s':>8} {'range':>13} {'vs cpu':>6} "
          f"{'load s':>6} {'set-up s':>8} {'in device':>9} {'in trips':>8} {'MB up/down an epoch':>20}")
    described = ""
    for kind in args.kinds.split(","):
        data = os.path.join(args.dir, f"{kind}{rows[kind]}.svm")
        make_file(args.build, kind, rows[kind], data)
        for batch in args.batches.split(","):
            for strategy in args.strategies.split(";"):
                strategy = strategy.strip()
                cpu = None
                for device in ("cpu", "gpu"):
                    name = re.sub(r"[^a-z0-9.]+", "-", strategy)
                    r = train(args.build, data, device, args.threads, args.epochs, batch,
                              os.path.join(args.dir, f"{kind}_{batch}_{name}_{device}.csv"), strategy)
                    cpu = cpu or r["epoch"]
                    extra = (f"{r['device_share']:>9.0%} {r['trip_share']:>8.0%} {r['up_mb']:>9.1f}/{r['down_mb']:<9.1f}"
                             if device == "gpu" else f"{'':>9} {'':>8} {'':>20}")
                    print(f"{kind:>8} {r['batch']:>5} {strategy:>24} {device:>6} {r['epoch']:>8.3f} "
                          f"{r['low']:>6.3f}-{r['high']:<6.3f} {r['epoch'] / cpu:>5.2f}x {r['load']:>6.2f} "
                          f"{r['setup']:>8.2f} {extra}", flush=True)
                    described = r.get("gpu", described)
    print(f"--device gpu: {described}; --threads {args.threads} on both devices")


if __name__ == "__main__":
    main()
