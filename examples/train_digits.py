"""Train a small neural network on handwritten digits with a training step that srcad
compiled ahead of time into a plain Python module.

Run with `make demo` (or `python examples/train_digits.py` after
`pip install -e '.[examples]'`). It needs scikit-learn (for the digits, which ship with
it: no download), matplotlib and tqdm.
"""

import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

import srcad

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
SIZES = (64, 64, 10)  # 8x8 pixels -> hidden layer -> 10 digits
EPOCHS = 40
BATCH = 32
LEARNING_RATE = 0.05
MOMENTUM = 0.9


def mlp(W1, b1, W2, b2, x):
    """The class scores (logits) of each row of ``x``."""
    h = np.tanh(x @ W1 + b1)
    return h @ W2 + b2


def loss_fn(params, x, y):
    """Mean softmax cross-entropy of one-hot labels ``y``, plus a little weight decay."""
    z = mlp(params["W1"], params["b1"], params["W2"], params["b2"], x)
    z = z - np.max(z, axis=1, keepdims=True)
    log_probs = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    decay = 1e-4 * (np.sum(params["W1"] ** 2) + np.sum(params["W2"] ** 2))
    return -np.mean(np.sum(y * log_probs, axis=1)) + decay


def train_step(params, velocity, x, y, lr, momentum):
    """One step of SGD with momentum; srcad.export compiles it, gradient included."""
    loss, grads = srcad.value_and_grad(loss_fn)(params, x, y)
    velocity = {k: momentum * velocity[k] - lr * grads[k] for k in params}
    params = {k: params[k] + velocity[k] for k in params}
    return params, velocity, loss


def init_params(rng):
    n_in, n_hidden, n_out = SIZES
    return {
        "W1": rng.normal(scale=1 / np.sqrt(n_in), size=(n_in, n_hidden)),
        "b1": np.zeros(n_hidden),
        "W2": rng.normal(scale=1 / np.sqrt(n_hidden), size=(n_hidden, n_out)),
        "b2": np.zeros(n_out),
    }


def load_data():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.data.astype(np.float64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, digits.target, test_size=0.25, random_state=0, stratify=digits.target
    )
    mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-8
    return (x_train - mean) / std, y_train, (x_test - mean) / std, y_test


def import_file(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plot(losses, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.arange(1, len(losses) + 1)
    window = 25
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, losses, color="tab:blue", alpha=0.3, linewidth=0.8, label="minibatch loss")
    ax.plot(steps[window - 1 :], smooth, color="tab:blue", label=f"mean of {window} steps")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_title("MLP 64-64-10 on sklearn digits, srcad-compiled training step")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    from tqdm import tqdm

    start = time.perf_counter()
    rng = np.random.default_rng(0)
    x_train, y_train, x_test, y_test = load_data()
    onehot = np.eye(SIZES[-1])[y_train]
    params = init_params(rng)
    velocity = {k: np.zeros_like(v) for k, v in params.items()}

    # compile the training step ahead of time; the example arguments give the structure
    # of params (a dict of arrays), so the module unpacks it with plain code
    example = (params, velocity, x_train[:BATCH], onehot[:BATCH], LEARNING_RATE, MOMENTUM)
    module_path = srcad.export(train_step, BUILD / "train_step.py", example_args=example)
    compiled = import_file(module_path)  # an ordinary module: numpy and the standard library

    losses = []
    batches = len(x_train) // BATCH
    with tqdm(range(EPOCHS), desc="training", unit="epoch", file=sys.stdout) as bar:
        for _ in bar:
            order = rng.permutation(len(x_train))
            for b in range(batches):
                idx = order[b * BATCH : (b + 1) * BATCH]
                params, velocity, loss = compiled.train_step(
                    params, velocity, x_train[idx], onehot[idx], LEARNING_RATE, MOMENTUM
                )
                losses.append(float(loss))
            bar.set_postfix(loss=f"{np.mean(losses[-batches:]):.4f}")

    scores = mlp(params["W1"], params["b1"], params["W2"], params["b2"], x_test)
    accuracy = np.mean(np.argmax(scores, axis=1) == y_test)
    plot_path = BUILD / "loss_curve.png"
    plot(np.array(losses), plot_path)
    lines = module_path.read_text().count("\n")
    print(f"test accuracy: {accuracy:.2%} on {len(y_test)} held-out digits")
    print(f"compiled training step: {os.path.relpath(module_path)} ({lines} lines, imports only")
    print("    numpy and the standard library; read it, or run it without srcad)")
    print(f"loss curve: {os.path.relpath(plot_path)}")
    print(f"total time: {time.perf_counter() - start:.1f} s")
    return accuracy


if __name__ == "__main__":
    main()
