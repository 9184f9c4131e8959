#!/usr/bin/env python3
"""gpu_table.py OUTDIR BACKEND... — the short summary table at the end of scripts/gpu-run.sh.

Reads OUTDIR/bench_<backend>.json (`tc bench --json`) for each backend and OUTDIR/torch.json
(bench/torch_compare.py --json), and prints per workload: tc's figure on each backend with the
ceiling measured in that same run and the ratio, PyTorch eager and torch.compile on the same
shapes (with torch's own ceiling), and BENCHMARKS.md's reference figures for context. A second
table gives first-call times. Anything missing or unreadable prints as "-"; this never fails
because a run did.
"""
import json
import math
import os
import sys

ORDER = ["ln_gelu", "softmax", "mlp", "attn_block", "train_mlp", "tiny_mlp_b1", "dyn_attn"]
UNITS = {"ln_gelu": "GB/s", "softmax": "GB/s", "mlp": "TF/s", "attn_block": "ms", "train_mlp": "ms",
         "tiny_mlp_b1": "us", "dyn_attn": "s"}

# BENCHMARKS.md, "Figures to beat": PyTorch 2.11 on one H200 (eager, torch.compile default).
# dyn_attn: total seconds for the 40 calls (torch.compile: cold cache, 2 graphs).
REF_GPU = {"ln_gelu": (1670, 3014), "softmax": (3837, 4052), "mlp": (46.6, 48.5), "attn_block": (1.95, 1.64),
           "train_mlp": (7.33, 7.21), "tiny_mlp_b1": (109, 125), "dyn_attn": (1.28, 13.2)}


def _cpu_refs():
    """BENCHMARKS.md's CPU times (2 threads), in each workload's unit."""
    gb = lambda m, n, ms: 2.0 * m * n * 4 / (ms * 1e-3) / 1e9  # noqa: E731
    tf = lambda ms: 4.0 * 1024 * 512 * 2048 / (ms * 1e-3) / 1e12  # noqa: E731
    return {"ln_gelu": (gb(4096, 1024, 14.3), gb(4096, 1024, 4.7)),
            "softmax": (gb(8192, 1024, 18.2), gb(8192, 1024, 16.8)),
            "mlp": (tf(26.5), tf(19.0)), "attn_block": (46.3, 37.4), "tiny_mlp_b1": (23, None)}


REF_CPU = _cpu_refs()


def get(d, *keys):
    """d[k0][k1]... or None when any level is missing or not a dict."""
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v != 0 else None


def fmt(v, digits=4):
    v = num(v)
    return "-" if v is None else f"{v:.{digits}g}"


def load(path, notes):
    try:
        with open(path) as f:
            d = json.load(f)
        if isinstance(d, dict):
            return d
        notes.append(f"{path}: not a JSON object")
    except FileNotFoundError:
        notes.append(f"{path}: missing")
    except (OSError, ValueError) as e:
        notes.append(f"{path}: unreadable ({e.__class__.__name__}: {str(e)[:80]})")
    return {}


def by_name(doc):
    ms = doc.get("models")
    return {m["name"]: m for m in ms if isinstance(m, dict) and isinstance(m.get("name"), str)} \
        if isinstance(ms, list) else {}


def tc_cells(m):
    """tc bench's figure, ceiling ('kind value') and ratio for one workload."""
    if not m:
        return "-", "-", "-"
    if m.get("name") == "dyn_attn":
        total, graphs = num(get(m, "cold", "total_s")), get(m, "cold", "compiles")
        fig = fmt(total) + (f" ({graphs}g)" if isinstance(graphs, int) and total else "")
        return fig, "-", "-"
    fig = fmt(m.get("figure")) if not m.get("error") else "err"
    kind, value = get(m, "ceiling", "kind"), num(get(m, "ceiling", "value"))
    ceil = f"{kind} {fmt(value)}" if kind and value else "-"
    return fig, ceil, fmt(m.get("ratio"), 3)


def torch_cells(m):
    """torch eager, torch.compile and torch's ceiling for one workload."""
    if not m:
        return "-", "-", "-"
    if m.get("name") == "dyn_attn":
        total, graphs = num(get(m, "compile", "cold", "total_s")), get(m, "compile", "cold", "graphs")
        comp = fmt(total) + (f" ({graphs}g)" if isinstance(graphs, int) and total else "")
        return fmt(get(m, "eager", "total_s")), comp, "-"
    kind, value = get(m, "ceiling", "kind"), num(get(m, "ceiling", "value"))
    return fmt(get(m, "eager", "figure")), fmt(get(m, "compile", "figure")), f"{kind} {fmt(value)}" if kind and value \
        else "-"


