#!/usr/bin/env python3
"""gen_expected.py — makes tests/pytorch/data/expected.txt: inputs and PyTorch's results for tc's
public ops at the edges of their domains, and the bundled models' outputs and gradients.

Run it from the repository root with PyTorch (CPU is enough) on the path; nothing else needs it:

    PYTHONPATH=/path/to/torch python3 tests/pytorch/gen_expected.py [--out tests/pytorch/data/expected.txt]

The build embeds the file it writes (tests/conformance/cases_pytorch.c reads it), so neither the
build nor the tests import torch. Everything is deterministic (fixed seeds, one thread):
running it twice writes the same bytes, so a diff of the data is a change in PyTorch or here.

Format (text, one record per line, lines under 1000 characters so the build can embed them):
    tcpt 1                                  first line: magic and version
    case NAME OP                            starts a case; OP is a tc op name (tc_OP in tc.h) or
                                            model:NAME (a bundled model, examples/models)
    attr KEY V...                           numbers (integers written as such, nan, inf), as many
                                            as KEY needs; `attr dtype f64` names a dtype
    tol exact                               bitwise: NaN where NaN, +-0 and denormals as they are
    tol ulp N ATOL                          |got - want| <= N ulps of want (f32 ulps) or <= ATOL
    tol close RTOL ATOL                     |got - want| <= ATOL * M + RTOL * |want|, NaN/Inf exact,
                                            M = max(1, largest finite |want| of the tensor)
    in|out|grad DTYPE RANK SIZE...          a tensor (grad: d(loss)/d(in k), in input order,
                                            for every floating input but the last, the loss's weights)
    b64 DATA                                the tensor's bytes, little-endian, base64; as many
                                            lines as needed, right after its header
    end                                     ends the case
Tolerances are chosen per op below, with the reason next to each.
"""
import argparse
import base64
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch_compare as tcmp  # noqa: E402  (the bench's PyTorch versions of the bundled models)

tcmp.torch, tcmp.F = torch, F  # torch_compare imports torch in its main(); we give it ours

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int32: "i32", torch.int64: "i64", torch.bool: "bool"}
F32, F64, I32, I64, BOOL = torch.float32, torch.float64, torch.int32, torch.int64, torch.bool

# ---------------------------------------------------------------- tolerances
EXACT = ("exact",)
# IEEE-exact ops (+ - * /, sqrt, comparisons, rounding, selects, casts, indexing) are compared
# bit for bit. Transcendentals need not be correctly rounded (docs/primitives.md): glibc's and
# PyTorch's are within 1 ulp, tc's exp < 1 ulp, so 4 ulps; the ATOL covers results near a zero
# of the function (sin near pi), where one ulp of the input is many ulps of the result.
ULP_TRANSCENDENTAL = ("ulp", 4, 1e-30)
# tc's f32 erf is within 7 ulps just below 1 (plugin-api/kit/prelude/tc_scalar.h), gelu = x * (1 +
# erf(x / sqrt 2)) / 2 cancels for negative x, where the result is tiny against x: 1e-6 absolute.
ULP_ERF = ("ulp", 8, 1e-6)
# f64 transcendentals: glibc's are within 1 ulp, the GPU backends' are tc's own series (~1e-15
# relative, plugins/vulkan/codegen_math.c): 16 f64 ulps (3.6e-15 relative).
ULP_F64 = ("ulp", 16, 1e-300)
# pow through exp and log on some backends: 8 ulps; results near 0 are exact or tiny.
ULP_POW = ("ulp", 8, 1e-30)
# Sums and dot products: the order of additions is the backend's; f32 rounding of n terms.
CLOSE_REDUCE = ("close", 1e-5, 1e-6)
CLOSE_NORM = ("close", 1e-5, 1e-5)


# ---------------------------------------------------------------- edge values
NAN, INF = float("nan"), float("inf")
DENORMS = [1e-40, -1e-45, 1.1754942e-38]  # subnormal, the smallest negative one, the largest subnormal
SPECIAL = [NAN, INF, -INF, 0.0, -0.0] + DENORMS + [3.4028235e38, -3.4028235e38, 1.1754944e-38, 1e-30]
ORDINARY = [1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 3.0, -7.25, 100.0, -1e10, 88.5, -104.0, 20.0, 1e-7]
EDGE = SPECIAL + ORDINARY  # 30 values
# For binary ops: every pair of these 16 (a column against a row: 256 results, broadcast).
PAIR = [NAN, INF, -INF, 0.0, -0.0, 1e-40, -1e-45, 3.4028235e38, 1.0, -1.0, 0.5, -2.5, 3.0, -7.25, 1e-30, 2.0]


def t(vals, dtype=F32, shape=None):
    x = torch.tensor(vals, dtype=dtype)
    return x.reshape(shape) if shape is not None else x


