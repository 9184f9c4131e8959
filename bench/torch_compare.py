#!/usr/bin/env python3
"""torch_compare.py — PyTorch eager and torch.compile on the BENCHMARKS.md workloads, so tc's
figures can be read next to PyTorch's on the same machine, in the same run.

Side-by-side comparison only: nothing in the build or the tests needs torch.

    python3 bench/torch_compare.py --size cpu|gpu [--threads N] [--models a,b] [--json]
                                   [--skip-compile] [--no-warm] [--mode MODE] [--sdpa]
                                   [--cache-dir DIR]

Workloads and shapes are BENCHMARKS.md's: all fp32 with TF32 off, seeded normal inputs, weights
scaled by 1/sqrt(fan_in), exact GELU, LayerNorm eps 1e-5. Linear layers are written the way a
PyTorch user writes them (F.linear, weights stored (out, in) as nn.Linear keeps them): the same
arithmetic as tc's x·W with W (in, out), and eager PyTorch's fused-bias path.

Timing follows BENCHMARKS.md's "How to report" (and tc bench's own rules): warm-up calls, then
the median of timed calls (at least 5, at most 50, about 2 s), cycling over copies of the
inputs when one set fits in the last-level cache. On CUDA a sample is a group of back-to-back
calls (about 2 ms of GPU work) between CUDA events, after a short GPU sleep so the host queues
ahead: the GPU time per call, host dispatch hidden. tiny_mlp_b1, which measures per-call
overhead, is timed one call at a time on the host clock with torch.cuda.synchronize() around it
(tc bench waits for each call too). On the CPU every call is timed alone.

Ceilings come from the same run: a copy of the workload's bytes (GB/s counts bytes read +
written) for the memory-bound workloads, the bare GEMMs at the workload's shapes (torch.mm /
torch.bmm) for the others; and two machine-wide figures: a large copy and the mlp-shape GEMMs.

torch.compile uses the default mode (--mode picks another). Its first call (capture + compile +
run) is measured with a fresh, empty Inductor / Triton cache (unless --cache-dir), in this
process: the first compiled workload also pays Inductor's one-time imports. "warm 1st" is a
second first call after torch._dynamo.reset(), with the cache the first one filled.

On SIGTERM (e.g. from `timeout`) it stops and reports what it has measured so far.
"""
import argparse
import json
import math
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

# ---------------------------------------------------------------- shapes (BENCHMARKS.md)
SHAPES = {
    "cpu": {
        "ln_gelu": {"M": 4096, "N": 1024},
        "softmax": {"M": 8192, "N": 1024},
        "mlp": {"M": 1024, "D": 512, "H": 2048},
        "attn_block": {"B": 2, "T": 256, "C": 768},
        "tiny_mlp_b1": {"B": 1, "W": 64, "L": 4},
        "dyn_attn": {"B": 1, "C": 768},  # BENCHMARKS.md has no CPU shape; tc bench uses B 1
        "train_mlp": {"M": 1024, "D": 512, "H": 2048},
    },
    "gpu": {
        "ln_gelu": {"M": 8192, "N": 4096},
        "softmax": {"M": 32768, "N": 1024},
        "mlp": {"M": 8192, "D": 1024, "H": 4096},
        "attn_block": {"B": 8, "T": 512, "C": 768},
        "tiny_mlp_b1": {"B": 1, "W": 64, "L": 4},
        "dyn_attn": {"B": 8, "C": 768},
        "train_mlp": {"M": 8192, "D": 1024, "H": 4096},
    },
}
UNITS = {"ln_gelu": "GB/s", "softmax": "GB/s", "mlp": "TF/s", "attn_block": "ms", "tiny_mlp_b1": "us",
         "dyn_attn": "s", "train_mlp": "ms"}
ALL_MODELS = ["ln_gelu", "softmax", "mlp", "attn_block", "tiny_mlp_b1", "dyn_attn", "train_mlp"]
DEFAULT_MODELS = {"cpu": ALL_MODELS[:5], "gpu": ALL_MODELS[:6]}  # train_mlp when asked for (--models)
HEADS = 12
DYN_CALLS = 40
MAX_SETS = 8
ROTATION_BYTES = 256.0 * 1024 * 1024
DEVICE_CACHE_BYTES = 64.0 * 1024 * 1024  # covers today's GPU L2 caches (an H200 has 50 MB)
GROUP_S = 2e-3         # GPU work per timed sample on CUDA
MAX_GROUP = 50         # calls per timed sample at most
SLEEP_CYCLES = 100000  # torch.cuda._sleep: about 50 us at H200 clocks

