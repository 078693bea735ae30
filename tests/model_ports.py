"""Seven models written the way NumPy model code is commonly written (autograd-style examples:
parameter lists of (W, b) tuples, dicts of weights, helpers taking the parameters whole,
scipy.special.logsumexp); srcad must run them unchanged."""

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm


# --- MLP classifier: a list of (W, b) layers ------------------------------------------
def init_mlp(sizes, rng):
    return [
        (rng.normal(size=(m, n)) * 0.3, rng.normal(size=n) * 0.1)
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def mlp_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def mlp_l2(params):
    return sum(np.sum(W**2) for W, _ in params)


def mlp_loss(params, inputs, targets):
    log_prior = -0.01 * mlp_l2(params)
    log_lik = np.sum(mlp_predict(params, inputs) * targets)
    return -(log_prior + log_lik)


# --- RNN: a dict of weights, hidden state carried through time --------------------------
def init_rnn(n_in, n_hidden, n_out, rng):
    return {
        "init": rng.normal(size=(1, n_hidden)) * 0.1,
        "change": rng.normal(size=(n_in + n_hidden + 1, n_hidden)) * 0.3,
        "predict": rng.normal(size=(n_hidden + 1, n_out)) * 0.3,
    }


def rnn_cat_bias(x):
    return np.concatenate((x, np.ones((x.shape[0], 1))), axis=1)


def rnn_update(inp, hiddens, change):
    return np.tanh(np.dot(rnn_cat_bias(np.concatenate((inp, hiddens), axis=1)), change))


def rnn_hiddens_to_output(hiddens, predict):
    out = np.dot(rnn_cat_bias(hiddens), predict)
    return out - logsumexp(out, axis=1, keepdims=True)


def rnn_loss(params, inputs, targets):
    n_seq = inputs.shape[1]
    hiddens = np.repeat(params["init"], n_seq, axis=0)
    total = 0.0
    for t in range(inputs.shape[0]):
        hiddens = rnn_update(inputs[t], hiddens, params["change"])
        total = total + np.sum(rnn_hiddens_to_output(hiddens, params["predict"]) * targets[t])
    return -total / (inputs.shape[0] * n_seq)


# --- VAE: encoder and decoder, reparameterised sample ---------------------------------
def vae_net(params, x):
    for W, b in params[:-1]:
        x = np.tanh(x @ W + b)
    W, b = params[-1]
    return x @ W + b


def vae_elbo(enc, dec, data, eps):
    out = vae_net(enc, data)
    d = out.shape[1] // 2
    mean, log_std = out[:, :d], out[:, d:]
    z = mean + np.exp(log_std) * eps
    logits = vae_net(dec, z)
    log_lik = np.sum(data * logits - np.logaddexp(0.0, logits))
    kl = 0.5 * np.sum(np.exp(2 * log_std) + mean**2 - 1.0 - 2 * log_std)
    return -(log_lik - kl) / data.shape[0]


# a VAE whose encoder returns its Gaussian as a dict (the mean and log-variance by name)
def vae_encode(enc, x):
    h = np.tanh(x @ enc["W_h"] + enc["b_h"])
    return {"mean": h @ enc["W_mean"], "logvar": h @ enc["W_logvar"]}


def vae_dict_loss(enc, dec, data, eps):
    q = vae_encode(enc, data)
    z = q["mean"] + np.exp(0.5 * q["logvar"]) * eps
    logits = np.tanh(z @ dec["W_h"]) @ dec["W_out"]
    log_lik = np.sum(data * logits - np.logaddexp(0.0, logits))
    kl = -0.5 * np.sum(1.0 + q["logvar"] - q["mean"] ** 2 - np.exp(q["logvar"]))
    return (kl - log_lik) / data.shape[0]


# --- Gaussian process: marginal likelihood of kernel hyperparameters --------------------
def gp_unpack(params):
    mean, log_noise, log_amp, log_scale = params[0], params[1], params[2], params[3]
    return mean, np.exp(log_noise) + 1e-4, np.exp(log_amp), np.exp(log_scale)


def gp_kernel(amp, scale, x, xp):
    diffs = (x[:, None, :] - xp[None, :, :]) / scale
    return amp * np.exp(-0.5 * np.sum(diffs**2, axis=2))


def gp_log_marginal(params, x, y):
    mean, noise, amp, scale = gp_unpack(params)
    cov = gp_kernel(amp, scale, x, x) + noise * np.eye(len(y))
    r = y - mean
    L = np.linalg.cholesky(cov)
    alpha = np.linalg.solve(cov, r)
    return -0.5 * r @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * len(y) * np.log(2 * np.pi)


# --- Gaussian mixture: log-likelihood with softmax weights ------------------------------
def gmm_log_lik(params, data):
    logits, means, log_stds = params["logits"], params["means"], params["log_stds"]
    log_w = logits - logsumexp(logits)
    stds = np.exp(log_stds)
    z = (data[:, None] - means[None, :]) / stds[None, :]
    comp = -0.5 * z**2 - log_stds[None, :] - 0.5 * np.log(2 * np.pi)
    return np.sum(logsumexp(comp + log_w[None, :], axis=1))


# --- Gaussian mixture, component by component: a list of log densities, dict updates ----
def gmm_components_loss(params, data):
    log_w = params["logits"] - logsumexp(params["logits"])
    lps = [
        log_w[k] + norm.logpdf(data, loc=params["means"][k], scale=np.exp(params["log_stds"][k]))
        for k in range(len(params["means"]))
    ]
    prior = {name: np.sum(value**2) for name, value in params.items() if name != "logits"}
    return -np.sum(logsumexp(lps, axis=0)) + 0.01 * sum(prior.values())


# --- LSTM: a cell taking and returning its state as a tuple -----------------------------
def init_lstm(n_in, n_hidden, rng):
    return {
        "W": rng.normal(size=(n_in + n_hidden, 4 * n_hidden)) * 0.3,
        "b": np.zeros(4 * n_hidden),
        "out": rng.normal(size=n_hidden) * 0.5,
    }


def sigmoid(z):
    return 0.5 * (np.tanh(z / 2) + 1)


def lstm_cell(params, x, state):
    h, c = state
    gates = np.concatenate([x, h], axis=1) @ params["W"] + params["b"]
    i, f, o, g = np.split(gates, 4, axis=1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    return h, c


def lstm_loss(params, inputs, targets):
    n_hidden = params["out"].shape[0]
    state = (np.zeros((inputs.shape[1], n_hidden)), np.zeros((inputs.shape[1], n_hidden)))
    loss = 0.0
    for t in range(inputs.shape[0]):
        state = lstm_cell(params, inputs[t], state)
        loss = loss + np.sum((state[0] @ params["out"] - targets[t]) ** 2)
    return loss