def randn(gen, *shape, dtype=F32):
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


# ---------------------------------------------------------------- writing
class Writer:
    def __init__(self):
        self.lines = ["tcpt 1"]
        self.names = set()
        self.count = 0

    def tensor(self, role, x):
        x = x.detach().contiguous()
        self.lines.append(" ".join([role, DTYPES[x.dtype], str(x.dim())] + [str(s) for s in x.shape]))
        raw = bytes(x.reshape(-1).view(torch.uint8).tolist()) if x.numel() else b""
        text = base64.b64encode(raw).decode()
        for i in range(0, len(text), 960):
            self.lines.append("b64 " + text[i:i + 960])

    def case(self, name, op, ins, outs, tol, attrs=(), grads=()):
        assert name not in self.names, name
        self.names.add(name)
        self.count += 1
        self.lines.append(f"case {name} {op}")
        for key, vals in attrs:
            vals = vals if isinstance(vals, (list, tuple)) else [vals]
            self.lines.append(" ".join(["attr", key] + [num(v) for v in vals]))
        self.lines.append(" ".join(["tol"] + [num(v) if not isinstance(v, str) else v for v in tol]))
        for x in ins:
            self.tensor("in", x)
        for y in outs:
            self.tensor("out", y)
        for g in grads:
            self.tensor("grad", g)
        self.lines.append("end")


def num(v):
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


# ---------------------------------------------------------------- ops at the edges
UNARY = [  # tc op, torch function, tolerance, dtypes beyond f32
    ("neg", torch.neg, EXACT), ("abs", torch.abs, EXACT),
    ("exp", torch.exp, ULP_TRANSCENDENTAL), ("log", torch.log, ULP_TRANSCENDENTAL),
    ("sqrt", torch.sqrt, EXACT), ("rsqrt", torch.rsqrt, ("ulp", 2, 0.0)),  # 1/sqrt: two roundings
    ("sin", torch.sin, ULP_TRANSCENDENTAL), ("cos", torch.cos, ULP_TRANSCENDENTAL),
    ("tanh", torch.tanh, ULP_TRANSCENDENTAL), ("erf", torch.erf, ULP_ERF),
    ("floor", torch.floor, EXACT), ("ceil", torch.ceil, EXACT), ("round", torch.round, EXACT),
    ("sign", torch.sign, EXACT), ("reciprocal", torch.reciprocal, EXACT),
    ("isnan", torch.isnan, EXACT), ("sigmoid", torch.sigmoid, ULP_TRANSCENDENTAL),
    ("relu", torch.relu, EXACT), ("gelu", F.gelu, ULP_ERF),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), ULP_ERF), ("silu", F.silu, ULP_TRANSCENDENTAL),
]

BINARY = [
    ("add", torch.add, EXACT), ("sub", torch.sub, EXACT), ("mul", torch.mul, EXACT), ("div", torch.div, EXACT),
    ("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"), EXACT),
    ("remainder", torch.remainder, EXACT), ("fmod", torch.fmod, EXACT), ("pow", torch.pow, ULP_POW),
    ("maximum", torch.maximum, EXACT), ("minimum", torch.minimum, EXACT),
    ("eq", torch.eq, EXACT), ("ne", torch.ne, EXACT), ("lt", torch.lt, EXACT), ("le", torch.le, EXACT),
    ("gt", torch.gt, EXACT), ("ge", torch.ge, EXACT),
]


# Pairs where PyTorch's vectorized CPU kernels differ from their own scalar path and from C, kept
# apart (flat vectors, not a broadcast) so the rest stays exact: fmod and remainder compute
# a - trunc(a / b) * b, NaN where a / b overflows (tc: C's exact fmod); maximum and minimum of
# +0 and -0 return an operand by position (tc: +0 > -0 in any order, docs/primitives.md).
SPLIT_PAIRS = {
    "fmod": lambda a, b, d: math.isfinite(a) and b != 0 and not math.isnan(b) and math.isinf(t([a / b if b else 0], d).item()),
    "remainder": lambda a, b, d: SPLIT_PAIRS["fmod"](a, b, d),
    "maximum": lambda a, b, d: a == 0 and b == 0 and math.copysign(1, a) != math.copysign(1, b),
    "minimum": lambda a, b, d: SPLIT_PAIRS["maximum"](a, b, d),
}


def gen_split_pairs(w, op, fn, tol, dtype):
    pairs = [(x, y) for x in t(PAIR, dtype).tolist() for y in t(PAIR, dtype).tolist()]
    apart = [p for p in pairs if SPLIT_PAIRS[op](p[0], p[1], dtype)]
    kept = [p for p in pairs if p not in apart and not (math.isnan(p[0]) or math.isnan(p[1]))]
    kept += [p for p in pairs if math.isnan(p[0]) or math.isnan(p[1])]  # `in` does not find NaN pairs
    name = DTYPES[dtype]
    for suffix, group in (("pairs", kept), ("pairs_pytorch_vectorized", apart)):
        if group:
            a, b = t([p[0] for p in group], dtype), t([p[1] for p in group], dtype)
            w.case(f"{op}_{name}_{suffix}", op, [a, b], [fn(a, b)], tol)