torch = None  # imported in main(), after the cache folders are set
F = None


class Interrupted(Exception):
    """SIGTERM (e.g. from `timeout`): report what was measured so far."""


STOPPING = []  # holds the signal once one came: torch.compile may wrap the exception it raised


def check_stopping():
    if STOPPING:
        raise Interrupted(f"signal {STOPPING[0]}")


def log(msg):
    print(f"torch_compare: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- timing
def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_calls(fn, sets, dev, warmup=3, iters=50, min_iters=5, budget_s=2.0, host_clock=False):
    """Median seconds per call of fn(*sets[i % n]) after warm-up, and the number of timed calls.

    CPU, or host_clock: each call timed alone on the host clock, waited for (synchronize).
    CUDA: the GPU time of the calls themselves, as the reference figures count it: each sample
    is a group of back-to-back calls (about GROUP_S of GPU work) between two CUDA events, after a
    short GPU sleep that lets the host queue the calls ahead, so the host's per-call dispatch is
    hidden wherever the GPU work is longer than it."""
    n = len(sets)
    for i in range(warmup):
        fn(*sets[i % n])
    sync(dev)
    times = []
    start = time.perf_counter()
    if dev.type != "cuda" or host_clock:
        i = 0
        while len(times) < iters and (len(times) < min_iters or time.perf_counter() - start < budget_s):
            sync(dev)
            t0 = time.perf_counter()
            fn(*sets[i % n])
            sync(dev)
            times.append(time.perf_counter() - t0)
            i += 1
        return statistics.median(times), len(times)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def group(k, first):
        gpu_sleep()
        e0.record()
        for j in range(k):
            fn(*sets[(first + j) % n])
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) / 1e3

    k = max(1, min(MAX_GROUP, round(GROUP_S / max(group(1, 0), 1e-7))))
    i, calls = 0, 0
    while len(times) < iters and (len(times) < min_iters or time.perf_counter() - start < budget_s):
        times.append(group(k, i) / k)
        i, calls = i + k, calls + k
    return statistics.median(times), calls


