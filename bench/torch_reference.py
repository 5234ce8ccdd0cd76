#!/usr/bin/python3
"""PyTorch reference for `make bench`: the training step a user would write in PyTorch instead.

Times one full training step -- forward over the whole sequence, backward, RMSProp update --
on the CPU for the configurations cmd/bench measures, and prints one JSON line per
configuration:

  {"impl": "torch", "model": "urnn", "hidden": 128, "task": "copy", "T": 100, "batch": 20,
   "step_ms": 161.1, "loss": 2.2, ...}

step_ms is the median of --steps timed steps after --warmup untimed ones.

Models (model:hidden:task:T, e.g. urnn:128:copy:100; the names are pkg/experiments' model kinds,
which cmd/bench passes through):
  urnn        Arjovsky et al. 2016's uRNN, h_t = modReLU(W h_{t-1} + V x_t) with
              W = D3 R2 F^-1 D2 Pi R1 F D1 applied factor by factor at every time step
              (torch complex64 state, FFTs by torch.fft).
  urnn-dense  the same parameters and outputs, but W is materialised once per training step
              as a dense 2n x 2n real matrix (the factors applied to the identity), then one
              matmul per time step on the state as real pairs [Re h | Im h].
  lstm        torch.nn.LSTM (no peepholes), learned initial state, linear readout.
  tanh        torch.nn.RNN with tanh, learned initial state, linear readout.
  lt-ornn     Henaff et al. 2016's LT-RNN, h_t = clip(V h_{t-1} + act(U x_t + b)), y_t = W h_t,
              V random orthogonal, activation clipping at norm 1000; act as pkg/experiments
              builds it: relu on adding (real inputs), none on copy (--ltrnn-act to force
              relu, tanh or linear).

Tasks, batch 20, as pkg/tasks: copy (length T + 20: 10 symbols from 1..8, T - 1 blanks, the
marker 9, 10 blanks; inputs one-hot over 10 classes; targets 9 classes; cross-entropy averaged
over all steps) and adding (length T, inputs (value, marker); MSE of the last step's output).

Optimiser as pkg/train's default: RMSProp, learning rate 1e-3, decay 0.9, accumulator starting
at 1e-3, no epsilon, no gradient clipping.

See docs/REFERENCES.md for the papers ([Arjovsky2016], [Henaff2016]).
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

BATCH = 20
COPY_RECALL = 10       # symbols to remember (S)
COPY_CLASSES_IN = 10   # 0 blank, 1..8 data, 9 marker
COPY_CLASSES_OUT = 9   # 0 blank, 1..8 data
MODRELU_EPS = 1e-5     # the uRNN authors' code
CLIP_NORM = 1000.0     # Henaff et al.'s activation clipping


def glorot(fan_in, fan_out):
    b = math.sqrt(6 / (fan_in + fan_out))
    return torch.empty(fan_in, fan_out).uniform_(-b, b)


# ---------------------------------------------------------------- uRNN

class URNN(nn.Module):
    """The uRNN; dense=False applies the factors at every step, dense=True builds W once."""

    def __init__(self, n_in, n, n_out, dense):
        super().__init__()
        self.n, self.dense = n, dense
        self.theta = nn.Parameter(torch.empty(3, n).uniform_(-math.pi, math.pi))  # D1, D2, D3
        self.refl = nn.Parameter(torch.empty(2, 2, n).uniform_(-1, 1))            # R1, R2: (Re, Im)
        self.register_buffer("perm", torch.randperm(n))                            # Pi
        self.V = nn.Parameter(glorot(n_in, 2 * n))                                 # [Re V^T | Im V^T]
        self.U = nn.Parameter(glorot(2 * n, n_out))
        self.bo = nn.Parameter(torch.zeros(n_out))
        self.b = nn.Parameter(torch.zeros(n))                                      # modReLU bias
        s = math.sqrt(3 / (2 * n))
        self.h0 = nn.Parameter(torch.empty(2 * n).uniform_(-s, s))                 # [Re h0 | Im h0]

    def unitary(self):
        """Returns a function h -> W h on complex row vectors [B, n] (h @ W^T)."""
        d = torch.polar(torch.ones_like(self.theta), self.theta)   # [3, n]
        v = torch.complex(self.refl[:, 0], self.refl[:, 1])       # [2, n]
        v = v / v.norm(dim=1, keepdim=True)
        vc = v.conj()

        def reflect(h, k):  # (I - 2 v v*) h, v of norm 1
            return h - 2 * (h * vc[k]).sum(-1, keepdim=True) * v[k]

        def apply(h):
            h = h * d[0]
            h = torch.fft.fft(h, norm="ortho")
            h = reflect(h, 0)
            h = h[:, self.perm]
            h = h * d[1]
            h = torch.fft.ifft(h, norm="ortho")
            h = reflect(h, 1)
            return h * d[2]
        return apply

    def forward(self, x):  # x [B, L, n_in] -> outputs [B, L, n_out]
        B, L, _ = x.shape
        n = self.n
        xin = x @ self.V  # [B, L, 2n]
        w = self.unitary()
        hs = []
        if not self.dense:
            xc = torch.complex(xin[..., :n], xin[..., n:])
            h = torch.complex(self.h0[:n], self.h0[n:]).expand(B, n)
            for t in range(L):
                z = w(h) + xc[:, t]
                m = z.abs()
                h = z * (torch.relu(m + self.b) / (m + MODRELU_EPS))
                hs.append(h)
            hr = torch.view_as_real(torch.stack(hs, 1))  # [B, L, n, 2]
            states = torch.cat([hr[..., 0], hr[..., 1]], -1)
        else:
            m = w(torch.eye(n, dtype=torch.complex64))  # W^T: row i is W e_i
            mr, mi = m.real, m.imag
            wr = torch.cat([torch.cat([mr, mi], 1), torch.cat([-mi, mr], 1)], 0)  # [2n, 2n]
            h = self.h0.expand(B, 2 * n)
            for t in range(L):
                z = h @ wr + xin[:, t]
                zz = z * z
                mod = (zz[:, :n] + zz[:, n:]).clamp_min(1e-30).sqrt()
                scale = torch.relu(mod + self.b) / (mod + MODRELU_EPS)
                h = z * torch.cat([scale, scale], -1)
                hs.append(h)
            states = torch.stack(hs, 1)
        return states @ self.U + self.bo


# ---------------------------------------------------------------- library RNNs and the LT-RNN

class TorchRNN(nn.Module):
    """torch.nn.LSTM or torch.nn.RNN (tanh) with a learned initial state and a linear readout."""

    def __init__(self, n_in, n, n_out, lstm):
        super().__init__()
        self.lstm = lstm
        self.rnn = nn.LSTM(n_in, n, batch_first=True) if lstm else \
            nn.RNN(n_in, n, batch_first=True, nonlinearity="tanh")
        self.h0 = nn.Parameter(torch.zeros(1, 1, n))
        if lstm:
            self.c0 = nn.Parameter(torch.zeros(1, 1, n))
        self.out = nn.Linear(n, n_out)

    def forward(self, x):
        B = x.shape[0]
        h0 = self.h0.expand(1, B, -1).contiguous()
        state = (h0, self.c0.expand(1, B, -1).contiguous()) if self.lstm else h0
        return self.out(self.rnn(x, state)[0])


class LTRNN(nn.Module):
    """h_t = clip(V h_{t-1} + act(U x_t + b)), y_t = W h_t, h_0 = 0; V random orthogonal."""

    def __init__(self, n_in, n, n_out, act):
        super().__init__()
        g = torch.randn(n, n) / math.sqrt(n)
        u, _, vt = torch.linalg.svd(g)        # nearest orthogonal matrix: singular values to 1
        self.V = nn.Parameter(u @ vt)
        self.inp = nn.Linear(n_in, n)
        self.out = nn.Linear(n, n_out, bias=False)
        self.act = {"relu": torch.relu, "tanh": torch.tanh, "linear": lambda a: a}[act]

    def forward(self, x):
        u = self.act(self.inp(x))  # [B, L, n]
        vt = self.V.t()
        h = torch.zeros(x.shape[0], self.V.shape[0])
        hs = []
        for t in range(x.shape[1]):
            h = h @ vt + u[:, t]
            h = h * (CLIP_NORM / h.norm(dim=1, keepdim=True).clamp_min(CLIP_NORM))
            hs.append(h)
        return self.out(torch.stack(hs, 1))


MODELS = ("urnn", "urnn-dense", "lstm", "tanh", "lt-ornn")


def make_model(name, n_in, n, n_out, ltrnn_act):
    if name in ("urnn", "urnn-dense"):
        return URNN(n_in, n, n_out, dense=name == "urnn-dense")
    if name in ("lstm", "tanh"):
        return TorchRNN(n_in, n, n_out, lstm=name == "lstm")
    if name == "lt-ornn":
        return LTRNN(n_in, n, n_out, ltrnn_act)
    raise ValueError(f"model {name!r}, want one of {', '.join(MODELS)}")


# ---------------------------------------------------------------- tasks, optimiser, timing

def copy_batch(T):
    """Inputs [B, T+20, 10] one-hot, targets [B, T+20] class indices (pkg/tasks.Copy)."""
    L = T + 2 * COPY_RECALL
    seq = torch.randint(1, 9, (BATCH, COPY_RECALL))
    x = torch.zeros(BATCH, L, dtype=torch.long)
    x[:, :COPY_RECALL] = seq
    x[:, T + COPY_RECALL - 1] = 9
    y = torch.zeros(BATCH, L, dtype=torch.long)
    y[:, -COPY_RECALL:] = seq
    return F.one_hot(x, COPY_CLASSES_IN).float(), y


def adding_batch(T):
    """Inputs [B, T, 2] (value, marker), targets [B, 1] (pkg/tasks.Adding)."""
    v = torch.rand(BATCH, T)
    m = torch.zeros(BATCH, T)
    rows = torch.arange(BATCH)
    m[rows, torch.randint(0, T // 2, (BATCH,))] = 1
    m[rows, torch.randint(T // 2, T, (BATCH,))] = 1
    return torch.stack([v, m], -1), (v * m).sum(1, keepdim=True)


class RMSProp:
    """a <- decay a + (1 - decay) g^2; p <- p - lr g / sqrt(a); a starts at acc_init."""

    def __init__(self, params, lr=1e-3, decay=0.9, acc_init=1e-3):
        self.params = [p for p in params if p.requires_grad]
        self.acc = [torch.full_like(p, acc_init) for p in self.params]
        self.lr, self.decay = lr, decay

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p, a in zip(self.params, self.acc):
            a.mul_(self.decay).addcmul_(p.grad, p.grad, value=1 - self.decay)
            p.addcdiv_(p.grad, a.sqrt(), value=-self.lr)


def loss_and_model(model_name, n, task, T, ltrnn_act):
    if ltrnn_act == "auto":  # as pkg/experiments: relu on real-valued inputs, none on one-hot ones
        ltrnn_act = "relu" if task == "adding" else "linear"
    if task == "copy":
        model = make_model(model_name, COPY_CLASSES_IN, n, COPY_CLASSES_OUT, ltrnn_act)

        def loss():
            x, y = copy_batch(T)
            return F.cross_entropy(model(x).reshape(-1, COPY_CLASSES_OUT), y.reshape(-1))
    elif task == "adding":
        model = make_model(model_name, 2, n, 1, ltrnn_act)

        def loss():
            x, y = adding_batch(T)
            return F.mse_loss(model(x)[:, -1], y)
    else:
        raise ValueError(f"task {task!r}, want copy or adding")
    return model, loss


def step_time(model_name, n, task, T, steps, warmup, ltrnn_act):
    model, loss_fn = loss_and_model(model_name, n, task, T, ltrnn_act)
    opt = RMSProp(model.parameters())
    times = []
    for s in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        if s >= warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times), loss.item()


def check_urnn(n, T):
    """Max |difference| between the two uRNN formulations' outputs on one copy batch."""
    torch.manual_seed(1)
    a = URNN(COPY_CLASSES_IN, n, COPY_CLASSES_OUT, dense=False)
    b = URNN(COPY_CLASSES_IN, n, COPY_CLASSES_OUT, dense=True)
    b.load_state_dict(a.state_dict())
    x, _ = copy_batch(T)
    with torch.no_grad():
        return (a(x) - b(x)).abs().max().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="urnn:128:copy:100,urnn-dense:128:copy:100,lstm:40:copy:100,"
                    "tanh:80:copy:100,lt-ornn:80:copy:100",
                    help=f"comma-separated model:hidden:task:T (model {'|'.join(MODELS)}, task copy|adding)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps per configuration")
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps before the timed ones")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ltrnn-act", default="auto", choices=["auto", "relu", "tanh", "linear"],
                    help="the LT-RNN's input nonlinearity (auto: relu on adding, linear on copy)")
    ap.add_argument("--check", action="store_true",
                    help="print to stderr how far apart the two uRNN formulations' outputs are, then time")
    a = ap.parse_args()
    if a.steps < 1 or a.warmup < 0:
        ap.error("--steps must be >= 1 and --warmup >= 0")
    torch.set_num_threads(a.threads)
    for cfg in a.configs.split(","):
        f = cfg.split(":")
        if len(f) != 4:
            ap.error(f"config {cfg!r}: want model:hidden:task:T")
        model, n, task, T = f[0], int(f[1]), f[2], int(f[3])
        if a.check and model.startswith("urnn"):
            print(f"torch_reference: {cfg}: |urnn - urnn-dense| outputs max {check_urnn(n, min(T, 50)):.2e}",
                  file=sys.stderr)
        torch.manual_seed(a.seed)
        sec, loss = step_time(model, n, task, T, a.steps, a.warmup, a.ltrnn_act)
        print(json.dumps({"impl": "torch", "model": model, "hidden": n, "task": task, "T": T,
                          "batch": BATCH, "step_ms": round(1000 * sec, 1), "loss": round(loss, 4),
                          "steps": a.steps, "threads": a.threads, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