def gen_elementwise(w):
    x = t(EDGE)
    huge = [INF, -INF, 3.4028235e38, -3.4028235e38]
    moderate = t([v for v in EDGE if v not in huge])
    x_trig = t([v for v in EDGE if not abs(v) > 1e5])
    big_args = t([v for v in EDGE if math.isfinite(v) and abs(v) > 1e5] + [123456.0, -2.5e7])
    for op, fn, tol in UNARY:
        # PyTorch's vectorized CPU gelu gives NaN at +-inf (its scalar path: +inf and -0, as tc)
        # and inf at FLT_MAX (x * (1 + erf) overflows before the halving; tc: FLT_MAX): these are a
        # case of their own, a known difference (tests/conformance/cases_pytorch.c).
        # sin and cos of |x| > 1e5 need a long reduction by pi/2 (PyTorch has one; vulkan's three-part
        # one is exact below 1e5): a case of their own too.
        xs = moderate if op == "gelu" else x_trig if op in ("sin", "cos") else x
        w.case(f"{op}_f32_edges", op, [xs], [fn(xs)], tol)
    w.case("gelu_f32_huge", "gelu", [t(huge)], [F.gelu(t(huge))], ULP_ERF)
    for op, fn in (("sin", torch.sin), ("cos", torch.cos)):
        w.case(f"{op}_f32_huge_args", op, [big_args], [fn(big_args)], ULP_TRANSCENDENTAL)
    xd = t(EDGE + [1e-310, -5e-324, 1e300], F64)
    for op, fn, tol in UNARY:
        if op in ("exp", "log", "sqrt", "tanh", "floor", "round", "sign", "neg", "abs", "relu", "sigmoid"):
            w.case(f"{op}_f64_edges", op, [xd], [fn(xd)], ULP_F64 if tol[0] == "ulp" else tol)
    xi = t([0, 1, -1, 7, -7, 2147483647, -2147483647], I32)
    for op, fn, tol in UNARY:
        if op in ("neg", "abs", "sign", "floor", "ceil", "round"):
            w.case(f"{op}_i32", op, [xi], [fn(xi)], tol)
    w.case("logical_not_bool", "logical_not", [t([True, False], BOOL)], [torch.logical_not(t([True, False], BOOL))], EXACT)

    a, b = t(PAIR, shape=(16, 1)), t(PAIR, shape=(1, 16))
    for op, fn, tol in BINARY:
        if op in SPLIT_PAIRS:
            gen_split_pairs(w, op, fn, tol, F32)
        else:
            w.case(f"{op}_f32_pairs", op, [a, b], [fn(a, b)], tol)
    # Integers: every pair without a zero divisor (PyTorch raises on an integer division by zero)
    # and without INT_MIN / -1 (PyTorch's CPU kernels trap: SIGFPE; tc defines it as docs say).
    ia = t([0, 1, -1, 5, -5, 7, -7, 2147483647, -2147483647], I32, (9, 1))
    ib = t([1, -1, 3, -3, 2, 7, -7, 100], I32, (1, 8))
    for op, fn, tol in BINARY:
        if op in ("add", "sub", "mul", "div", "div_trunc", "remainder", "fmod", "maximum", "minimum", "lt", "eq"):
            w.case(f"{op}_i32_pairs", op, [ia, ib], [fn(ia, ib)], tol)
    la, lb = ia.to(I64) * 1000000007, ib.to(I64)
    for op in ("add", "mul", "remainder", "fmod", "div_trunc"):
        fn = dict((o, f) for o, f, _ in BINARY)[op]
        w.case(f"{op}_i64_pairs", op, [la, lb], [fn(la, lb)], EXACT)
    pa, pb = t([0, 1, -2, 3, -3, 10], I64, (6, 1)), t([0, 1, 2, 3, 5], I64, (1, 5))
    w.case("pow_i64_pairs", "pow", [pa, pb], [torch.pow(pa, pb)], EXACT)
    da, db = a.to(F64), b.to(F64)
    for op in ("add", "mul", "div", "remainder", "maximum"):
        fn = dict((o, f) for o, f, _ in BINARY)[op]
        if op in SPLIT_PAIRS:
            gen_split_pairs(w, op, fn, EXACT, F64)
        else:
            w.case(f"{op}_f64_pairs", op, [da, db], [fn(da, db)], EXACT)
    # Promotion: i32 with f32 gives f32, bool with i64 gives i64, f32 with f64 gives f64.
    w.case("add_i32_f32", "add", [ia, t([0.5, -0.0, NAN, 1e-40], shape=(1, 4))],
           [torch.add(ia, t([0.5, -0.0, NAN, 1e-40], shape=(1, 4)))], EXACT)
    w.case("div_i32_i32", "div", [ia, ib], [torch.div(ia, ib)], EXACT)
    w.case("mul_bool_i64", "mul", [t([True, False], BOOL, (2, 1)), t([3, -4], I64, (1, 2))],
           [torch.mul(t([True, False], BOOL, (2, 1)), t([3, -4], I64, (1, 2)))], EXACT)
    w.case("add_f32_f64", "add", [a, db], [torch.add(a, db)], EXACT)
    bo, bp = t([True, False], BOOL, (2, 1)), t([True, False], BOOL, (1, 2))
    for op, fn in (("logical_and", torch.logical_and), ("logical_or", torch.logical_or),
                   ("bitwise_and", torch.bitwise_and), ("bitwise_or", torch.bitwise_or)):
        w.case(f"{op}_bool", op, [bo, bp], [fn(bo, bp)], EXACT)
    for op, fn in (("bitwise_and", torch.bitwise_and), ("bitwise_or", torch.bitwise_or)):
        w.case(f"{op}_i32", op, [ia, ib], [fn(ia, ib)], EXACT)
    w.case("logical_and_f32", "logical_and", [a, b], [torch.logical_and(a, b)], EXACT)

    for op, fn, s, tol in (("add_scalar", torch.add, 1.5, EXACT), ("add_scalar", torch.add, -0.0, EXACT),
                           ("mul_scalar", torch.mul, -0.0, EXACT), ("mul_scalar", torch.mul, 1e-20, EXACT),
                           ("pow_scalar", torch.pow, 2.0, EXACT), ("pow_scalar", torch.pow, 0.5, ULP_POW),
                           ("pow_scalar", torch.pow, -1.0, EXACT), ("pow_scalar", torch.pow, 3.0, ULP_POW),
                           ("pow_scalar", torch.pow, 0.0, EXACT)):
        name = f"{op}_{num(s).replace('-', 'm').replace('.', 'p')}_f32_edges"
        w.case(name, op, [x], [fn(x, s)], tol, attrs=[("s", s)])

    cond = t([True, False, True, False, True], BOOL, (5, 1))
    wa, wb = t([NAN, -0.0, 0.0, INF, 1e-40], shape=(5, 1)), t([-0.0, NAN, -INF, 1e-45, 2.0], shape=(1, 5))
    w.case("where_f32", "where", [cond, wa, wb], [torch.where(cond, wa, wb)], EXACT)
    ia5, ib5 = t([1, 2, 3, 4, 5], I64, (5, 1)), t([-1, -2, -3, -4, -5], I64, (1, 5))
    w.case("where_i64", "where", [cond, ia5, ib5], [torch.where(cond, ia5, ib5)], EXACT)
    mask = t([i % 3 == 0 for i in range(len(EDGE))], BOOL)
    for v in (NAN, -INF, -0.0):
        w.case(f"masked_fill_{num(v).replace('-', 'm')}", "masked_fill", [x, mask], [x.masked_fill(mask, v)], EXACT,
               attrs=[("value", v)])