def gpu_sleep():
    """Keeps the GPU busy for about 50 us so that the calls after it queue up behind it."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep:
        sleep(SLEEP_CYCLES)


def cache_bytes(dev):
    """The last-level cache that rotated inputs must defeat (the same rule as tc bench)."""
    if dev.type == "cuda":
        return DEVICE_CACHE_BYTES
    for level in (3, 2):
        try:
            v = os.sysconf(f"SC_LEVEL{level}_CACHE_SIZE")
            if v > 0:
                return float(v)
        except (ValueError, OSError):
            pass
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for idx in os.listdir(base):
            if not idx.startswith("index"):
                continue
            with open(f"{base}/{idx}/size") as f:
                s = f.read().strip()
            mult = {"K": 1024, "M": 1024 * 1024}.get(s[-1:], 1)
            best = max(best, int(s.rstrip("KM")) * mult)
    except (OSError, ValueError):
        pass
    return float(best) if best else 32.0 * 1024 * 1024


def rotation(nbytes, dev):
    cache = cache_bytes(dev)
    if nbytes <= 0 or nbytes > cache:
        return 1
    n = min(MAX_SETS, math.ceil(2.0 * cache / nbytes))
    while n > 1 and n * nbytes > ROTATION_BYTES:
        n -= 1
    return n


def tensor_bytes(ts):
    return float(sum(t.numel() * t.element_size() for t in ts))


# ---------------------------------------------------------------- inputs
class Inputs:
    """Seeded normal tensors made on the target device."""

    def __init__(self, dev, seed):
        self.dev = dev
        self.gen = torch.Generator(device=dev)
        self.gen.manual_seed(seed)

    def normal(self, *shape, mean=0.0, std=1.0):
        t = torch.randn(*shape, generator=self.gen, device=self.dev, dtype=torch.float32)
        if std != 1.0:
            t.mul_(std)
        if mean != 0.0:
            t.add_(mean)
        return t

    def linear(self, fan_in, fan_out):
        """(weight (out, in), bias), both scaled by 1/sqrt(fan_in)."""
        s = 1.0 / math.sqrt(fan_in)
        return self.normal(fan_out, fan_in, std=s), self.normal(fan_out, std=s)

    def layer_norm(self, c):
        # gamma near 1 and beta near 0, as a trained LayerNorm has them (tc's models do the same)
        return self.normal(c, mean=1.0, std=0.1), self.normal(c, std=0.1)


# ---------------------------------------------------------------- the workloads
def ln_gelu(x, g, b):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), g, b, 1e-5))


def softmax(x):
    return torch.softmax(x, dim=-1)


def mlp(x, w1, b1, w2, b2):
    return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2) + x


def train_mlp(x, target, w1, b1, w2, b2):
    """BENCHMARKS.md's train_mlp, as tc's bundled model computes it: one SGD step (lr 0.01) of mlp
    on mean((y - target)^2), functional, returning the loss and the updated parameters as one
    vector. The bench runs under no_grad: the step turns grad mode on for itself, and takes fresh
    leaves of the parameters (rotated input sets are clones)."""
    with torch.enable_grad():
        params = [p.detach().requires_grad_(True) for p in (w1, b1, w2, b2)]
        y = mlp(x, *params)
        loss = ((y - target) ** 2).mean()
        grads = torch.autograd.grad(loss, params)
    new = [(p.detach() - 0.01 * g).reshape(-1) for p, g in zip(params, grads)]
    return torch.cat([loss.detach().reshape(1)] + new)


def tiny_mlp_b1(x, w0, b0, w1, b1, w2, b2, w3, b3):
    x = torch.relu(F.linear(x, w0, b0))
    x = torch.relu(F.linear(x, w1, b1))
    x = torch.relu(F.linear(x, w2, b2))
    return torch.relu(F.linear(x, w3, b3))


def make_attn_block(dev, sdpa):
    """The GPT-2 block of BENCHMARKS.md (pre-LN, biases everywhere, 12 heads, causal mask).
    The mask is built from T on each call, as tc's model builds it from the scores' shape: a
    slice of a fixed (max_t, max_t) buffer (nanoGPT's way) makes torch.compile specialise
    T == max_t and compile a third graph in dyn_attn. With sdpa, attention is
    F.scaled_dot_product_attention(is_causal=True) instead."""

    def attn_block(x, ln1_w, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_w, ln2_b, w_1, b_1, w_2, b_2):
        B, T, C = x.shape
        d = C // HEADS
        h = F.layer_norm(x, (C,), ln1_w, ln1_b, 1e-5)
        q, k, v = F.linear(h, w_qkv, b_qkv).split(C, dim=2)
        q = q.view(B, T, HEADS, d).transpose(1, 2)
        k = k.view(B, T, HEADS, d).transpose(1, 2)
        v = v.view(B, T, HEADS, d).transpose(1, 2)
        if sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
            above = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            s = s.masked_fill(above, float("-inf"))
            y = torch.softmax(s, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + F.linear(y, w_o, b_o)
        h = F.layer_norm(x, (C,), ln2_w, ln2_b, 1e-5)
        return x + F.linear(F.gelu(F.linear(h, w_1, b_1)), w_2, b_2)

    return attn_block


def attn_weights(gen, c):
    ln1 = gen.layer_norm(c)
    qkv = gen.linear(c, 3 * c)
    o = gen.linear(c, c)
    ln2 = gen.layer_norm(c)
    up = gen.linear(c, 4 * c)
    down = gen.linear(4 * c, c)
    return [*ln1, *qkv, *o, *ln2, *up, *down]


class Workload:
    def __init__(self, name, fn, inputs, work, gemms, copy_bytes):
        self.name, self.fn, self.inputs, self.work = name, fn, inputs, work
        self.gemms = gemms            # [(batch, m, n, k)] for the GEMM ceiling
        self.copy_bytes = copy_bytes  # bytes one way, for the copy ceiling
        self.unit = UNITS[name]


def build(name, s, dev, sdpa):
    gen = Inputs(dev, seed=1)
    if name == "ln_gelu":
        m, n = s["M"], s["N"]
        return Workload(name, ln_gelu, [gen.normal(m, n), *gen.layer_norm(n)], 2.0 * m * n * 4, [], m * n * 4)
    if name == "softmax":
        m, n = s["M"], s["N"]
        return Workload(name, softmax, [gen.normal(m, n)], 2.0 * m * n * 4, [], m * n * 4)
    if name == "mlp":
        m, d, h = s["M"], s["D"], s["H"]
        ins = [gen.normal(m, d), *gen.linear(d, h), *gen.linear(h, d)]
        return Workload(name, mlp, ins, 4.0 * m * d * h, [(1, m, h, d), (1, m, d, h)], 0)
    if name == "train_mlp":
        m, d, h = s["M"], s["D"], s["H"]
        ins = [gen.normal(m, d), gen.normal(m, d), *gen.linear(d, h), *gen.linear(h, d)]
        # forward x.W1, h.W2; backward dW2 = h^T.dy, dh = dy.W2, dW1 = x^T.dh (x needs no gradient)
        gemms = [(1, m, h, d), (1, m, d, h), (1, h, d, m), (1, m, h, d), (1, d, h, m)]
        return Workload(name, train_mlp, ins, 0.0, gemms, 0)
    if name == "tiny_mlp_b1":
        b, w = s["B"], s["W"]
        ins = [gen.normal(b, w)]
        for _ in range(s["L"]):
            ins += gen.linear(w, w)
        return Workload(name, tiny_mlp_b1, ins, 0.0, [(1, b, w, w)] * s["L"], 0)
    if name == "attn_block":
        b, t, c = s["B"], s["T"], s["C"]
        d = c // HEADS
        ins = [gen.normal(b, t, c), *attn_weights(gen, c)]
        gemms = [(1, b * t, 3 * c, c), (b * HEADS, t, t, d), (b * HEADS, t, d, t), (1, b * t, c, c),
                 (1, b * t, 4 * c, c), (1, b * t, c, 4 * c)]
        return Workload(name, make_attn_block(dev, sdpa), ins, 0.0, gemms, 0)
    raise ValueError(name)


def figure(w, seconds):
    if not seconds or seconds <= 0:
        return None
    if w.unit == "GB/s":
        return w.work / seconds / 1e9
    if w.unit == "TF/s":
        return w.work / seconds / 1e12
    if w.unit == "us":
        return seconds * 1e6
    return seconds * 1e3


# ---------------------------------------------------------------- ceilings
def copy_ceiling(nbytes, dev):
    """A copy of nbytes (read + written counted): GB/s and the median seconds."""
    numel = int(nbytes // 4)
    n_sets = rotation(2.0 * numel * 4, dev)
    sets = [(torch.empty(numel, device=dev), torch.randn(numel, device=dev)) for _ in range(n_sets)]
    med, _ = time_calls(lambda dst, src: dst.copy_(src), sets, dev, warmup=2, iters=200, budget_s=1.0)
    return {"kind": "copy", "bytes": 2.0 * numel * 4, "seconds": med, "value": 2.0 * numel * 4 / med / 1e9}


def gemm_ceiling(gemms, dev):
    """The bare GEMMs, one after another: median seconds and flops."""
    flops, per_set = 0.0, []
    for batch, m, n, k in gemms:
        flops += 2.0 * batch * m * n * k
        if batch == 1:
            per_set += [torch.randn(m, k, device=dev), torch.randn(k, n, device=dev)]
        else:
            per_set += [torch.randn(batch, m, k, device=dev), torch.randn(batch, k, n, device=dev)]
    n_sets = rotation(tensor_bytes(per_set), dev)
    sets = [per_set] + [[t.clone() for t in per_set] for _ in range(n_sets - 1)]

    def run(*ts):
        for i in range(0, len(ts), 2):
            a, b = ts[i], ts[i + 1]
            torch.mm(a, b) if a.dim() == 2 else torch.bmm(a, b)

    med, _ = time_calls(run, sets, dev, warmup=2, iters=200, budget_s=1.0)
    return med, flops


def workload_ceiling(w, dev):
    if w.unit == "GB/s":
        return copy_ceiling(w.copy_bytes, dev)
    if not w.gemms:
        return None
    med, flops = gemm_ceiling(w.gemms, dev)
    kind = "mm" if all(g[0] == 1 for g in w.gemms) else "mm+bmm"
    if w.unit == "TF/s":
        return {"kind": kind, "seconds": med, "value": flops / med / 1e12}
    return {"kind": kind, "seconds": med, "value": figure(w, med), "tflops": flops / med / 1e12}


def machine_ceilings(size, dev):
    """Machine-wide figures: a copy well beyond the last-level cache, and the mlp GEMMs."""
    out = {}
    nbytes = (256 if dev.type == "cuda" else 64) * 1024 * 1024
    out["copy"] = copy_ceiling(nbytes, dev)
    s = SHAPES[size]["mlp"]
    med, flops = gemm_ceiling([(1, s["M"], s["H"], s["D"]), (1, s["M"], s["D"], s["H"])], dev)
    out["mm"] = {"kind": "mm", "shape": f"{s['M']}x{s['D']}·{s['D']}x{s['H']} + {s['M']}x{s['H']}·{s['H']}x{s['D']}",
                 "seconds": med, "value": flops / med / 1e12}
    return out


# ---------------------------------------------------------------- measuring one workload
def compile_graphs():
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:  # an internal counter: absent in some versions
        return None


def compile_fn(fn, mode):
    return torch.compile(fn) if mode == "default" else torch.compile(fn, mode=mode)


def first_call(fn, args, dev, mode):
    """torch.compile(fn) after a reset; the first call's seconds, the output, the compiled fn."""
    torch._dynamo.reset()
    g0 = compile_graphs()
    cfn = compile_fn(fn, mode)
    sync(dev)
    t0 = time.perf_counter()
    out = cfn(*args)
    sync(dev)
    secs = time.perf_counter() - t0
    g1 = compile_graphs()
    graphs = g1 - g0 if g0 is not None and g1 is not None else None
    return secs, out, cfn, graphs


def checksum(out):
    o = out.double()
    return {"sum": float(o.sum()), "abs_sum": float(o.abs().sum())}


def error_text(e):
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:400]


