#!/usr/bin/python3
"""Write scikit-learn's bundled small sets as LIBSVM train/test files.

  breast_cancer  569 rows, 30 features, malignant (+1) vs benign (-1)
  digits0        1797 rows, 64 pixels, the digit 0 (+1) vs the rest (-1)

Each set is split 75/25, stratified, with a fixed seed. Features are scaled to [0, 1]
with the training split's minimum and maximum, as `svm-scale -l 0 -u 1` would (the
same ranges applied to the test split), since that is how LIBLINEAR's users feed such
data; zeros are left out of the files, as LIBSVM does.

Usage: scripts/small_sets.py [--out DIR]   (default out/small; prints the paths)
"""
import argparse
import os

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split


def write_libsvm(path, x, y):
    with open(path + ".tmp", "w") as f:
        for row, label in zip(x, y):
            items = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{'+1' if label > 0 else '-1'} {items}\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/small")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cancer = load_breast_cancer()
    digits = load_digits()
    sets = {
        "breast_cancer": (cancer.data, np.where(cancer.target == 0, 1, -1)),  # 0 is malignant
        "digits0": (digits.data, np.where(digits.target == 0, 1, -1)),
    }
    for name, (x, y) in sets.items():
        xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, stratify=y, random_state=1)
        lo, hi = xtr.min(axis=0), xtr.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        for split, xs, ys in (("train", xtr, ytr), ("test", xte, yte)):
            path = os.path.join(args.out, f"{name}_{split}.svm")
            write_libsvm(path, (xs - lo) / span, ys)
            print(path)


if __name__ == "__main__":
    main()