def first_call_cells(m, cold_key, warm_key):
    """Cold and warm first calls; for dyn_attn, the totals of its 40 calls."""
    return fmt(get(m, *cold_key), 3), fmt(get(m, *warm_key), 3)


def print_rows(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())


def main(argv):
    if len(argv) < 2:
        print("usage: gpu_table.py OUTDIR BACKEND...", file=sys.stderr)
        return 2
    outdir, backends = argv[0], argv[1:]
    notes = []
    tc = {b: load(os.path.join(outdir, f"bench_{b}.json"), notes) for b in backends}
    th = load(os.path.join(outdir, "torch.json"), notes)
    tc_models = {b: by_name(d) for b, d in tc.items()}
    th_models = by_name(th)
    size = th.get("size") or next((d.get("size") for d in tc.values() if d.get("size")), "gpu")
    refs = REF_CPU if size == "cpu" else REF_GPU

    seen = set(th_models).union(*[set(m) for m in tc_models.values()]) if tc_models else set(th_models)
    names = [n for n in ORDER if n in seen] + sorted(n for n in seen if n not in ORDER)
    if not names:
        names = [n for n in ORDER if n != "train_mlp"]

    head = ["workload", "unit"]
    for b in backends:
        head += [f"tc {b}", "ceiling", "ratio"]
    head += ["torch eager", "torch.compile", "torch ceiling", "ref eager", "ref compile"]
    rows = [head]
    for n in names:
        row = [n, UNITS.get(n) or get(th_models.get(n), "unit") or "-"]
        for b in backends:
            row += list(tc_cells(tc_models[b].get(n)))
        ref = refs.get(n, (None, None))
        row += list(torch_cells(th_models.get(n))) + [fmt(ref[0]), fmt(ref[1])]
        rows.append(row)

    dev = th.get("device") or "-"
    print(f"tc vs PyTorch, size {size} (torch {th.get('torch') or '-'} on {dev}, TF32 "
          f"{'off' if th.get('tf32') is False else '?'}); figures from each run's median call")
    print_rows(rows)

    fc = [["first call (s)", ""]]
    for b in backends:
        fc[0] += [f"tc {b} cold", "warm"]
    fc[0] += ["torch.compile cold", "warm"]
    for n in names:
        dyn = n == "dyn_attn"
        row = [n + " (total)" if dyn else n, ""]
        for b in backends:
            key = "total_s" if dyn else "first_call_s"
            row += list(first_call_cells(tc_models[b].get(n), ("cold", key), ("warm", key)))
        t = th_models.get(n)
        if dyn:
            row += list(first_call_cells(t, ("compile", "cold", "total_s"), ("compile", "warm", "total_s")))
        else:
            row += list(first_call_cells(t, ("compile", "first_call_s"), ("compile", "warm_first_call_s")))
        fc.append(row)
    print()
    print_rows(fc)

    mc = th.get("ceilings") if isinstance(th.get("ceilings"), dict) else {}
    h200 = "; BENCHMARKS.md: about 4300 on the H200" if size == "gpu" else ""
    print(f"\ntorch ceilings: copy {fmt(get(mc, 'copy', 'value'))} GB/s (read + written{h200}), mm at the mlp shapes "
          f"{fmt(get(mc, 'mm', 'value'))} TF/s")
    print("ratio: median over interleaved rounds of ceiling time / model time (tc bench). dyn_attn: total seconds of the 40 calls with a cold "
          "cache,\n(Ng) = graphs compiled; its warm-cache total is in the first-call table. ref: BENCHMARKS.md.")
    # Memory-bound figures against the best copy of the call: tc's ceiling or torch's copy kernel,
    # whichever was faster (the Done-when ratios of the inductor-cuda issue are taken this way).
    best_copy = num(get(mc, "copy", "value"))
    for b in backends:
        for n in ("ln_gelu", "softmax"):
            m = tc_models[b].get(n)
            fig, ceil = num(get(m, "figure")), num(get(m, "ceiling", "value"))
            best = max(v for v in (ceil, best_copy, 0) if v is not None)
            if fig and best:
                print(f"{b} {n}: {fig:.0f} GB/s = {fig / best:.3f} of the best copy of the call ({best:.0f} GB/s)")
    for b in backends:
        for n, m in tc_models[b].items():
            if m.get("error"):
                notes.append(f"tc {b} {n}: {str(m['error'])[:160]}")
    for n, m in th_models.items():
        if m.get("error"):
            notes.append(f"torch {n}: {str(m['error'])[:160]}")
    if th.get("incomplete"):
        notes.append(f"torch: {th['incomplete']}")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