def measure(name, args, dev):
    s = SHAPES[args.size][name]
    r = {"name": name, "unit": UNITS[name], "shape": s, "error": ""}
    w = build(name, s, dev, args.sdpa)
    r["input_sets"] = n_sets = rotation(tensor_bytes(w.inputs), dev)
    sets = [w.inputs] + [[t.clone() for t in w.inputs] for _ in range(n_sets - 1)]
    host_clock = name == "tiny_mlp_b1"
    r["clock"] = "host" if host_clock or dev.type != "cuda" else "cuda-events, grouped"
    try:
        r["ceiling"] = workload_ceiling(w, dev)
    except Interrupted:
        raise
    except Exception as e:  # a ceiling that fails leaves the workload's own figures
        check_stopping()
        r["ceiling"] = {"kind": None, "note": error_text(e)}

    eager_out = w.fn(*sets[0])
    r["checksum"] = checksum(eager_out)
    med, n = time_calls(w.fn, sets, dev, host_clock=host_clock)
    r["eager"] = {"median_s": med, "calls": n, "figure": figure(w, med)}

    if not args.skip_compile:
        c = {}
        try:
            secs, out, cfn, graphs = first_call(w.fn, sets[0], dev, args.mode)
            c["first_call_s"], c["graphs"] = secs, graphs
            c["max_abs_diff"] = float((out.float() - eager_out.float()).abs().max())
            med, n = time_calls(cfn, sets, dev, host_clock=host_clock)
            c.update(median_s=med, calls=n, figure=figure(w, med))
            if not args.no_warm:
                c["warm_first_call_s"] = first_call(w.fn, sets[0], dev, args.mode)[0]
        except Interrupted:
            raise
        except Exception as e:
            check_stopping()
            c["error"] = error_text(e)
            r["error"] = "torch.compile: " + c["error"]
        r["compile"] = c
    ceil = r.get("ceiling") or {}
    if ceil.get("value"):
        for key in ("eager", "compile"):
            fig = (r.get(key) or {}).get("figure")
            if fig:
                r[key]["ratio"] = fig / ceil["value"] if w.work else ceil["value"] / fig
    torch._dynamo.reset()
    return r


