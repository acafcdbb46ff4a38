"""Train the digits reference network and write `weights_fp32.npz`: the committed FP32 weights.

    python -m proctor.workloads.digits.train_reference [--out PATH] [--max-iter N]

Reproducible: the training set is fixed (data.training), scikit-learn's MLPClassifier gets a fixed
random_state, and its Adam solver runs a fixed number of epochs (no early stop on a tolerance, so
the result does not depend on timing or on a validation split). The same library versions give
the same weights; the versions used are stored in the file's metadata, next to the accuracy the
numpy forward pass measures on the validation set (the reference value in __init__.py).
"""

from __future__ import annotations

import argparse
import platform
import warnings
from pathlib import Path

import numpy as np

from proctor.workloads.digits import data
from proctor.workloads.digits.model import MLP, load_reference, reference_weights_path, save

SEED = 20240611
HIDDEN = (128, 64)
ALPHA = 1e-2  # L2 penalty
LEARNING_RATE = 1e-3  # Adam
BATCH_SIZE = 64
MAX_ITER = 500  # epochs


def train(seed: int = SEED, max_iter: int = MAX_ITER) -> MLP:
    """Fit the MLP on the training split and return it as float32 arrays."""
    import sklearn
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    train = data.training()
    x = data.preprocess(train.images)
    clf = MLPClassifier(
        hidden_layer_sizes=HIDDEN,
        activation="relu",
        solver="adam",
        alpha=ALPHA,
        batch_size=BATCH_SIZE,
        learning_rate_init=LEARNING_RATE,
        max_iter=max_iter,
        tol=0.0,
        n_iter_no_change=max_iter + 1,
        shuffle=True,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed epoch count is the point
        clf.fit(x, train.labels)
    meta = {
        "seed": seed,
        "hidden": list(HIDDEN),
        "alpha": ALPHA,
        "learning_rate": LEARNING_RATE,
        "batch_size": BATCH_SIZE,
        "epochs": int(clf.n_iter_),
        "train_samples": len(train),
        "sklearn": sklearn.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "data_sha256": data.checksum(),
    }
    return MLP(
        tuple(np.asarray(w, np.float32) for w in clf.coefs_),
        tuple(np.asarray(b, np.float32) for b in clf.intercepts_),
        meta,
    )


def accuracy(model, split: data.Split) -> tuple[int, int]:
    """(correct, total) of `model.predict` on one split."""
    pred = model.predict(data.preprocess(split.images))
    return int(np.count_nonzero(pred == split.labels)), len(split)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=reference_weights_path())
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--max-iter", type=int, default=MAX_ITER)
    args = parser.parse_args(argv)
    data.verify()
    model = train(args.seed, args.max_iter)
    good, total = accuracy(model, data.validation())
    model.meta["validation_good"], model.meta["validation_total"] = good, total
    save(args.out, model)
    reloaded = load_reference() if args.out == reference_weights_path() else None
    size = args.out.stat().st_size
    print(
        f"wrote {args.out} ({size} bytes); FP32 validation accuracy={100 * good / total:.3f}%, "
        f"good={good}, total={total}"
    )
    if reloaded is not None:
        assert accuracy(reloaded, data.validation()) == (good, total)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