# ---------------------------------------------------------------- casts
def gen_casts(w):
    floats = [NAN, INF, -INF, 0.0, -0.0, 1e-40, -1e-45, 3.4028235e38, 16777217.0, 0.1, -2.5]
    ints = [0.7, -0.7, 2.9, -2.9, 1e9, -1e9, 0.0, -0.0, 1e-40]  # within range: float -> int is defined
    x, xi = t(floats), t(ints)
    d = t([NAN, INF, -INF, 0.0, -0.0, 1e-310, 1e-40, 1e-46, 3.5e38, -3.5e38, 0.1, 16777217.0, 1 + 2 ** -24], F64)
    cases = [("f32_f64", x, F64), ("f64_f32", d, F32), ("f32_bool", x, BOOL), ("f64_bool", d, BOOL),
             ("f32_i32", xi, I32), ("f32_i64", xi, I64), ("f64_i32", xi.to(F64), I32),
             ("i64_f32", t([16777217, -16777219, 2 ** 62 + 1, 0, -1], I64), F32),
             ("i64_f64", t([2 ** 53 + 1, -(2 ** 62) - 1, 0], I64), F64),
             ("i32_f32", t([16777217, -2147483648, 2147483647], I32), F32),
             ("i64_i32", t([2 ** 40 + 5, -(2 ** 33) - 7, 2147483648], I64), I32),
             ("i32_i64", t([-2147483648, 7], I32), I64), ("bool_f32", t([True, False], BOOL), F32),
             ("bool_i64", t([True, False], BOOL), I64), ("i32_bool", t([0, -3, 1], I32), BOOL)]
    for name, src, dst in cases:
        w.case(f"to_dtype_{name}", "to_dtype", [src], [src.to(dst)], EXACT, attrs=[("dtype", DTYPES[dst])])