def dyn_seq_len(i):
    return 64 + 16 * ((37 * i) % 61)


def measure_dyn_attn(args, dev):
    """attn_block called with 40 sequence lengths: total seconds, eager and compiled."""
    s = SHAPES[args.size]["dyn_attn"]
    r = {"name": "dyn_attn", "unit": "s", "shape": {**s, "T": "64 + 16·((37·i) mod 61), i = 0..39"}, "error": ""}
    gen = Inputs(dev, seed=1)
    weights = attn_weights(gen, s["C"])
    xs = [gen.normal(s["B"], dyn_seq_len(i), s["C"]) for i in range(DYN_CALLS)]
    fn = make_attn_block(dev, args.sdpa)

    def run_all(f):
        sync(dev)
        t0 = time.perf_counter()
        first = None
        for i, x in enumerate(xs):
            f(x, *weights)
            if i == 0:
                sync(dev)
                first = time.perf_counter() - t0
        sync(dev)
        return time.perf_counter() - t0, first

    fn(xs[0], *weights)  # library start-up (cuBLAS handles) outside the eager total
    r["eager"] = {"total_s": run_all(fn)[0]}
    if not args.skip_compile:
        c = {}
        try:
            for key in ("cold", "warm"):
                if key == "warm" and args.no_warm:
                    break
                torch._dynamo.reset()
                g0 = compile_graphs()
                total, first = run_all(compile_fn(fn, args.mode))
                g1 = compile_graphs()
                c[key] = {"total_s": total, "first_call_s": first,
                          "graphs": g1 - g0 if g0 is not None and g1 is not None else None}
        except Interrupted:
            raise
        except Exception as e:
            check_stopping()
            c["error"] = error_text(e)
            r["error"] = "torch.compile: " + c["error"]
        r["compile"] = c
    torch._dynamo.reset()
    return r


