#!/usr/bin/python3
"""Foundation benchmarks, measured side by side in one run on this machine (ratios, not
absolute times, are what carries over to another machine):

  parse    mpisgd's text and binary-cache load vs LIBLINEAR and scikit-learn reading
  sgd      steady-state logreg epoch (batch 1000, P=1) at T=1 and T=2 vs scikit-learn's
           SGDClassifier `fit`, on URL-like and Webspam-like files
  memory   peak RSS of `mpisgd train` at P=1 vs the CSR arrays plus the model
  quality  test accuracy vs liblinear-train -s 0 on the same files

usage: scripts/bench_foundation.py [--rows 200000] [--test-rows 50000] [--webspam-rows 16000]
                                   [--rounds 3] [--dir out/bench] [--sections parse,sgd,memory,quality]
Needs `scripts/install_deps.sh --bench` (scikit-learn, GNU time); `make bench` does both."""
import argparse
import csv
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIRUN = [os.path.join(ROOT, "scripts/mpirun_local.sh")]
MPISGD = os.path.join(ROOT, "build/mpisgd")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def timed(cmd):
    start = time.perf_counter()
    out = run(cmd)
    return time.perf_counter() - start, out


def mpisgd_train(args, extra, data=None, **kw):
    cmd = MPIRUN + ["-np", "1", MPISGD, "train", "--data", data or args.train, "--no-progress"] + extra
    return run(cmd, **kw)


def loaded_seconds(out):
    return float(re.search(r"loaded in ([0-9.]+) s", out.stderr).group(1))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


# scikit-learn's SGDClassifier as its users run it: `fit` on the whole set, log loss to
# match our logreg. One `fit` of E + 1 epochs minus one of 1 epoch, divided by E, is the
# steady-state cost of an epoch, free of fit's input checks and set-up (a `partial_fit`
# call pays those every time: 0.2-0.4 s on the URL-like file, more than the epoch).
SKLEARN_EPOCH = """
import sys, time, warnings
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
warnings.simplefilter("ignore", ConvergenceWarning)
X, y = load_svmlight_file(sys.argv[1])
extra = int(sys.argv[2])
def fit(epochs):
    clf = SGDClassifier(loss="log_loss", max_iter=epochs, tol=None, shuffle=True, random_state=1)
    t = time.perf_counter(); clf.fit(X, y); return time.perf_counter() - t
fit(1)  # warms the caches and the allocator, as our first epoch does
print((fit(extra + 1) - fit(1)) / extra, X.nnz)
"""


def sgd_epochs(args, kind, train, report):
    """Our steady-state epoch (epochs 2.. of a run) and scikit-learn's, in alternating
    rounds so that a slow spell of the machine falls on both; returns the file's nnz."""
    extra = 3
    ours, theirs, ratios = {1: [], 2: []}, [], []
    # The threads are bound one per core (OMP_PROC_BIND), as on a cluster node; unbound,
    # the scheduler now and then runs both on one core.
    bound = dict(os.environ, OMP_PROC_BIND="spread", OMP_PLACES="cores")
    for _ in range(args.rounds):
        sk_epoch, nnz = run(["/usr/bin/python3", "-c", SKLEARN_EPOCH, train, str(extra)]).stdout.split()
        theirs.append(float(sk_epoch))
        for threads in (1, 2):
            profile = os.path.join(args.dir, f"sgd_{kind}_t{threads}.csv")
            mpisgd_train(args, ["--epochs", str(extra + 1), "--batch", "1000", "--threads", str(threads),
                                "--profile", profile], data=train, env=bound)
            epochs = [float(r["wall_s_mean"]) for r in csv.DictReader(open(profile))][1:]
            ours[threads].append(median(epochs))
        ratios.append(theirs[-1] / ours[1][-1])
    nnz = int(nnz)
    spread = lambda xs: f"{min(xs):.3f}-{max(xs):.3f} s"
    report(f"{kind}: scikit-learn SGDClassifier epoch", median(theirs), "s", f"rounds {spread(theirs)}")
    for threads in (1, 2):
        note = f"rounds {spread(ours[threads])}, {nnz / median(ours[threads]) / 1e6:.0f} M nnz/s"
        if threads == 1:
            note += f"; {median(ratios):.2f}x scikit-learn's speed (rounds {min(ratios):.2f}-{max(ratios):.2f}x)"
        else:
            note += f"; {median(ours[1]) / median(ours[2]):.2f}x T=1"
        report(f"{kind}: mpisgd epoch T={threads}", median(ours[threads]), "s", note)
    return nnz


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--test-rows", type=int, default=50000)
    ap.add_argument("--webspam-rows", type=int, default=16000)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the sgd comparison")
    ap.add_argument("--dir", default=os.path.join(ROOT, "out/bench"))
    ap.add_argument("--sections", default="parse,sgd,memory,quality", help="which of them to run")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    args.train = os.path.join(args.dir, f"url_{args.rows}.svm")
    args.test = os.path.join(args.dir, f"url_{args.rows}_test.svm")
    gen = os.path.join(ROOT, "build/gen_data")
    if not os.path.exists(args.train):
        run([gen, "--kind", "url", "--rows", str(args.rows), "--seed", "1", "--out", args.train])
    if not os.path.exists(args.test):
        run([gen, "--kind", "url", "--rows", str(args.test_rows), "--first-row", str(args.rows), "--seed", "1", "--out", args.test])
    args.webspam = os.path.join(args.dir, f"webspam_{args.webspam_rows}.svm")
    if not os.path.exists(args.webspam):
        run([gen, "--kind", "webspam", "--rows", str(args.webspam_rows), "--seed", "1", "--out", args.webspam])
    size_mb = os.path.getsize(args.train) / 1e6
    def report(name, value, unit, note=""):
        print(f"  {name:<44} {value:>10.3f} {unit:<8} {note}", flush=True)

    print(f"url-like file: {args.train} ({size_mb:.1f} MB)")
    sections = args.sections.split(",")
    unknown = set(sections) - {"parse", "sgd", "memory", "quality"}
    if unknown:
        sys.exit(f"--sections: unknown {', '.join(sorted(unknown))}")
    if "parse" in sections:
        parse(args, size_mb, report)
    nnz = None
    if "sgd" in sections:
        print("== sgd: steady-state logreg epoch, batch 1000, P=1, vs scikit-learn's SGDClassifier")
        nnz = sgd_epochs(args, "url", args.train, report)
        sgd_epochs(args, "webspam", args.webspam, report)
    if "memory" in sections:
        memory(args, nnz, report)
    if "quality" in sections:
        quality(args, report)