# ---------------------------------------------------------------- reductions and nn
def gen_reductions(w, gen):
    # Rows with the special values in them: each row reduced alone shows how each one propagates.
    rows = t([[1.0, 2.0, 3.0, 4.0], [NAN, 1.0, 2.0, 3.0], [INF, 1.0, -1.0, 2.0], [INF, -INF, 1.0, 0.0],
              [-0.0, -0.0, -0.0, -0.0], [0.0, 1.0, 0.0, 2.0], [1e-40, -1e-45, 1e-40, 0.0],
              [3.0e38, 3.0e38, -1.0, 1.0], [2.0, 2.0, 1.0, 2.0], [-INF, -INF, -INF, -INF],
              [5.0, NAN, 5.0, NAN], [-1.0, 7.0, 7.0, -1.0]])
    for op, fn, tol in (("sum", lambda x, d, k: x.sum(d, keepdim=k), EXACT),
                        ("mean", lambda x, d, k: x.mean(d, keepdim=k), ("close", 1e-6, 0.0)),
                        ("prod", lambda x, d, k: x.prod(d[0], keepdim=k), ("close", 1e-6, 0.0)),
                        ("max", lambda x, d, k: x.amax(d, keepdim=k), EXACT),
                        ("min", lambda x, d, k: x.amin(d, keepdim=k), EXACT)):
        # Four-element rows of exactly representable sums: exact in any order except where the
        # row overflows or holds denormals (checked bitwise anyway: every order gives the same).
        w.case(f"{op}_rows_edges", op, [rows], [fn(rows, [1], False)], tol, attrs=[("dims", [1]), ("keepdim", 0)])
    # Mixed zeros: PyTorch's vectorized amin/amax keep whichever zero comes by position.
    zeros = t([[0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, -0.0, 0.0]])
    for op, fn in (("max", torch.amax), ("min", torch.amin)):
        w.case(f"{op}_rows_mixed_zeros", op, [zeros], [fn(zeros, 1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("max_rows_keepdim", "max", [rows], [rows.amax(1, keepdim=True)], EXACT, attrs=[("dims", [-1]), ("keepdim", 1)])
    for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        w.case(f"{op}_rows_edges", op, [rows], [fn(rows, 1)], EXACT, attrs=[("dim", 1), ("keepdim", 0)])
        w.case(f"{op}_cols_keepdim", op, [rows], [fn(rows, 0, keepdim=True)], EXACT, attrs=[("dim", 0), ("keepdim", 1)])
    for corr in (0, 1):
        w.case(f"var_rows_edges_c{corr}", "var", [rows], [rows.var(1, correction=corr)], ("close", 1e-5, 1e-6),
               attrs=[("dims", [1]), ("correction", corr), ("keepdim", 0)])
    one = t([[3.0], [NAN], [-0.0]])
    w.case("var_one_element_c1", "var", [one], [one.var(1, correction=1)], EXACT,
           attrs=[("dims", [1]), ("correction", 1), ("keepdim", 0)])
    # Random data, several dims at once, all dims.
    r = randn(gen, 3, 5, 7)
    w.case("sum_dims_0_2", "sum", [r], [r.sum((0, 2))], CLOSE_REDUCE, attrs=[("dims", [0, 2]), ("keepdim", 0)])
    w.case("mean_all", "mean", [r], [r.mean()], CLOSE_REDUCE, attrs=[("dims", []), ("keepdim", 0)])
    w.case("var_dims_1_2_keepdim", "var", [r], [r.var((1, 2), keepdim=True)], CLOSE_REDUCE,
           attrs=[("dims", [1, 2]), ("correction", 1), ("keepdim", 1)])
    ri = t(list(range(-6, 6)), I32, (3, 4))
    w.case("sum_i32", "sum", [ri], [ri.sum(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("prod_i64", "prod", [ri.to(I64)], [ri.to(I64).prod(0)], EXACT, attrs=[("dims", [0]), ("keepdim", 0)])
    w.case("max_i32", "max", [ri], [ri.amax(0)], EXACT, attrs=[("dims", [0]), ("keepdim", 0)])
    w.case("sum_bool", "sum", [ri > 0], [(ri > 0).sum(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("sum_f64", "sum", [r.to(F64)], [r.to(F64).sum(2)], ("close", 1e-13, 1e-14), attrs=[("dims", [2]), ("keepdim", 0)])
    # Empty dims: the identities (sum 0, prod 1, mean NaN), and empty results.
    e = torch.zeros(3, 0)
    w.case("sum_empty_dim", "sum", [e], [e.sum(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("prod_empty_dim", "prod", [e], [e.prod(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("mean_empty_dim", "mean", [e], [e.mean(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("sum_of_empty_rows", "sum", [e.t()], [e.t().sum(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("max_of_empty_rows", "max", [e.t()], [e.t().amax(1)], EXACT, attrs=[("dims", [1]), ("keepdim", 0)])
    w.case("add_empty", "add", [e, t([1.0])], [e + 1.0], EXACT)

    sm = t([[1.0, 2.0, 3.0, 4.0], [NAN, 1.0, 2.0, 3.0], [INF, 1.0, -1.0, 2.0], [-INF, 0.0, 1.0, 2.0],
            [-INF, -INF, -INF, -INF], [1e30, 1e30, -1e30, 0.0], [88.0, 89.0, 90.0, -200.0], [0.0, -0.0, 1e-40, 0.0]])
    for op, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        w.case(f"{op}_rows_edges", op, [sm], [fn(sm, 1)], ("close", 1e-6, 1e-7), attrs=[("dim", 1)])
        rr = randn(gen, 4, 6, 5) * 10
        w.case(f"{op}_dim0", op, [rr], [fn(rr, 0)], ("close", 1e-5, 1e-7), attrs=[("dim", 0)])
        w.case(f"{op}_empty_rows", op, [e.t()], [fn(e.t(), 1)], EXACT, attrs=[("dim", 1)])

    x = randn(gen, 4, 3, 8) * 3 + 1
    wt, bs = randn(gen, 3, 8) * 0.1 + 1, randn(gen, 3, 8) * 0.1
    w.case("layer_norm_2d_affine", "layer_norm", [x, wt, bs], [F.layer_norm(x, (3, 8), wt, bs, 1e-5)], CLOSE_NORM,
           attrs=[("n_norm", 2), ("eps", 1e-5)])
    w.case("layer_norm_plain", "layer_norm", [x], [F.layer_norm(x, (8,), None, None, 1e-5)], CLOSE_NORM,
           attrs=[("n_norm", 1), ("eps", 1e-5)])
    ln_edge = t([[1.0, 1.0, 1.0, 1.0], [NAN, 1.0, 2.0, 3.0], [INF, 1.0, 2.0, 3.0], [1e-40, 0.0, -1e-40, 0.0],
                 [1e20, -1e20, 1e20, -1e20]])
    w.case("layer_norm_rows_edges", "layer_norm", [ln_edge], [F.layer_norm(ln_edge, (4,), None, None, 1e-5)],
           CLOSE_NORM, attrs=[("n_norm", 1), ("eps", 1e-5)])
    w.case("rms_norm_affine", "rms_norm", [x, wt[0]], [F.rms_norm(x, (8,), wt[0], 1e-6)], CLOSE_NORM,
           attrs=[("n_norm", 1), ("eps", 1e-6)])

    # matmul: 1-D, batched with broadcasting, an empty inner dim, special values.
    m1, m2 = randn(gen, 2, 3, 5), randn(gen, 5, 4)
    v = randn(gen, 5)
    w.case("matmul_batched_broadcast", "matmul", [m1, m2], [m1 @ m2], CLOSE_REDUCE)
    w.case("matmul_matrix_vector", "matmul", [m1, v], [m1 @ v], CLOSE_REDUCE)
    w.case("matmul_vector_vector", "matmul", [v, v], [v @ v], CLOSE_REDUCE)
    w.case("matmul_empty_inner", "matmul", [torch.zeros(2, 0), torch.zeros(0, 3)], [torch.zeros(2, 0) @ torch.zeros(0, 3)],
           EXACT)
    ms = t([[NAN, 1.0], [INF, 1.0], [INF, -INF], [0.0, 0.0], [1e-40, 1e-40]])
    mt = t([[1.0, 0.0, 2.0], [1.0, 1.0, 0.0]])
    w.case("matmul_edges", "matmul", [ms, mt], [ms @ mt], EXACT)
    w.case("matmul_i64", "matmul", [ri.to(I64), ri.to(I64).t()], [ri.to(I64) @ ri.to(I64).t()], EXACT)
    lw, lb = randn(gen, 6, 5), randn(gen, 6)
    w.case("linear_bias", "linear", [m1, lw, lb], [F.linear(m1, lw, lb)], CLOSE_REDUCE)
    w.case("linear_no_bias", "linear", [m1, lw], [F.linear(m1, lw)], CLOSE_REDUCE)

    logits = randn(gen, 6, 5) * 3
    logits[1, 2] = 1e30
    logits[2] = -1e30
    target = t([0, 2, 4, -100, 1, 3], I64)
    w.case("cross_entropy_ignore_index", "cross_entropy", [logits, target], [F.cross_entropy(logits, target)],
           ("close", 1e-5, 1e-6))
    ninf = logits.clone()
    ninf[0, 1] = -INF
    w.case("cross_entropy_minus_inf_logit", "cross_entropy", [ninf, target], [F.cross_entropy(ninf, target)],
           ("close", 1e-5, 1e-6))
    w.case("cross_entropy_all_ignored", "cross_entropy", [logits, torch.full((6,), -100, dtype=I64)],
           [F.cross_entropy(logits, torch.full((6,), -100, dtype=I64))], EXACT)
    nanl = logits.clone()
    nanl[3, 0] = NAN  # an ignored row's NaN: PyTorch leaves it out
    w.case("cross_entropy_nan_in_ignored_row", "cross_entropy", [nanl, target], [F.cross_entropy(nanl, target)],
           ("close", 1e-5, 1e-6))


# ---------------------------------------------------------------- indexing and shapes
def gen_indexing(w, gen):
    src = t(EDGE[:24], shape=(4, 6))
    idx = t([[0, 5, 5, 1], [2, 2, 0, 3], [5, 4, 3, 2], [1, 1, 1, 1]], I64)
    w.case("gather_dim1", "gather", [src, idx], [torch.gather(src, 1, idx)], EXACT, attrs=[("dim", 1)])
    idx0 = t([[3, 0, 1, 2, 0, 3]], I64)
    w.case("gather_dim0", "gather", [src, idx0], [torch.gather(src, 0, idx0)], EXACT, attrs=[("dim", 0)])
    sel = t([3, 0, 3], I64)
    w.case("index_select_dim0", "index_select", [src, sel], [torch.index_select(src, 0, sel)], EXACT, attrs=[("dim", 0)])
    w.case("index_select_dim1_i32", "index_select", [src, sel.to(I32)], [torch.index_select(src, 1, sel.to(I32))],
           EXACT, attrs=[("dim", 1)])
    w.case("index_select_empty", "index_select", [src, t([], I64)], [torch.index_select(src, 0, t([], I64))], EXACT,
           attrs=[("dim", 0)])
    emb_ids = t([[1, 3, 1], [0, 0, 2]], I64)
    w.case("embedding", "embedding", [src, emb_ids], [F.embedding(emb_ids, src)], EXACT)
    base = t([[0.0, -0.0, 1.0, NAN], [1e-40, 2.0, -INF, 0.5]])
    sidx = t([[0, 0, 3, 1, 1], [2, 2, 2, 0, 3]], I64)
    ssrc = t([[-0.0, -0.0, 1.0, 1e-45, 2.0], [0.25, 0.25, INF, -1.0, 3.0]])
    w.case("scatter_add_dim1", "scatter_add", [base, sidx, ssrc], [base.scatter_add(1, sidx, ssrc)], EXACT,
           attrs=[("dim", 1)])
    sidx0 = t([[1, 0, 1, 1]], I64)
    w.case("scatter_add_dim0", "scatter_add", [base, sidx0, ssrc[:1, :4].contiguous()],
           [base.scatter_add(0, sidx0, ssrc[:1, :4])], EXACT, attrs=[("dim", 0)])
    sq = t(EDGE[:25], shape=(5, 5))
    for k in (-1, 0, 2):
        w.case(f"tril_{num(k).replace('-', 'm')}", "tril", [sq], [torch.tril(sq, k)], EXACT, attrs=[("diagonal", k)])
        w.case(f"triu_{num(k).replace('-', 'm')}", "triu", [sq], [torch.triu(sq, k)], EXACT, attrs=[("diagonal", k)])
    w.case("cat_dim1", "cat", [src, src[:, :2].contiguous(), torch.zeros(4, 0)],
           [torch.cat([src, src[:, :2], torch.zeros(4, 0)], 1)], EXACT, attrs=[("dim", 1)])
    w.case("flip_both", "flip", [src], [torch.flip(src, (0, 1))], EXACT, attrs=[("dims", [0, 1])])
    w.case("pad_constant", "pad", [src], [F.pad(src, (1, 2, 0, 1), value=-0.0)], EXACT,
           attrs=[("pads", [1, 2, 0, 1]), ("value", -0.0)])
    w.case("pad_negative_crops", "pad", [src], [F.pad(src, (-1, 1), value=NAN)], EXACT,
           attrs=[("pads", [-1, 1]), ("value", NAN)])


# ---------------------------------------------------------------- the bundled models
# Inputs as examples/models/model_inputs.c makes them (normal data; weights (in, out) scaled by
# 1/sqrt(fan_in); LayerNorm gains near 1), from torch's generator, rounded to f32. The loss is
# sum(model(inputs) * r) with r a fixed normal tensor (the last input), so every output element
# weighs in. Forward and gradients are computed in f64 from the f32 inputs, then rounded to
# f32: the expectation is the exact answer to f32 precision, and tc (computing in f32) is held to
# a tolerance relative to the largest magnitude of each result (MODEL_TOL), because sums of
# products in a different order differ in the last bits, and elementwise relative error is
# meaningless for gradient elements that cancel to near zero.
MODEL_TOL = ("close", 1e-4, 1e-5)  # the runner scales ATOL by max |want| of the tensor


def model_inputs(gen, specs):
    out = []
    for kind, shape, mean, std in specs:
        if kind == "w":
            fan_in = shape[0]
            out.append(randn(gen, *shape) / math.sqrt(fan_in))
        elif kind == "b":
            out.append(randn(gen, *shape[1:]) / math.sqrt(shape[0]))
        else:
            out.append(randn(gen, *shape) * std + mean)
    return out


def n(shape, mean=0.0, std=1.0):
    return ("n", shape, mean, std)


def weight(fan_in, fan_out):
    return ("w", (fan_in, fan_out), 0, 0)


def bias(fan_in, size):
    return ("b", (fan_in, size), 0, 0)


def attn_block(x, ln1_w, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_w, ln2_b, w_1, b_1, w_2, b_2):
    # The bench's PyTorch block (nn.Linear's (out, in) weights): tc's weights are (in, out).
    f = tcmp.make_attn_block(x.device, False)
    return f(x, ln1_w, ln1_b, w_qkv.t(), b_qkv, w_o.t(), b_o, ln2_w, ln2_b, w_1.t(), b_1, w_2.t(), b_2)


MODELS = {  # name: (inputs at size "test", the function on tc's (in, out) weights)
    "ln_gelu": ([n((8, 32)), n((32,), 1.0, 0.1), n((32,), 0.0, 0.1)], tcmp.ln_gelu),
    "softmax": ([n((16, 64))], tcmp.softmax),
    "mlp": ([n((8, 16)), weight(16, 32), bias(16, 32), weight(32, 16), bias(32, 16)],
            lambda x, w1, b1, w2, b2: tcmp.mlp(x, w1.t(), b1, w2.t(), b2)),
    "tiny_mlp_b1": ([n((1, 64))] + [weight(64, 64) if i % 2 == 0 else bias(64, 64) for i in range(8)],
                    lambda x, *p: tcmp.tiny_mlp_b1(x, *[q.t() if q.dim() == 2 else q for q in p])),
    "attn_block": ([n((1, 8, 48)), n((48,), 1.0, 0.1), n((48,), 0.0, 0.1), weight(48, 144), bias(48, 144),
                    weight(48, 48), bias(48, 48), n((48,), 1.0, 0.1), n((48,), 0.0, 0.1), weight(48, 192),
                    bias(48, 192), weight(192, 48), bias(192, 48)], attn_block),
}


def gen_models(w, gen):
    for name, (specs, fn) in MODELS.items():
        ins = model_inputs(gen, specs)
        leaves = [x.to(F64).requires_grad_(True) for x in ins]
        y = fn(*leaves)
        r = randn(gen, *y.shape)
        loss = (y * r.to(F64)).sum()
        grads = torch.autograd.grad(loss, leaves)
        w.case(f"{name}_grad", f"model:{name}", ins + [r], [y.detach().to(F32)], MODEL_TOL,
               grads=[g.to(F32) for g in grads])
    # train_mlp: the model is a training step (forward, gradients, SGD update) compiled as one
    # function; its output (the loss and the updated parameters) is the expectation.
    ins = model_inputs(gen, [n((8, 16)), n((8, 16)), weight(16, 32), bias(16, 32), weight(32, 16), bias(32, 16)])
    x, target, w1, b1, w2, b2 = [v.to(F64) for v in ins]
    out = tcmp.train_mlp(x, target, w1.t(), b1, w2.t(), b2)
    # torch_compare's step updates (out, in) weights; tc's output lays W1 and W2 out (in, out).
    sizes = [1, 32 * 16, 32, 16 * 32, 16]
    parts = list(torch.split(out, sizes))
    parts[1] = parts[1].reshape(32, 16).t().reshape(-1)
    parts[3] = parts[3].reshape(16, 32).t().reshape(-1)
    w.case("train_mlp_step", "model:train_mlp", ins, [torch.cat(parts).to(F32)], MODEL_TOL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "data", "expected.txt"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(20261201)
    w = Writer()
    gen_elementwise(w)
    gen_casts(w)
    gen_reductions(w, gen)
    gen_indexing(w, gen)
    gen_models(w, gen)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(w.lines) + "\n")
    print(f"{args.out}: {w.count} cases, {os.path.getsize(args.out)} bytes (torch {torch.__version__})")


if __name__ == "__main__":
    main()