# ---------------------------------------------------------------- report
def fmt(v, unit=None):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if unit == "s":
        return f"{v:.3g} s" if v >= 1 else f"{v * 1e3:.3g} ms" if v >= 1e-3 else f"{v * 1e6:.3g} us"
    return f"{v:.4g}"


def report_table(res):
    print(f"torch_compare: torch {res['torch']}, device {res['device']}, size {res['size']}, {res['threads']} threads, "
          f"fp32 (TF32 off), attention {res['attention']}, torch.compile mode {res['compile_mode'] or '-'}, "
          f"cache {res['compile_cache']}")
    mc = res.get("ceilings") or {}
    if mc.get("copy") or mc.get("mm"):
        cp, mm = mc.get("copy") or {}, mc.get("mm") or {}
        print(f"ceilings: copy of {fmt((cp.get('bytes') or 0) / 2 / 2**20)} MiB: {fmt(cp.get('value'))} GB/s "
              f"(read + written); mm at the mlp shapes: {fmt(mm.get('value'))} TF/s")
    hdr = ("model", "unit", "eager", "e.median", "compile", "c.median", "1st call", "warm 1st", "ceiling", "e.ratio",
           "c.ratio", "max|diff|", "sets")
    line = "%-12s %-5s %9s %9s %9s %9s %9s %9s %-16s %7s %7s %9s %4s"
    print(line % hdr)
    for r in res["models"]:
        e, c, ceil = r.get("eager") or {}, r.get("compile") or {}, r.get("ceiling") or {}
        if r["name"] == "dyn_attn":
            cold, warm = c.get("cold") or {}, c.get("warm") or {}
            print(f"{'dyn_attn':<12} {'s':<5} 40 calls: eager {fmt(e.get('total_s'), 's')} total; compiled: cold "
                  f"cache {fmt(cold.get('total_s'), 's')} total ({fmt(cold.get('graphs'))} graphs), warm cache "
                  f"{fmt(warm.get('total_s'), 's')} total")
        else:
            ce = f"{ceil['kind']} {fmt(ceil.get('value'))}" if ceil.get("kind") else "-"
            print(line % (
                r["name"], r["unit"], fmt(e.get("figure")), fmt(e.get("median_s"), "s"), fmt(c.get("figure")),
                fmt(c.get("median_s"), "s"), fmt(c.get("first_call_s"), "s"), fmt(c.get("warm_first_call_s"), "s"),
                ce, fmt(e.get("ratio")), fmt(c.get("ratio")), fmt(c.get("max_abs_diff")), r.get("input_sets", "-")))
        if r.get("error"):
            print(f"{'':12} error: {r['error']}")
    if res.get("incomplete"):
        print(f"incomplete: {res['incomplete']}")
    print("figure: GB/s and TF/s from the median call; ms and us are the median call. ratio: figure/ceiling (time\n"
          "figures: ceiling time/median, the ceiling being their GEMMs alone). 1st call: torch.compile's first call\n"
          "(capture + compile + run) with an empty cache; warm 1st: again after torch._dynamo.reset().")