def parse(args, size_mb, report):
    print("== parse")
    # LIBLINEAR: a solver that stops at once; the model-writing time is taken from a
    # one-row file with the same number of features and subtracted.
    one_row = os.path.join(args.dir, "one_row.svm")
    with open(one_row, "w") as f:
        f.write("+1 3231961:1\n-1 1:1\n")
    model = os.path.join(args.dir, "ll.model")
    ll_base = median([timed(["liblinear-train", "-s", "0", "-e", "1e5", "-q", one_row, model])[0] for _ in range(3)])
    # LIBLINEAR and mpisgd read in alternation, five rounds, so that a slow spell of the
    # machine falls on both; the ratio is the median of the rounds' ratios.
    ll_times, text_times = [], []
    for _ in range(5):
        ll_times.append(timed(["liblinear-train", "-s", "0", "-e", "1e5", "-q", args.train, model])[0] - ll_base)
        text_times.append(loaded_seconds(mpisgd_train(args, ["--epochs", "1", "--lr", "10"])))
    ll_rate = size_mb / median(ll_times)
    report("LIBLINEAR read", ll_rate, "MB/s")
    sk = run(["/usr/bin/python3", "-c", f"""
import time
from sklearn.datasets import load_svmlight_file
t = time.perf_counter(); X, y = load_svmlight_file({args.train!r}); print(time.perf_counter() - t)"""])
    sk_rate = size_mb / float(sk.stdout)
    report("scikit-learn load_svmlight_file", sk_rate, "MB/s")
    ratios = [ll / t for ll, t in zip(ll_times, text_times)]
    report("mpisgd text load (P=1)", size_mb / median(text_times), "MB/s",
           f"{median(ratios):.1f}x LIBLINEAR (rounds {min(ratios):.1f}-{max(ratios):.1f}x)")
    binary = os.path.join(args.dir, f"url_{args.rows}.bin")
    run(MPIRUN + ["-np", "1", MPISGD, "convert", "--data", args.train, "--out", binary])
    bin_mb = os.path.getsize(binary) / 1e6
    cache = median([loaded_seconds(run(MPIRUN + ["-np", "1", MPISGD, "train", "--data", binary, "--epochs", "1", "--no-progress"]))
                    for _ in range(3)])
    report("mpisgd binary cache load (P=1)", bin_mb / cache, "MB/s", f"{bin_mb:.0f} MB cache")



def memory(args, nnz, report):
    """Peak RSS against the CSR arrays (`nnz` from the sgd section, else counted)."""
    if nnz is None:
        nnz = sum(line.count(":") for line in open(args.train))
    print("== memory: peak RSS of training at P=1")
    out = run(["/usr/bin/time", "-v"] + [MPISGD, "train", "--data", args.train, "--epochs", "1", "--lr", "10", "--no-progress"])
    rss_mb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1)) / 1024
    rows = args.rows
    csr_mb = (int(nnz) * 8 + (rows + 1) * 8 + rows * 4) / 2**20
    model_mb = 3231961 * 4 / 2**20
    report("mpisgd peak RSS", rss_mb, "MiB", f"CSR {csr_mb:.0f} MiB + model {model_mb:.0f} MiB: {rss_mb / (csr_mb + model_mb):.2f}x")


def quality(args, report):
    print("== quality: test accuracy on the same files")
    model = os.path.join(args.dir, "ll.model")
    run(["liblinear-train", "-s", "0", "-q", args.train, model])
    ll = run(["liblinear-predict", args.test, model, os.path.join(args.dir, "ll.pred")])
    ll_acc = float(re.search(r"Accuracy = ([0-9.]+)%", ll.stdout).group(1))
    report("LIBLINEAR -s 0 (C=1)", ll_acc, "%")
    ours_model = os.path.join(args.dir, "ours.model")
    # Default flags, as a new user runs it; LIBLINEAR's C = 1 is the same objective's l2.
    mpisgd_train(args, ["--test", args.test, "--l2", str(1.0 / args.rows), "--save-model", ours_model])
    ours = run(MPIRUN + ["-np", "1", MPISGD, "predict", "--model", ours_model, "--data", args.test])
    acc = float(re.search(r"Accuracy = ([0-9.]+)%", ours.stdout).group(1))
    report("mpisgd logreg (default step, --l2 1/M)", acc, "%", f"{acc - ll_acc:+.2f} points")


if __name__ == "__main__":
    sys.exit(main())
