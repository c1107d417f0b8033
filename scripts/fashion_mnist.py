#!/usr/bin/python3
"""Write Fashion-MNIST as LIBSVM train/test files, for multiclass benchmarks.

  train.svm  60000 rows   test.svm  10000 rows   784 pixels, 10 classes (labels 0..9)

Reads the idx files (gzip) of Debian's dataset-fashion-mnist package, which
`scripts/install_deps.sh --bench` installs. Feature j (1..784) is pixel j - 1 of the
28x28 image, row by row; its value is pixel / 255, in [0, 1]; zeros are left out of
the files, as LIBSVM does. Does nothing when both files exist and are newer than the
package's files.

Usage: scripts/fashion_mnist.py [--out DIR]   (default out/fashion; prints the paths)
"""
import argparse
import gzip
import os
import sys

import numpy as np

PACKAGE = "dataset-fashion-mnist"
SOURCE = "/usr/share/datasets/fashion-mnist"
SPLITS = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 60000),
          "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 10000)}


def read_idx(path, dims):
    """The unsigned bytes of an idx file of `dims` dimensions, shaped (first, rest)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    header = 4 + 4 * dims
    magic, *shape = np.frombuffer(data, dtype=">u4", count=1 + dims)
    if magic != 0x0800 + dims or len(data) != header + int(np.prod(shape)):
        sys.exit(f"fashion_mnist: {path} is not an idx file of {dims} dimension(s) of unsigned bytes")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape[0], -1)


def write_libsvm(path, pixels, labels):
    # Every (pixel index, value) item as text, once: 784 x 256 strings.
    items = np.array([[f"{j + 1}:{v / 255:.6g}" for v in range(256)] for j in range(pixels.shape[1])],
                     dtype=object)
    with open(path + ".tmp", "w") as f:
        for row, label in zip(pixels, labels):
            nonzero = np.flatnonzero(row)
            f.write(" ".join([str(label), *items[nonzero, row[nonzero]]]) + "\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/fashion")
    args = ap.parse_args()
    inputs = [os.path.join(SOURCE, name) for images, labels, _ in SPLITS.values() for name in (images, labels)]
    missing = [path for path in inputs if not os.path.exists(path)]
    if missing:
        sys.exit(f"fashion_mnist: {', '.join(missing)} missing: install the Debian package {PACKAGE} "
                 f"(scripts/install_deps.sh --bench)")
    outputs = {split: os.path.join(args.out, f"{split}.svm") for split in SPLITS}
    newest_input = max(os.path.getmtime(path) for path in inputs)
    if not all(os.path.exists(path) and os.path.getmtime(path) > newest_input for path in outputs.values()):
        os.makedirs(args.out, exist_ok=True)
        for split, (images, labels, rows) in SPLITS.items():
            x = read_idx(os.path.join(SOURCE, images), 3)
            y = read_idx(os.path.join(SOURCE, labels), 1).ravel()
            if len(x) != rows or len(y) != rows:
                sys.exit(f"fashion_mnist: {split} has {len(x)} images and {len(y)} labels, expected {rows}")
            write_libsvm(outputs[split], x, y)
    for path in outputs.values():
        print(path)


if __name__ == "__main__":
    main()