# ---------------------------------------------------------------- main
def parse_args(argv):
    p = argparse.ArgumentParser(description="PyTorch eager and torch.compile on the BENCHMARKS.md workloads.")
    p.add_argument("--size", choices=["cpu", "gpu"], default="cpu", help="cpu: CPU shapes on the CPU; gpu: GPU "
                   "shapes on CUDA")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    p.add_argument("--models", help="comma-separated: " + ",".join(ALL_MODELS) + " (default: all but dyn_attn "
                   "on cpu, all on gpu)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--skip-compile", action="store_true", help="eager only (torch.compile takes 40-58 s per "
                   "workload on CPU)")
    p.add_argument("--no-warm", action="store_true", help="skip the second (warm-cache) first call")
    p.add_argument("--mode", default="default", choices=["default", "max-autotune", "reduce-overhead",
                                                         "max-autotune-no-cudagraphs"],
                   help="torch.compile mode (default: default)")
    p.add_argument("--sdpa", action="store_true", help="attention through F.scaled_dot_product_attention")
    p.add_argument("--cache-dir", help="Inductor / Triton cache folder (default: a fresh temporary one)")
    a = p.parse_args(argv)
    a.models = a.models.split(",") if a.models else DEFAULT_MODELS[a.size]
    bad = [m for m in a.models if m not in ALL_MODELS]
    if bad:
        p.error(f"unknown model(s) {', '.join(bad)}; known: {', '.join(ALL_MODELS)}")
    return a


def on_sigterm(signum, frame):
    STOPPING.append(signum)
    raise Interrupted(f"signal {signum}")


def set_fp32_strict():
    """fp32 everywhere: TF32 off for cuBLAS and cuDNN."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def main(argv):
    args = parse_args(argv)
    tmp_cache = None
    if not args.cache_dir:
        tmp_cache = args.cache_dir = tempfile.mkdtemp(prefix="torch-compare-cache-")
    cache_state = "fresh (empty)" if tmp_cache else args.cache_dir
    # Set before torch is imported: Inductor and Triton read them for their on-disk caches.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(args.cache_dir, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(args.cache_dir, "triton")

    global torch, F
    try:
        import torch as _torch
        import torch.nn.functional as _F
        import torch._dynamo  # noqa: F401  (reset, counters)
    except ImportError:
        print("torch_compare: PyTorch is not installed (pip install torch); tc itself does not need it",
              file=sys.stderr)
        return 2
    torch, F = _torch, _F

    if args.size == "gpu" and not torch.cuda.is_available():
        print("torch_compare: --size gpu needs CUDA, and torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    dev = torch.device("cuda" if args.size == "gpu" else "cpu")
    torch.set_num_threads(args.threads)
    set_fp32_strict()
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    res = {
        "tool": "torch_compare",
        "torch": torch.__version__,
        "triton": triton_version,
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "size": args.size,
        "threads": torch.get_num_threads(),
        "tf32": False,
        "attention": "sdpa" if args.sdpa else "explicit",
        "compile_mode": None if args.skip_compile else args.mode,
        "compile_cache": cache_state,
        "ceilings": {},
        "models": [],
    }
    rc = 0
    try:
        with torch.no_grad():
            log("ceilings ...")
            try:
                res["ceilings"] = machine_ceilings(args.size, dev)
            except Interrupted:
                raise
            except Exception as e:
                check_stopping()
                res["ceilings"] = {"error": error_text(e)}
            for name in args.models:
                log(f"{name} ...")
                t0 = time.perf_counter()
                try:
                    r = measure_dyn_attn(args, dev) if name == "dyn_attn" else measure(name, args, dev)
                except Interrupted:
                    raise
                except Exception as e:
                    check_stopping()
                    r = {"name": name, "unit": UNITS[name], "error": error_text(e)}
                if r.get("error"):
                    rc = 1
                res["models"].append(r)
                log(f"{name} done in {time.perf_counter() - t0:.1f} s")
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
    except (Interrupted, KeyboardInterrupt) as e:
        res["incomplete"] = f"stopped by {e or 'interrupt'} after {len(res['models'])} workloads"
        rc = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the report below print whole
        if tmp_cache:
            shutil.rmtree(tmp_cache, ignore_errors=True)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        report_table(res)
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
