"""Model code written the way published NumPy examples write it runs under srcad unchanged:
an MLP on a list of (W, b) layers, an RNN on a dict of weights, a VAE, a Gaussian process
marginal likelihood, a Gaussian mixture and an LSTM whose cell takes and returns its state
as a tuple (tests/model_ports.py). Gradients in both modes
against finite differences, and Hessian-vector products where the model has no helpers."""

import numpy as np
import pytest

import srcad

pytest.importorskip("scipy")

import model_ports as m  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 3))
TARGETS = np.eye(2)[RNG.integers(0, 2, 5)]


def test_mlp_on_a_list_of_layers():
    params = m.init_mlp([3, 4, 2], RNG)
    srcad.check_grad(m.mlp_loss, params, X, TARGETS, modes=("rev", "fwd"))
    grads = srcad.grad(m.mlp_loss)(params, X, TARGETS)
    assert isinstance(grads, list) and [g[0].shape for g in grads] == [(3, 4), (4, 2)]


def test_rnn_on_a_dict_of_weights():
    params = m.init_rnn(2, 3, 2, RNG)
    inputs = RNG.normal(size=(4, 2, 2))
    targets = np.eye(2)[RNG.integers(0, 2, (4, 2))]
    srcad.check_grad(m.rnn_loss, params, inputs, targets, modes=("rev", "fwd"))
    assert set(srcad.grad(m.rnn_loss)(params, inputs, targets)) == {"init", "change", "predict"}


def test_lstm_carrying_its_state_as_a_tuple():
    # state = cell(params, x, state): the tuple passed in and taken back whole (stop 26)
    params = m.init_lstm(2, 3, RNG)
    inputs = RNG.normal(size=(4, 2, 2))
    targets = RNG.normal(size=(4, 2))
    srcad.check_grad(m.lstm_loss, params, inputs, targets, modes=("rev", "fwd"), order=2)
    assert set(srcad.grad(m.lstm_loss)(params, inputs, targets)) == {"W", "b", "out"}


def test_vae_elbo():
    enc, dec = m.init_mlp([4, 3, 4], RNG), m.init_mlp([2, 3, 4], RNG)
    data = (RNG.random((5, 4)) > 0.5).astype(float)
    eps = RNG.normal(size=(5, 2))
    srcad.check_grad(m.vae_elbo, enc, dec, data, eps, wrt=(0, 1), modes=("rev", "fwd"))


def test_vae_whose_encoder_returns_a_dict():
    # q = encode(enc, x) with return {"mean": ..., "logvar": ...} (refused until stop 28)
    enc = {"W_h": RNG.normal(size=(4, 3)), "b_h": np.zeros(3)}
    enc |= {"W_mean": RNG.normal(size=(3, 2)), "W_logvar": RNG.normal(size=(3, 2)) * 0.3}
    dec = {"W_h": RNG.normal(size=(2, 3)), "W_out": RNG.normal(size=(3, 4))}
    data = (RNG.random((5, 4)) > 0.5).astype(float)
    eps = RNG.normal(size=(5, 2))
    loss = m.vae_dict_loss
    srcad.check_grad(loss, enc, dec, data, eps, wrt=(0, 1), modes=("rev", "fwd"), order=2)
    grads = srcad.grad(loss, wrt=(0, 1))(enc, dec, data, eps)
    assert set(grads[0]) == set(enc) and set(grads[1]) == set(dec)


def test_gaussian_process_marginal_likelihood():
    params = np.array([0.1, -1.0, 0.2, 0.3])
    x, y = RNG.normal(size=(6, 2)), RNG.normal(size=6)
    srcad.check_grad(m.gp_log_marginal, params, x, y, modes=("rev", "fwd"))


def test_gaussian_mixture_log_likelihood():
    params = {"logits": RNG.normal(size=3), "means": RNG.normal(size=3)}
    params["log_stds"] = RNG.normal(size=3) * 0.2
    data = RNG.normal(size=7)
    srcad.check_grad(m.gmm_log_lik, params, data, modes=("rev", "fwd"), order=2)


def test_gaussian_mixture_written_component_by_component():
    # logsumexp of a list of per-component log densities, a dict comprehension over the
    # parameters (both refused until stop 27)
    params = {"logits": RNG.normal(size=3), "means": RNG.normal(size=3)}
    params["log_stds"] = RNG.normal(size=3) * 0.2
    data = RNG.normal(size=7)
    srcad.check_grad(m.gmm_components_loss, params, data, modes=("rev", "fwd"), order=2)
