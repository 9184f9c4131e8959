/* schedule_kernel.c — builds one kernel: the ops that compute a realized value from realized
 * buffers, inlining producers at the index they are read. Reductions met along the way become
 * inner loops of the kernel (several loops in one kernel; a value needed in a later loop is
 * recomputed there from loads, never stored). Ops that do not depend on the inner var are
 * hoisted out of the inner loops, then everything is ordered so each loop runs after the loops
 * whose results it uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"

typedef struct memo {
  int32_t value, loop, op;
  sched_access acc;
} memo;

typedef struct kbuild {
  sched_ctx *c;
  const tc_graph *g;
  int32_t root;
  int32_t mm;      /* matmul node value of a MATMUL kernel, or -1 */
  sched_access mm_acc;   /* where the epilogue reads the product */
  int32_t n_outer, outer[TC_MAX_RANK], inner;
  int32_t cur_loop, n_loops;
  sched_op *ops;
  int32_t *lvl; /* per op: -1 when usable anywhere, else the inner loop it lives in */
  int32_t n_ops, cap_ops;
  memo *memos;
  int32_t n_memos, cap_memos;
  int32_t bufs[64];
  bool loaded[64], stored[64];
  int32_t n_bufs;
  uint64_t prims[2]; /* prims inlined, for the kernel's name */
  int32_t zero_buf;  /* buffer the kernel accumulates into (zeroed before it runs), or -1 */
  int32_t store_loop; /* the inner loop that stores the root, or -1 */
  sched_access root_acc;    /* where the root is stored */
  int32_t *after;     /* per op: an op it must follow though it reads none of its values, or -1 */
  /* The one value parked in the root's buffer for the store loop (emit_stashed): its source op
   * and the store that parks it. */
  bool stashed;
  int32_t stash_src, stash_op;
  int32_t reductions[64];
  int32_t n_reductions;
  bool oom;
} kbuild;

static bool fail(kbuild *k, int32_t value, const char *fmt, ...) TC_PRINTF(3, 4);
static bool fail(kbuild *k, int32_t value, const char *fmt, ...) {
  k->c->fail_value = value;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->c->why, sizeof k->c->why, fmt, ap);
  va_end(ap);
  return false;
}

static sched_index index_none(void) {
  sched_index ix;
  memset(&ix, 0, sizeof ix);
  ix.offset = -1;
  for (int v = 0; v < SCHED_MAX_VARS; v++) ix.strides[v] = -1;
  ix.indirect = -1;
  ix.indirect_stride = -1;
  return ix;
}

static sched_index index_of(const kbuild *k, const aff *a, int32_t ind, int32_t ind_coef) {
  sched_index ix = index_none();
  ix.offset = a->c;
  for (int32_t v = 0; v <= k->n_outer; v++) ix.strides[v] = a->k[v];
  ix.indirect = ind;
  ix.indirect_stride = ind >= 0 ? ind_coef : -1;
  return ix;
}

static int32_t op_new(kbuild *k, int32_t kind, tc_dtype dtype, int32_t lvl) {
  if (k->n_ops == k->cap_ops) {
    int32_t cap = k->cap_ops ? 2 * k->cap_ops : 64;
    sched_op *ops = realloc(k->ops, sizeof *ops * (size_t)cap);
    int32_t *l = ops ? realloc(k->lvl, sizeof *l * (size_t)cap) : NULL;
    if (ops) k->ops = ops;
    if (l) k->lvl = l;
    int32_t *af = l ? realloc(k->after, sizeof *af * (size_t)cap) : NULL;
    if (!ops || !l || !af) { k->oom = true; return -1; }
    k->after = af;
    k->cap_ops = cap;
  }
  int32_t id = k->n_ops++;
  sched_op *op = &k->ops[id];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->dtype = dtype;
  op->loop = lvl;
  op->prim = 0;
  op->args[0] = op->args[1] = op->args[2] = -1;
  op->buffer = -1;
  op->index = index_none();
  k->lvl[id] = lvl;
  k->after[id] = -1;
  return id;
}

/* The level of an op over operands a, b, c (op ids, -1 unused): inside a loop when any is. */
static int32_t lvl_of_args(const kbuild *k, int32_t a, int32_t b, int32_t c) {
  int32_t args[3] = {a, b, c}, lvl = -1;
  for (int i = 0; i < 3; i++)
    if (args[i] >= 0 && k->lvl[args[i]] >= 0) lvl = k->lvl[args[i]];
  return lvl;
}

static int32_t op_prim(kbuild *k, tc_prim prim, tc_dtype dtype, int32_t a, int32_t b, int32_t c3) {
  if (a < 0) return -1;
  int32_t lvl = lvl_of_args(k, a, b, c3);
  int32_t id = op_new(k, TC_KOP_PRIM, dtype, lvl);
  if (id < 0) return -1;
  k->ops[id].prim = prim;
  k->ops[id].args[0] = a;
  k->ops[id].args[1] = b;
  k->ops[id].args[2] = c3;
  return id;
}

static int32_t op_const(kbuild *k, tc_dtype dtype, double v) {
  int32_t id = op_new(k, TC_KOP_CONST, dtype, -1);
  if (id < 0) return -1;
  k->ops[id].fconst = v;
  k->ops[id].iconst = (dtype == TC_F32 || dtype == TC_F64 || dtype == TC_BOOL) ? 0 : (int64_t)v;
  return id;
}

/* The level of an op reading an index: inside the current loop when the index moves with the
 * inner var (or its indirect value lives there). */
static int32_t index_lvl(const kbuild *k, const aff *a, int32_t ind) {
  if (aff_uses_var(a, k->n_outer) && k->inner >= 0) return k->cur_loop;
  return ind >= 0 ? k->lvl[ind] : -1;
}

/* Kernel buffer index of schedule buffer b. */
static int32_t kbuf(kbuild *k, int32_t b, bool store) {
  for (int32_t i = 0; i < k->n_bufs; i++)
    if (k->bufs[i] == b) {
      if (store) k->stored[i] = true;
      else k->loaded[i] = true;
      return i;
    }
  if (k->n_bufs == 64) { k->oom = true; return 0; }
  k->bufs[k->n_bufs] = b;
  k->loaded[k->n_bufs] = !store;
  k->stored[k->n_bufs] = store;
  return k->n_bufs++;
}

static void note_prim(kbuild *k, int32_t prim) { k->prims[prim / 64] |= 1ull << (prim % 64); }

static int32_t memo_find(const kbuild *k, int32_t value, const sched_access *a) {
  for (int32_t i = k->n_memos - 1; i >= 0; i--) {
    const memo *m = &k->memos[i];
    if (m->value == value && (m->loop == -1 || m->loop == k->cur_loop) && access_same(&m->acc, a)) return m->op;
  }
  return -1;
}

static void memo_add(kbuild *k, int32_t value, const sched_access *a, int32_t op) {
  if (op < 0) return;
  if (k->n_memos == k->cap_memos) {
    int32_t cap = k->cap_memos ? 2 * k->cap_memos : 64;
    memo *m = realloc(k->memos, sizeof *m * (size_t)cap);
    if (!m) { k->oom = true; return; }
    k->memos = m;
    k->cap_memos = cap;
  }
  k->memos[k->n_memos++] = (memo){value, k->lvl[op], op, *a};
}

static bool is_elementwise(tc_prim p) { return tck_prim_is_elementwise(p); }
static bool is_view(tc_prim p) {
  return p == TC_PRIM_RESHAPE || p == TC_PRIM_BROADCAST_IN_DIM || p == TC_PRIM_PERMUTE || p == TC_PRIM_SLICE ||
         p == TC_PRIM_REVERSE;
}
static bool is_reduction(tc_prim p) { return p >= TC_PRIM_REDUCE_SUM && p <= TC_PRIM_ARGMIN; }

static int32_t emit(kbuild *k, int32_t v, const sched_access *a);
static int32_t find_reduction(sched_ctx *c, int32_t v, int32_t root, int depth);

/* v is a reduction computed in this kernel, possibly seen through views (a broadcast row sum). */
static bool is_reduction_view(sched_ctx *c, int32_t v, int32_t root) {
  for (int guard = 0; guard < 64; guard++) {
    const tc_node *n = graph_value_node(c->g, v);
    if (!n || (c->realized[v] && v != root)) return false;
    if (n->prim >= TC_PRIM_REDUCE_SUM && n->prim <= TC_PRIM_ARGMIN) return true;
    if (!(n->prim == TC_PRIM_RESHAPE || n->prim == TC_PRIM_BROADCAST_IN_DIM || n->prim == TC_PRIM_PERMUTE ||
          n->prim == TC_PRIM_SLICE || n->prim == TC_PRIM_REVERSE))
      return false;
    v = n->in[0];
  }
  return false;
}

static int32_t emit_load(kbuild *k, int32_t v, const sched_access *a) {
  sched_ctx *c = k->c;
  int32_t b = c->s->value_buf[v];
  if (b < 0) { fail(k, -1, "value %d has no buffer", v); return -1; }
  aff addr;
  int32_t ind, ind_coef;
  if (!access_address(c, a, graph_value_type(k->g, v), &addr, &ind, &ind_coef)) { c->fail_value = -1; return -1; }
  int32_t id = op_new(k, TC_KOP_LOAD, c->s->bufs[b].dtype, index_lvl(k, &addr, ind));
  if (id < 0) return -1;
  k->ops[id].buffer = kbuf(k, b, false);
  k->ops[id].index = index_of(k, &addr, ind, ind_coef);
  return id;
}

/* The reduction node n (value v) read at a: a new inner loop folding its input over the row. */
static int32_t emit_reduction(kbuild *k, int32_t v, const tc_node *n, const sched_access *a) {
  sched_ctx *c = k->c;
  const tc_vtype *tx = graph_value_type(k->g, n->in[0]);
  int32_t d0, len;
  if (n->prim == TC_PRIM_ARGMAX || n->prim == TC_PRIM_ARGMIN) {
    d0 = (int32_t)n->iattrs[0];
    len = 1;
  } else {
    d0 = (int32_t)n->iattrs[0];
    len = n->n_iattrs;
    for (int32_t i = 1; i < n->n_iattrs; i++)
      if (n->iattrs[i] != n->iattrs[i - 1] + 1) {
        /* Realized, it becomes one kernel per block of adjacent dims (build_split_reduction). */
        fail(k, v == k->root ? -2 : v, "%s over dims that are not adjacent: one inner loop cannot walk them",
             prim_name(n->prim));
        return -1;
      }
  }
  if (k->inner < 0) {
    fail(k, v, "a %s inside a kernel without rows", prim_name(n->prim));
    return -1;
  }
  int32_t extent = sx_prod(c, tx, d0, d0 + len);
  if (!sx_equal(c, extent, k->inner)) {
    fail(k, v, "%s reduces a different number of elements than the kernel's rows hold", prim_name(n->prim));
    return -1;
  }
  if (access_uses_var(a, k->n_outer)) {
    fail(k, v, "%s is read at an index that moves along the row", prim_name(n->prim));
    return -1;
  }
  /* Result dims map to input dims around the reduced block; runs must not straddle it. */
  sched_access r = *a;
  for (int32_t i = 0; i < r.n; i++)
    if (r.s[i].lo < d0 && r.s[i].hi > d0) {
      if (!access_split(c, &r, i, &n->out)) { c->fail_value = v; return -1; }
      i = -1;
    }
  sched_access x;
  access_clear(&x);
  for (int32_t i = 0; i < r.n; i++) {
    seg s = r.s[i];
    if (s.lo >= d0) { s.lo += len; s.hi += len; }
    x.s[x.n++] = s;
  }
  seg rs;
  memset(&rs, 0xff, sizeof rs);
  rs.lo = d0;
  rs.hi = d0 + len;
  rs.L = aff_var(c, k->n_outer);
  rs.ind = -1;
  rs.ind_coef = -1;
  x.s[x.n++] = rs;
  for (int32_t i = x.n - 1; i > 0 && x.s[i].lo < x.s[i - 1].lo; i--) {
    seg t = x.s[i];
    x.s[i] = x.s[i - 1];
    x.s[i - 1] = t;
  }
  int32_t saved = k->cur_loop;
  int32_t loop = k->n_loops++;
  k->cur_loop = loop;
  int32_t xv = emit(k, n->in[0], &x);
  k->cur_loop = saved;
  if (xv < 0) return -1;
  int32_t id = op_new(k, TC_KOP_REDUCE, n->out.dtype, loop);
  if (id < 0) return -1;
  k->ops[id].prim = n->prim;
  k->ops[id].args[0] = xv;
  k->lvl[id] = -1; /* usable after its loop, anywhere */
  if (k->n_reductions < 64) k->reductions[k->n_reductions++] = v;
  return id;
}

/* 0 <= iv < size as a bool op, for graph node value v (a GATHER or SCATTER_ADD). With index
 * checks (ABI 2.3) a TC_KOP_INDEX_CHECK, which also records the call's first out-of-range value
 * in the schedule's record with site = v's node index; otherwise plain compares. */
static int32_t emit_in_range(kbuild *k, int32_t v, int32_t iv, int32_t zero, int32_t size) {
  sched_ctx *c = k->c;
  const int32_t record = c->s->index_error_buf;
  if (record < 0)
    return op_prim(k, TC_PRIM_AND, TC_BOOL, op_prim(k, TC_PRIM_GE, TC_BOOL, iv, zero, -1),
                   op_prim(k, TC_PRIM_LT, TC_BOOL, iv, size, -1), -1);
  if (iv < 0 || size < 0) return -1;
  int32_t id = op_new(k, TC_KOP_INDEX_CHECK, TC_BOOL, lvl_of_args(k, iv, size, -1));
  if (id < 0) return -1;
  k->ops[id].args[0] = iv;
  k->ops[id].args[1] = size;
  k->ops[id].buffer = kbuf(k, record, true);
  k->ops[id].iconst = v - c->g->n_inputs;
  return id;
}

static int32_t emit_gather(kbuild *k, int32_t v, const tc_node *n, const sched_access *a) {
  sched_ctx *c = k->c;
  int32_t d = (int32_t)n->iattrs[0];
  int32_t iv = emit(k, n->in[1], a);
  if (iv < 0) return -1;
  if (graph_value_type(k->g, n->in[1])->dtype != TC_I64) iv = op_prim(k, TC_PRIM_CONVERT, TC_I64, iv, -1, -1);
  const tc_vtype *tx = graph_value_type(k->g, n->in[0]);
  /* Out of range reads 0: ok = 0 <= i < size; the load itself uses a clamped index. */
  int32_t zero = op_const(k, TC_I64, 0);
  int32_t size = op_new(k, TC_KOP_INDEX, TC_I64, -1);
  if (size < 0 || zero < 0) return -1;
  k->ops[size].index.offset = sx_g(c, tx->shape[d]);
  int32_t ok = emit_in_range(k, v, iv, zero, size);
  int32_t safe = op_prim(k, TC_PRIM_WHERE, TC_I64, ok, iv, zero);
  if (safe < 0) return -1;
  sched_access x = *a;
  /* A read that merges the gathered dim with others (a reduction over several dims, a
   * flatten) has no per-dim index to put the gathered one in: realize the gather itself, and
   * the reader reads its buffer. (Realizing the index, as before, could not help: it is the
   * read of the gather's result that does not split.) */
  if (!access_isolate(c, &x, d, &n->out)) { c->fail_value = v; return -1; }
  for (int32_t i = 0; i < x.n; i++)
    if (x.s[i].lo == d) {
      if (x.s[i].ind >= 0) { fail(k, n->in[0], "gather of a gather along one dim"); return -1; }
      x.s[i].L = aff_zero();
      x.s[i].ind = safe;
      x.s[i].ind_coef = sx_c(c, 1);
    }
  int32_t xv = emit(k, n->in[0], &x);
  if (xv < 0) return -1;
  int32_t z = op_const(k, n->out.dtype, 0);
  return op_prim(k, TC_PRIM_WHERE, n->out.dtype, ok, xv, z);
}

static int32_t emit_node(kbuild *k, int32_t v, const tc_node *n, const sched_access *a) {
  sched_ctx *c = k->c;
  tc_prim p = n->prim;
  if (is_elementwise(p)) {
    /* Operands that need reductions first: their loops then exist when the others are
     * emitted, so work shared with those loops can be reused (emit_stashed). */
    int32_t args[3] = {-1, -1, -1};
    for (int pass = 0; pass < 2; pass++)
      for (int32_t i = 0; i < n->n_in && i < 3; i++) {
        bool reduces = is_reduction_view(c, n->in[i], k->root);
        if (reduces != (pass == 0) || args[i] >= 0) continue;
        if ((args[i] = emit(k, n->in[i], a)) < 0) return -1;
      }
    note_prim(k, p);
    return op_prim(k, p, n->out.dtype, args[0], args[1], args[2]);
  }
  if (is_view(p)) {
    sched_access in;
    if (!access_through_view(c, n, a, &in)) {
      /* Realize the view's input (then any view of it is affine); when that is already a
       * buffer, realize the view itself. */
      c->fail_value = c->realized[n->in[0]] ? v : n->in[0];
      return -1;
    }
    return emit(k, n->in[0], &in);
  }
  if (is_reduction(p)) {
    note_prim(k, p);
    return emit_reduction(k, v, n, a);
  }
  switch (p) {
  case TC_PRIM_CONSTANT: {
    if (n->iattrs[0] < 0) return op_const(k, n->out.dtype, n->fattr);
    int32_t id = op_new(k, TC_KOP_INDEX, TC_I64, -1);
    if (id < 0) return -1;
    k->ops[id].index.offset = sx_g(c, (int32_t)n->iattrs[0]);
    return n->out.dtype == TC_I64 ? id : op_prim(k, TC_PRIM_CONVERT, n->out.dtype, id, -1, -1);
  }
  case TC_PRIM_IOTA: {
    int32_t d = (int32_t)n->iattrs[0];
    sched_access x = *a;
    if (!access_isolate(c, &x, d, &n->out)) { c->fail_value = v; return -1; }
    aff idx = aff_zero();
    for (int32_t i = 0; i < x.n; i++)
      if (x.s[i].lo == d) {
        if (x.s[i].ind >= 0) { fail(k, v, "iota read at a gathered index"); return -1; }
        idx = x.s[i].L;
      }
    int32_t id = op_new(k, TC_KOP_INDEX, TC_I64, index_lvl(k, &idx, -1));
    if (id < 0) return -1;
    k->ops[id].index = index_of(k, &idx, -1, -1);
    return n->out.dtype == TC_I64 ? id : op_prim(k, TC_PRIM_CONVERT, n->out.dtype, id, -1, -1);
  }
  case TC_PRIM_RANDOM: {
    aff addr;
    int32_t ind, ind_coef;
    if (!access_address(c, a, &n->out, &addr, &ind, &ind_coef) || ind >= 0) {
      fail(k, v, "random read at a gathered index");
      return -1;
    }
    addr.c = sx_add(c, addr.c, sx_c(c, n->iattrs[1]));
    int32_t id = op_new(k, TC_KOP_RANDOM, n->out.dtype, index_lvl(k, &addr, -1));
    if (id < 0) return -1;
    k->ops[id].index = index_of(k, &addr, -1, -1);
    k->ops[id].iconst = n->iattrs[0];
    note_prim(k, p);
    return id;
  }
  case TC_PRIM_GATHER: note_prim(k, p); return emit_gather(k, v, n, a);
  default:
    fail(k, v, "%s must be realized before it is read", prim_name(p));
    return -1;
  }
}

/* Same element: equal addresses in a contiguous layout of type t. */
static bool access_equiv(sched_ctx *c, const sched_access *a, const sched_access *b, const tc_vtype *t) {
  if (access_same(a, b)) return true;
  aff x, y;
  int32_t xi, xc, yi, yc;
  if (!access_address(c, a, t, &x, &xi, &xc) || !access_address(c, b, t, &y, &yi, &yc)) return false;
  if (xi >= 0 || yi >= 0 || !sx_equal(c, x.c, y.c)) return false;
  for (int v = 0; v < SCHED_MAX_VARS; v++)
    if (!sx_equal(c, x.k[v], y.k[v])) return false;
  return true;
}

/* True when op (in an inner loop) computes a transcendental function. */
static bool op_heavy(const kbuild *k, int32_t op, int depth) {
  if (op < 0 || depth > 64 || k->lvl[op] < 0) return false;
  const sched_op *o = &k->ops[op];
  if (o->kind != TC_KOP_PRIM) return false;
  if (tck_prim_is_transcendental(o->prim)) return true;
  for (int i = 0; i < 3; i++)
    if (op_heavy(k, o->args[i], depth + 1)) return true;
  return false;
}

/* In the store loop, a transcendental value an earlier loop already computed at the same
 * element (softmax's exp(x - max)) is parked in the root's buffer by that loop and read back
 * here instead of computed twice: the row is still in cache.
 *
 * Every stash lands at the same place: the root's buffer at the root's index (the store loop's
 * element). So a kernel stashes at most one value: a second one would be stored at that very
 * index, by its own loop or by the same one, and overwrite the first before the store loop reads
 * it back (softmax(softmax(x) * x) + softmax(x): both exps are computed in the inner softmax's
 * sum loop, and whichever store came last was read back as both). Other values are recomputed. */
static int32_t emit_stashed(kbuild *k, int32_t v, const sched_access *a) {
  sched_ctx *c = k->c;
  if (k->store_loop < 0 || k->cur_loop != k->store_loop || !access_same(a, &k->root_acc)) return -1;
  const tc_vtype *tv = graph_value_type(k->g, v), *tr = graph_value_type(k->g, k->root);
  if (tv->dtype != tr->dtype || tv->rank != tr->rank || memcmp(tv->shape, tr->shape, sizeof(int32_t) * (size_t)tv->rank))
    return -1;
  int32_t src = -1;
  for (int32_t i = k->n_memos - 1; i >= 0 && src < 0; i--) {
    const memo *m = &k->memos[i];
    if (m->value == v && m->loop >= 0 && m->loop != k->cur_loop && access_same(&m->acc, a) && op_heavy(k, m->op, 0))
      src = m->op;
  }
  if (src < 0 || (k->stashed && k->stash_src != src)) return -1;
  int32_t b = c->s->value_buf[k->root];
  aff addr;
  int32_t ind, ind_coef;
  if (!access_address(c, a, tr, &addr, &ind, &ind_coef) || ind >= 0) return -1;
  if (!k->stashed) {
    int32_t st = op_new(k, TC_KOP_STORE, tr->dtype, k->lvl[src]);
    if (st < 0) return -1;
    k->ops[st].args[0] = src;
    k->ops[st].buffer = kbuf(k, b, true);
    k->ops[st].index = index_of(k, &addr, -1, -1);
    k->stashed = true;
    k->stash_src = src;
    k->stash_op = st;
  }
  int32_t ld = op_new(k, TC_KOP_LOAD, tr->dtype, k->cur_loop);
  if (ld < 0) return -1;
  k->ops[ld].buffer = kbuf(k, b, false);
  k->ops[ld].index = index_of(k, &addr, -1, -1);
  k->after[ld] = k->stash_op;
  return ld;
}

static int32_t emit(kbuild *k, int32_t v, const sched_access *a) {
  if (k->oom) return -1;
  int32_t hit = memo_find(k, v, a);
  if (hit >= 0) return hit;
  hit = emit_stashed(k, v, a);
  if (hit >= 0) {
    memo_add(k, v, a, hit);
    return hit;
  }
  sched_ctx *c = k->c;
  const tc_node *n = graph_value_node(k->g, v);
  int32_t id;
  if (v == k->mm) {
    if (!access_equiv(c, a, &k->mm_acc, &n->out)) {
      fail(k, v, "the epilogue reads the product at another index");
      return -1;
    }
    id = op_new(k, TC_KOP_ACC, n->out.dtype, -1);
  } else if (!n || (c->realized[v] && v != k->root)) {
    id = emit_load(k, v, a);
  } else {
    id = emit_node(k, v, n, a);
  }
  memo_add(k, v, a, id);
  return id;
}

/* True when v depends on target through elementwise ops, reshapes and permutes. */
static bool reaches(const tc_graph *g, int32_t v, int32_t target) {
  if (v == target) return true;
  if (v < target) return false;
  const tc_node *n = graph_value_node(g, v);
  if (!n || !(is_elementwise(n->prim) || n->prim == TC_PRIM_RESHAPE || n->prim == TC_PRIM_PERMUTE)) return false;
  for (int32_t i = 0; i < n->n_in; i++)
    if (reaches(g, n->in[i], target)) return true;
  return false;
}

/* ---------------------------------------------------------------- domains */
/* The first reduction reachable from v without crossing a realized value. */
static int32_t find_reduction(sched_ctx *c, int32_t v, int32_t root, int depth) {
  const tc_node *n = graph_value_node(c->g, v);
  if (!n || (c->realized[v] && v != root) || depth > 4096) return -1;
  if (is_reduction(n->prim)) return v;
  if (n->prim == TC_PRIM_MATMUL) return -1;
  for (int32_t i = 0; i < n->n_in; i++) {
    int32_t r = find_reduction(c, n->in[i], root, depth + 1);
    if (r >= 0) return r;
  }
  return -1;
}

static int32_t reduction_extent(sched_ctx *c, const tc_node *n) {
  const tc_vtype *tx = graph_value_type(c->g, n->in[0]);
  if (n->prim == TC_PRIM_ARGMAX || n->prim == TC_PRIM_ARGMIN)
    return sx_g(c, tx->shape[n->iattrs[0]]);
  int32_t e = sx_c(c, 1);
  for (int32_t i = 0; i < n->n_iattrs; i++) e = sx_mul(c, e, sx_g(c, tx->shape[n->iattrs[i]]));
  return e < 0 ? sx_c(c, 0) : e;
}

static void set_domain(kbuild *k, int32_t n_outer, const int32_t *outer, int32_t inner) {
  sched_ctx *c = k->c;
  k->n_outer = n_outer;
  for (int32_t d = 0; d < n_outer; d++) k->outer[d] = outer[d];
  k->inner = inner;
  c->n_vars = n_outer + 1;
  for (int32_t d = 0; d < n_outer; d++) c->var_extent[d] = outer[d];
  c->var_extent[n_outer] = inner >= 0 ? inner : sx_c(c, 1);
}

/* Appends one segment: dims [lo, hi) of the value, read as one run on loop var `var`. */
static void access_push(sched_ctx *c, sched_access *a, int32_t lo, int32_t hi, int32_t var) {
  memset(&a->s[a->n], 0xff, sizeof(seg));
  a->s[a->n].lo = lo;
  a->s[a->n].hi = hi;
  a->s[a->n].L = aff_var(c, var);
  a->n++;
}

/* Where the root is stored and read: dims [0, p) on outer vars, dims [p, rank) as one run on
 * the inner var. */
static sched_access domain_access(kbuild *k, int32_t rank, int32_t p) {
  sched_access a;
  access_clear(&a);
  for (int32_t d = 0; d < p; d++) access_push(k->c, &a, d, d + 1, d);
  if (p < rank) access_push(k->c, &a, p, rank, p);
  return a;
}

/* A matmul's domain over a rank-r value. One batch level (split 0): the leading r-2 dims as one
 * run on var 0, then rows and cols on vars 1 and 2. Two levels (0 < split < r-2): dims
 * [0, split) on var 0 (batch2), [split, r-2) on var 1 (batch), rows and cols on vars 2 and 3. */
static sched_access matmul_domain_access(sched_ctx *c, int32_t r, int32_t split) {
  sched_access a;
  access_clear(&a);
  int32_t var = 0;
  if (split > 0) access_push(c, &a, 0, split, var++);
  if (r > 2) access_push(c, &a, split, r - 2, var);
  var++;
  for (int32_t d = 0; d < 2; d++) access_push(c, &a, r - 2 + d, r - 1 + d, var + d);
  return a;
}

static bool store_root(kbuild *k, int32_t val, const sched_access *a) {
  sched_ctx *c = k->c;
  int32_t b = c->s->value_buf[k->root];
  aff addr;
  int32_t ind, ind_coef;
  if (!access_address(c, a, graph_value_type(k->g, k->root), &addr, &ind, &ind_coef)) return false;
  int32_t lvl = index_lvl(k, &addr, -1);
  if (lvl < 0) lvl = k->lvl[val];
  int32_t id = op_new(k, TC_KOP_STORE, c->s->bufs[b].dtype, lvl);
  if (id < 0) return false;
  k->ops[id].args[0] = val;
  k->ops[id].buffer = kbuf(k, b, true);
  k->ops[id].index = index_of(k, &addr, -1, -1);
  return true;
}

/* A matmul operand as (buffer, offset, strides of the domain's vars): the views between the
 * operand and a realized buffer folded into the strides. The domain (outer, n_outer, split) is
 * the matmul's, with the operand's rows and cols in place of (m, n). */
static bool operand_map(kbuild *k, int32_t v, const int32_t *outer, int32_t n_outer, int32_t split, int32_t *buf,
                        aff *map) {
  sched_ctx *c = k->c;
  const tc_vtype *t = graph_value_type(k->g, v);
  int32_t r = t->rank;
  set_domain(k, n_outer, outer, -1);
  sched_access a = matmul_domain_access(c, r, split);
  int32_t operand = v;
  for (int guard = 0; guard < 4096; guard++) {
    const tc_node *n = graph_value_node(k->g, v);
    if (!n || c->realized[v]) break;
    if (!is_view(n->prim)) return fail(k, v, "a matmul operand is computed (%s): realized first", prim_name(n->prim));
    sched_access in;
    if (!access_through_view(c, n, &a, &in)) {
      c->fail_value = operand;
      return false;
    }
    a = in;
    v = n->in[0];
  }
  int32_t ind, ind_coef;
  if (!access_address(c, &a, graph_value_type(k->g, v), map, &ind, &ind_coef) || ind >= 0)
    return fail(k, operand, "a matmul operand with an indirect index");
  *buf = c->s->value_buf[v];
  return *buf >= 0 || fail(k, v, "matmul operand without a buffer");
}

/* ---------------------------------------------------------------- ordering and output */
static bool finish(kbuild *k, tc_kernel_kind kind, const tc_matmul_desc *mm) {
  sched_ctx *c = k->c;
  tc_schedule *s = c->s;
  int32_t n = k->n_ops;
  /* Items: each inner loop is one block; each loop -1 op is its own item. */
  int32_t *item = malloc(sizeof(int32_t) * (size_t)(n + 1));
  int32_t *order = malloc(sizeof(int32_t) * (size_t)(n + 1));
  int32_t *newid = malloc(sizeof(int32_t) * (size_t)(n + 1));
  int32_t n_items = k->n_loops + n;
  int32_t *indeg = calloc((size_t)n_items + 1, sizeof(int32_t));
  bool *done = calloc((size_t)n_items + 1, sizeof(bool));
  int32_t *first = malloc(sizeof(int32_t) * (size_t)(n_items + 1));
  uint8_t *edge = calloc((size_t)n_items * (size_t)n_items + 1, 1);
  bool ok = item && order && newid && indeg && done && first && edge;
  if (ok) {
    for (int32_t i = 0; i < n_items; i++) first[i] = -1;
    for (int32_t i = 0; i < n; i++) {
      item[i] = k->ops[i].loop >= 0 ? k->ops[i].loop : k->n_loops + i;
      if (first[item[i]] < 0) first[item[i]] = i;
    }
    for (int32_t i = 0; i < n; i++) {
      int32_t deps[5] = {k->ops[i].args[0], k->ops[i].args[1], k->ops[i].args[2], k->ops[i].index.indirect, k->after[i]};
      for (int j = 0; j < 5; j++) {
        if (deps[j] < 0 || item[deps[j]] == item[i]) continue;
        uint8_t *e = &edge[(size_t)item[deps[j]] * (size_t)n_items + (size_t)item[i]];
        if (!*e) { *e = 1; indeg[item[i]]++; }
      }
    }
    int32_t placed = 0;
    for (;;) {
      int32_t best = -1;
      for (int32_t it = 0; it < n_items; it++)
        if (first[it] >= 0 && !done[it] && indeg[it] == 0 && (best < 0 || first[it] < first[best])) best = it;
      if (best < 0) break;
      done[best] = true;
      for (int32_t i = 0; i < n; i++)
        if (item[i] == best) order[placed++] = i;
      for (int32_t it = 0; it < n_items; it++)
        if (edge[(size_t)best * (size_t)n_items + (size_t)it]) indeg[it]--;
    }
    ok = placed == n;
  }
  sched_kernel *sk = NULL;
  if (ok && s->n_kernels == s->cap_kernels) {
    int32_t cap = s->cap_kernels ? 2 * s->cap_kernels : 16;
    sched_kernel *ks = realloc(s->kernels, sizeof *ks * (size_t)cap);
    if (ks) { s->kernels = ks; s->cap_kernels = cap; }
    else ok = false;
  }
  if (ok) {
    sk = &s->kernels[s->n_kernels];
    memset(sk, 0, sizeof *sk);
    sk->ops = malloc(sizeof(sched_op) * (size_t)(n + 1));
    sk->kbufs = calloc((size_t)k->n_bufs + 1, sizeof(tc_kbuffer));
    sk->kbuf_names = calloc((size_t)k->n_bufs + 1, sizeof *sk->kbuf_names);
    sk->buf_ids = calloc((size_t)k->n_bufs + 1, sizeof(int32_t));
    ok = sk->ops && sk->kbufs && sk->kbuf_names && sk->buf_ids;
  }
  if (ok) {
    for (int32_t i = 0; i < n; i++) newid[order[i]] = i;
    /* Loops renumbered in the order they run. */
    int32_t loop_map[256];
    int32_t n_loops = 0;
    for (int32_t i = 0; i < 256; i++) loop_map[i] = -1;
    for (int32_t i = 0; i < n; i++) {
      sched_op op = k->ops[order[i]];
      for (int j = 0; j < 3; j++)
        if (op.args[j] >= 0) op.args[j] = newid[op.args[j]];
      if (op.index.indirect >= 0) op.index.indirect = newid[op.index.indirect];
      if (op.loop >= 0 && op.loop < 256) {
        if (loop_map[op.loop] < 0) loop_map[op.loop] = n_loops++;
        op.loop = loop_map[op.loop];
      }
      sk->ops[i] = op;
    }
    sk->n_ops = n;
    sk->n_bufs = k->n_bufs;
    for (int32_t i = 0; i < k->n_bufs; i++) {
      const sched_buf *b = &s->bufs[k->bufs[i]];
      sk->buf_ids[i] = k->bufs[i];
      if (b->kind == SBUF_INPUT) snprintf(sk->kbuf_names[i], 24, "in%d", b->index);
      else if (b->kind == SBUF_OUTPUT) snprintf(sk->kbuf_names[i], 24, "out%d", b->index);
      else if (b->kind == SBUF_INDEX_ERROR) snprintf(sk->kbuf_names[i], 24, "index_error");
      else snprintf(sk->kbuf_names[i], 24, "buf%d", k->bufs[i]);
      sk->kbufs[i] = (tc_kbuffer){.struct_size = sizeof(tc_kbuffer), .name = sk->kbuf_names[i], .dtype = b->dtype,
                                  .role = k->stored[i] ? (k->loaded[i] ? TC_BUF_INOUT : TC_BUF_OUTPUT) : TC_BUF_INPUT,
                                  .numel = b->numel};
    }
    sk->root = k->root;
    sk->zero_buf = k->zero_buf;
    sk->kind = kind;
    sk->n_outer = k->n_outer;
    for (int32_t i = 0; i < k->n_outer; i++) sk->outer[i] = k->outer[i];
    sk->inner = n_loops > 0 ? k->inner : -1;
    sk->has_matmul = mm != NULL;
    if (mm) sk->matmul = *mm;
    s->n_kernels++;
    for (int32_t i = 0; i < k->n_reductions; i++) c->inline_count[k->reductions[i]]++;
  } else if (sk) {
    free(sk->ops);
    free(sk->kbufs);
    free(sk->kbuf_names);
    free(sk->buf_ids);
  }
  free(item);
  free(order);
  free(newid);
  free(indeg);
  free(done);
  free(first);
  free(edge);
  if (!ok) k->oom = true;
  return ok;
}

/* Names the kernel after what it computes: a recognized pattern (softmax, layer_norm, ...)
 * then the pointwise work around it (add, gelu, ...). */
static void kernel_name(const kbuild *k, bool matmul, char *out, size_t cap) {
#define HAS(p) ((k->prims[(p) / 64] >> ((p) % 64)) & 1)
  const char *pattern = NULL;
  int n_sum = 0;
  for (int32_t i = 0; i < k->n_reductions; i++)
    n_sum += graph_value_node(k->g, k->reductions[i])->prim == TC_PRIM_REDUCE_SUM;
  if (matmul) pattern = "matmul";
  else if (HAS(TC_PRIM_REDUCE_MAX) && HAS(TC_PRIM_EXP) && HAS(TC_PRIM_REDUCE_SUM) && HAS(TC_PRIM_LOG) && HAS(TC_PRIM_GATHER))
    pattern = "cross_entropy";
  else if (HAS(TC_PRIM_REDUCE_MAX) && HAS(TC_PRIM_EXP) && HAS(TC_PRIM_REDUCE_SUM) && HAS(TC_PRIM_LOG)) pattern = "log_softmax";
  else if (HAS(TC_PRIM_REDUCE_MAX) && HAS(TC_PRIM_EXP) && HAS(TC_PRIM_REDUCE_SUM)) pattern = "softmax";
  else if (HAS(TC_PRIM_RSQRT) && n_sum >= 2 && HAS(TC_PRIM_SUB)) pattern = "layer_norm";
  else if (HAS(TC_PRIM_RSQRT) && n_sum >= 1) pattern = "rms_norm";
  else if (HAS(TC_PRIM_REDUCE_SUM)) pattern = "sum";
  else if (HAS(TC_PRIM_REDUCE_MAX)) pattern = "max";
  else if (HAS(TC_PRIM_REDUCE_MIN)) pattern = "min";
  else if (HAS(TC_PRIM_REDUCE_PROD)) pattern = "prod";
  else if (HAS(TC_PRIM_ARGMAX)) pattern = "argmax";
  else if (HAS(TC_PRIM_ARGMIN)) pattern = "argmin";
  size_t used = (size_t)snprintf(out, cap, "%s", pattern ? pattern : "");
#define ADD(word)                                                                                  \
  do {                                                                                             \
    if (used < cap) used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "_" : "", word); \
  } while (0)
  bool norm = pattern && (strstr(pattern, "norm") || strstr(pattern, "softmax") || strstr(pattern, "entropy"));
  if (!norm || matmul) {
    if (HAS(TC_PRIM_ADD)) ADD("add");
    else if (HAS(TC_PRIM_SUB)) ADD("sub");
    if (HAS(TC_PRIM_MUL) && !HAS(TC_PRIM_ERF) && !HAS(TC_PRIM_ADD)) ADD("mul");
    if (HAS(TC_PRIM_DIV) && !pattern) ADD("div");
  }
  if (HAS(TC_PRIM_ERF)) ADD("gelu");
  else if (HAS(TC_PRIM_TANH)) ADD("tanh");
  else if (HAS(TC_PRIM_EXP) && !norm) ADD("exp");
  if (HAS(TC_PRIM_WHERE) && !HAS(TC_PRIM_GATHER)) ADD("where");
  if (HAS(TC_PRIM_MAX) && !HAS(TC_PRIM_ERF)) ADD("maximum");
  if (HAS(TC_PRIM_RANDOM)) ADD("random");
  if (HAS(TC_PRIM_GATHER) && !pattern) ADD("gather");
  if (!used) {
    const tc_node *n = graph_value_node(k->g, k->root);
    ADD(n ? prim_name(n->prim) : "copy");
  }
#undef ADD
#undef HAS
}

static bool build_special(kbuild *k, const tc_node *n);
static bool build_split_reduction(kbuild *k, const tc_node *n);

static bool reduce_dims_adjacent(const tc_node *n) {
  for (int32_t i = 1; i < n->n_iattrs; i++)
    if (n->iattrs[i] != n->iattrs[i - 1] + 1) return false;
  return true;
}

static void kbuild_free(kbuild *k) {
  free(k->after);
  free(k->ops);
  free(k->lvl);
  free(k->memos);
}

/* The root as a linear function of a sum S (negation, scaling, division by something not
 * depending on S), e.g. a mean loss: its chain (root first) and S, or -1. When a scale or
 * divisor needs a reduction of its own (the count of rows a loss keeps), *realize_first names
 * it: computed first into a buffer, it becomes a plain operand. */
static int32_t linear_chain(kbuild *k, int32_t *chain, int32_t *n_chain, int32_t *realize_first) {
  sched_ctx *c = k->c;
  int32_t v = k->root;
  *n_chain = 0;
  *realize_first = -1;
  for (int guard = 0; guard < 64; guard++) {
    const tc_node *n = graph_value_node(k->g, v);
    if (!n || (v != k->root && c->realized[v])) return -1;
    if (n->prim == TC_PRIM_REDUCE_SUM) return v == k->root ? -1 : v;
    int32_t next = -1;
    if (n->prim == TC_PRIM_NEG) next = n->in[0];
    else if (n->prim == TC_PRIM_MUL || n->prim == TC_PRIM_DIV) {
      for (int32_t i = 0; i < (n->prim == TC_PRIM_DIV ? 1 : 2) && next < 0; i++) {
        int32_t mine = find_reduction(c, n->in[i], k->root, 0), other = find_reduction(c, n->in[1 - i], k->root, 0);
        if (mine < 0) continue;
        next = n->in[i];
        if (other >= 0 && *realize_first < 0) *realize_first = other;
      }
    }
    if (next < 0 || !dtype_is_float(n->out.dtype)) return -1;
    chain[(*n_chain)++] = v;
    v = next;
  }
  return -1;
}

/* sum over rows of something that itself needs row reductions of another length (a mean of
 * per-row losses, cross_entropy): one kernel over the rows, each adding its share of the
 * result into the zeroed output (STORE_ADD), the linear tail applied to each share. */
static int build_outer_sum(kbuild *k) {
  sched_ctx *c = k->c;
  int32_t chain[64], n_chain, realize_first;
  int32_t S = linear_chain(k, chain, &n_chain, &realize_first);
  if (S < 0) return 0;
  if (realize_first >= 0) {
    fail(k, realize_first, "a scale of the summed rows with a reduction of its own");
    return -1;
  }
  const tc_node *sn = graph_value_node(k->g, S);
  int32_t u = sn->in[0];
  int32_t nested = find_reduction(c, u, k->root, 0);
  if (nested < 0) return 0;
  const tc_vtype *tu = graph_value_type(k->g, u);
  int32_t outer[TC_MAX_RANK];
  for (int32_t d = 0; d < tu->rank; d++) outer[d] = sx_g(c, tu->shape[d]);
  set_domain(k, tu->rank, outer, reduction_extent(c, graph_value_node(k->g, nested)));
  sched_access au = domain_access(k, tu->rank, tu->rank);
  int32_t val = emit(k, u, &au);
  if (val < 0) return -1;
  /* The sum's index: u's index without the summed dims. */
  bool summed[TC_MAX_RANK] = {false};
  for (int32_t i = 0; i < sn->n_iattrs; i++) summed[sn->iattrs[i]] = true;
  sched_access as;
  access_clear(&as);
  for (int32_t d = 0, o = 0; d < tu->rank; d++) {
    if (summed[d]) continue;
    as.s[as.n] = au.s[d];
    as.s[as.n].lo = o;
    as.s[as.n].hi = o + 1;
    as.n++;
    o++;
  }
  for (int32_t j = n_chain - 1; j >= 0; j--) {
    const tc_node *n = graph_value_node(k->g, chain[j]);
    int32_t prev = j == n_chain - 1 ? S : chain[j + 1];
    if (n->prim == TC_PRIM_NEG) { val = op_prim(k, TC_PRIM_NEG, n->out.dtype, val, -1, -1); continue; }
    int32_t other_i = n->in[0] == prev ? 1 : 0;
    int32_t other = emit(k, n->in[other_i], &as);
    if (other < 0) return -1;
    val = other_i == 1 ? op_prim(k, n->prim, n->out.dtype, val, other, -1) : op_prim(k, n->prim, n->out.dtype, other, val, -1);
    note_prim(k, n->prim);
  }
  if (val < 0) return -1;
  int32_t b = c->s->value_buf[k->root];
  aff addr;
  int32_t ind, ind_coef;
  if (!access_address(c, &as, graph_value_type(k->g, k->root), &addr, &ind, &ind_coef)) return -1;
  int32_t id = op_new(k, TC_KOP_STORE_ADD, c->s->bufs[b].dtype, k->lvl[val]);
  if (id < 0) return -1;
  k->ops[id].args[0] = val;
  k->ops[id].buffer = kbuf(k, b, true);
  k->ops[id].index = index_of(k, &addr, -1, -1);
  k->zero_buf = b;
  note_prim(k, TC_PRIM_REDUCE_SUM);
  return 1;
}

/* root = reshape(u), u computed here: iterate over u's dims and store each element at its
 * row-major position in the root. Merging dims is always affine this way round, so a reshape of
 * a permuted value is one copy, where reading u at the root's index would need a division. */
static int build_reshape_root(kbuild *k) {
  sched_ctx *c = k->c;
  const tc_node *n = graph_value_node(k->g, k->root);
  if (!n || n->prim != TC_PRIM_RESHAPE || c->realized[n->in[0]] || !graph_value_node(k->g, n->in[0]) ||
      find_reduction(c, n->in[0], k->root, 0) >= 0)
    return 0;
  const tc_vtype *tu = graph_value_type(k->g, n->in[0]);
  int32_t outer[TC_MAX_RANK];
  for (int32_t d = 0; d < tu->rank; d++) outer[d] = sx_g(c, tu->shape[d]);
  set_domain(k, tu->rank, outer, -1);
  sched_access au = domain_access(k, tu->rank, tu->rank), ar;
  if (!access_forward(c, n, &au, &ar)) return 0;
  int32_t val = emit(k, n->in[0], &au);
  if (val < 0) return -1;
  return store_root(k, val, &ar) ? 1 : -1;
}

static bool build_loop(kbuild *k) {
  int outer_sum = build_outer_sum(k);
  if (outer_sum != 0) return outer_sum > 0;
  int reshape_root = build_reshape_root(k);
  if (reshape_root != 0) return reshape_root > 0;
  sched_ctx *c = k->c;
  const tc_vtype *t = graph_value_type(k->g, k->root);
  const tc_node *n = graph_value_node(k->g, k->root);
  int32_t outer[TC_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) outer[d] = sx_g(c, t->shape[d]);
  sched_access a;
  if (n && is_reduction(n->prim)) {
    set_domain(k, t->rank, outer, reduction_extent(c, n));
    a = domain_access(k, t->rank, t->rank);
  } else {
    int32_t red = find_reduction(c, k->root, k->root, 0);
    if (red < 0) {
      set_domain(k, t->rank, outer, -1);
      a = domain_access(k, t->rank, t->rank);
    } else {
      int32_t extent = reduction_extent(c, graph_value_node(k->g, red));
      int32_t p = -1;
      for (int32_t q = t->rank; q >= 0 && p < 0; q--)
        if (sx_equal(c, sx_prod(c, t, q, t->rank), extent)) p = q;
      if (p < 0) return fail(k, red, "its rows do not line up with the rows of the value that reads it");
      set_domain(k, p, outer, extent);
      a = domain_access(k, t->rank, p);
      k->cur_loop = k->n_loops++;
      k->store_loop = k->cur_loop;
      k->root_acc = a;
    }
  }
  int32_t val = emit(k, k->root, &a);
  if (val < 0) return false;
  return store_root(k, val, &a);
}

/* One way to lay a matmul kernel out: its domain, the operands' maps and where the epilogue's
 * result for product element (batch..., m, n) lives. */
typedef struct mm_layout {
  int32_t split, n_outer, outer[4]; /* split 0: (batch, M, N); else (batch2, batch, M, N) */
  int32_t ba, bb;                   /* operand buffers */
  aff ma, mb;                       /* operand element offsets over the domain's vars */
  sched_access acc, acc_root;             /* the product's and the root's access over the domain */
  aff ce;                           /* the root's element offset */
  bool pure_view;                   /* the epilogue only reshapes/permutes the product */
} mm_layout;

/* Lays the kernel for matmul mm_value (root k->root) out with batch dims split at `split`;
 * false with c->fail_value/why set when an operand or the epilogue's layout is not affine. */
static bool matmul_layout(kbuild *k, int32_t mm_value, int32_t split, mm_layout *L) {
  sched_ctx *c = k->c;
  const tc_node *mm = graph_value_node(k->g, mm_value);
  const tc_vtype *to = &mm->out, *ta = graph_value_type(k->g, mm->in[0]);
  int32_t r = to->rank;
  int32_t M = sx_g(c, to->shape[r - 2]), N = sx_g(c, to->shape[r - 1]);
  int32_t K = sx_g(c, ta->shape[ta->rank - 1]);
  memset(L, 0, sizeof *L);
  L->split = split;
  int32_t nb = 0;
  if (split > 0) L->outer[nb++] = sx_prod(c, to, 0, split);
  L->outer[nb++] = sx_prod(c, to, split, r - 2);
  L->n_outer = nb + 2;
  int32_t dom[4];
  memcpy(dom, L->outer, sizeof dom);
  dom[nb] = M;
  dom[nb + 1] = K;
  if (!operand_map(k, mm->in[0], dom, L->n_outer, split, &L->ba, &L->ma)) return false;
  dom[nb] = K;
  dom[nb + 1] = N;
  if (!operand_map(k, mm->in[1], dom, L->n_outer, split, &L->bb, &L->mb)) return false;
  L->outer[nb] = M;
  L->outer[nb + 1] = N;
  set_domain(k, L->n_outer, L->outer, -1);
  L->acc = matmul_domain_access(c, r, split);
  /* Where the root's element for each product element lives: push the product's index forward
   * along the epilogue (reshapes and permutes change it; elementwise ops do not). */
  int32_t path[512], n_path = 0;
  L->pure_view = true;
  for (int32_t v = k->root; v != mm_value && n_path < 512;) {
    const tc_node *n = graph_value_node(k->g, v);
    int32_t next = -1;
    for (int32_t i = 0; i < n->n_in && next < 0; i++)
      if (reaches(k->g, n->in[i], mm_value)) next = n->in[i];
    if (next < 0) return fail(k, mm_value, "the epilogue does not lead back to the product");
    if (n->prim != TC_PRIM_RESHAPE && n->prim != TC_PRIM_PERMUTE) L->pure_view = false;
    path[n_path++] = v;
    v = next;
  }
  L->acc_root = L->acc;
  for (int32_t j = n_path - 1; j >= 0; j--) {
    const tc_node *n = graph_value_node(k->g, path[j]);
    if (n->prim != TC_PRIM_RESHAPE && n->prim != TC_PRIM_PERMUTE) continue;
    sched_access next;
    if (!access_forward(c, n, &L->acc_root, &next)) return fail(k, mm_value, "%s", c->why);
    L->acc_root = next;
  }
  int32_t cind, ccoef;
  if (!access_address(c, &L->acc_root, graph_value_type(k->g, k->root), &L->ce, &cind, &ccoef) || cind >= 0)
    return fail(k, mm_value, "the epilogue's result is not an affine layout of the product");
  return true;
}

/* Lays a kernel out with the batch dims of its rank-r values as one level (split 0), else as
 * two (split 1 .. r-3, when the plugin reads a second level): the first split `lay` manages,
 * or -1 with the one-level attempt's failure (the value to realize first, and why). */
typedef bool (*layout_fn)(kbuild *k, const void *what, int32_t split, void *layout);
static int32_t lay_out_by_splits(kbuild *k, int32_t r, layout_fn lay, const void *what, void *layout) {
  sched_ctx *c = k->c;
  int32_t first_fail = -1;
  char first_why[sizeof c->why];
  int32_t n_splits = r > 3 && c->opts.matmul_batch2 ? r - 2 : 1;
  for (int32_t split = 0; split < n_splits; split++) {
    if (lay(k, what, split, layout)) {
      c->fail_value = -1;
      c->why[0] = 0;
      return split;
    }
    if (split == 0) {
      first_fail = c->fail_value;
      snprintf(first_why, sizeof first_why, "%s", c->why);
    }
  }
  c->fail_value = first_fail;
  snprintf(c->why, sizeof c->why, "%s", first_why);
  return -1;
}

static bool try_matmul_layout(kbuild *k, const void *mm_value, int32_t split, void *layout) {
  return matmul_layout(k, *(const int32_t *)mm_value, split, layout);
}

static bool build_matmul(kbuild *k, int32_t mm_value) {
  sched_ctx *c = k->c;
  tc_schedule *s = c->s;
  const tc_node *mm = graph_value_node(k->g, mm_value);
  const tc_vtype *to = &mm->out, *ta = graph_value_type(k->g, mm->in[0]);
  int32_t r = to->rank;
  /* One batch level first. When an operand or the result is not one strided run over the batch
   * dims (attention's (B, heads) read through permutes of the qkv projection), split the batch
   * dims into two levels rather than copying the operand into a contiguous buffer, if the
   * plugin reads the second level (ABI 1.1); else the failure realizes the operand (a copy). */
  mm_layout L;
  int32_t split = lay_out_by_splits(k, r, try_matmul_layout, &mm_value, &L);
  if (split < 0) return false;
  if (split > 0)
    tc_logs("fusion", "matmul v%d: two batch levels (dims 0..%d and %d..%d) instead of a copy", mm_value, split - 1, split,
            r - 3);
  int32_t nb = L.n_outer - 2; /* batch vars: 1, or 2 with batch2 on var 0 */
  int32_t M = L.outer[nb], N = L.outer[nb + 1], K = sx_g(c, ta->shape[ta->rank - 1]);
  set_domain(k, L.n_outer, L.outer, -1);
  k->mm = k->root == mm_value ? -1 : mm_value;
  k->mm_acc = L.acc;
  /* The product goes straight into the root's buffer, in the root's layout, when the epilogue
   * keeps its dtype: the epilogue then updates it in place. */
  int32_t root_buf = s->value_buf[k->root];
  int32_t cb = root_buf;
  bool contiguous_c = s->bufs[root_buf].dtype != to->dtype;
  if (contiguous_c) cb = sched_buffer_for(s, -1, SBUF_TEMP, -1, to->dtype, sx_prod(c, to, 0, r));
  int32_t one = sx_c(c, 1), cmn = sx_mul(c, M, N);
  int32_t vb = nb - 1; /* the (inner) batch var */
  tc_matmul_desc d = {.struct_size = sizeof d, .a = kbuf(k, L.ba, false), .b = kbuf(k, L.bb, false), .c = kbuf(k, cb, true),
                      .batch = L.outer[vb], .m = M, .n = N, .k = K,
                      .a_offset = L.ma.c, .a_stride_batch = L.ma.k[vb], .a_stride_m = L.ma.k[nb], .a_stride_k = L.ma.k[nb + 1],
                      .b_offset = L.mb.c, .b_stride_batch = L.mb.k[vb], .b_stride_k = L.mb.k[nb], .b_stride_n = L.mb.k[nb + 1],
                      .c_offset = contiguous_c ? -1 : L.ce.c, .c_stride_batch = contiguous_c ? cmn : L.ce.k[vb],
                      .c_stride_m = contiguous_c ? N : L.ce.k[nb], .c_stride_n = contiguous_c ? one : L.ce.k[nb + 1],
                      .batch_levels = nb, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1, .c_stride_batch2 = -1};
  if (nb == 2) {
    d.batch2 = L.outer[0];
    d.a_stride_batch2 = L.ma.k[0];
    d.b_stride_batch2 = L.mb.k[0];
    d.c_stride_batch2 = contiguous_c ? sx_mul(c, L.outer[1], cmn) : L.ce.k[0];
  }
  int32_t *fields[] = {&d.a_offset, &d.a_stride_batch, &d.a_stride_m, &d.a_stride_k, &d.b_offset, &d.b_stride_batch,
                       &d.b_stride_k, &d.b_stride_n, &d.c_offset, &d.c_stride_batch, &d.c_stride_m, &d.c_stride_n,
                       &d.a_stride_batch2, &d.b_stride_batch2, &d.c_stride_batch2};
  int32_t n_fields = nb == 2 ? 15 : 12;
  for (int32_t i = 0; i < n_fields; i++)
    if (*fields[i] < 0) *fields[i] = sx_c(c, 0);
  if (k->mm >= 0 && !L.pure_view) {
    int32_t val = emit(k, k->root, &L.acc_root);
    if (val < 0) return false;
    if (!store_root(k, val, &L.acc_root)) return false;
    if (cb == root_buf) k->loaded[d.c] = true;
  }
  note_prim(k, TC_PRIM_MATMUL);
  char name[64];
  kernel_name(k, true, name, sizeof name);
  if (!finish(k, TC_KERNEL_MATMUL, &d)) return false;
  snprintf(s->kernels[s->n_kernels - 1].name, sizeof s->kernels[0].name, "%s", name);
  return true;
}

/* Where O's element (batch..., i, f) of attention region a lives in the root's buffer, pushed
 * forward along the views that merge the heads (as a matmul's pure-view epilogue). */
static bool attention_out_map(kbuild *k, const sched_attention *a, int32_t split, aff *ce) {
  sched_ctx *c = k->c;
  int32_t r = graph_value_type(k->g, a->out)->rank;
  sched_access acc = matmul_domain_access(c, r, split);
  int32_t path[512], n_path = 0;
  for (int32_t v = k->root; v != a->out && n_path < 512; v = graph_value_node(k->g, v)->in[0]) path[n_path++] = v;
  for (int32_t j = n_path - 1; j >= 0; j--) {
    sched_access next;
    if (!access_forward(c, graph_value_node(k->g, path[j]), &acc, &next)) return fail(k, a->out, "%s", c->why);
    acc = next;
  }
  int32_t ind, coef;
  if (!access_address(c, &acc, graph_value_type(k->g, k->root), ce, &ind, &coef) || ind >= 0)
    return fail(k, a->out, "attention's output is not an affine layout");
  return true;
}

/* One layout of an attention kernel: batch dims split at `split` as a matmul's, q, kT and v
 * mapped through their views, O through the views after it. */
typedef struct attn_layout {
  int32_t nb, batch[2];
  int32_t bq, bk, bv;
  aff mq, mk, mv, mo;
} attn_layout;

static bool attention_layout(kbuild *k, const sched_attention *a, int32_t split, attn_layout *L) {
  sched_ctx *c = k->c;
  const tc_vtype *ts = graph_value_type(k->g, a->scores), *to = graph_value_type(k->g, a->out);
  int32_t r = ts->rank;
  int32_t tq = sx_g(c, ts->shape[r - 2]), tk = sx_g(c, ts->shape[r - 1]);
  int32_t d = sx_g(c, graph_value_type(k->g, a->q)->shape[r - 1]), dv = sx_g(c, to->shape[r - 1]);
  memset(L, 0, sizeof *L);
  if (split > 0) L->batch[L->nb++] = sx_prod(c, ts, 0, split);
  L->batch[L->nb++] = sx_prod(c, ts, split, r - 2);
  int32_t dom[4] = {L->batch[0], L->batch[1]};
  int32_t n_outer = L->nb + 2;
  dom[L->nb] = tq, dom[L->nb + 1] = d;
  if (!operand_map(k, a->q, dom, n_outer, split, &L->bq, &L->mq)) return false;
  dom[L->nb] = d, dom[L->nb + 1] = tk;
  if (!operand_map(k, a->kt, dom, n_outer, split, &L->bk, &L->mk)) return false;
  dom[L->nb] = tk, dom[L->nb + 1] = dv;
  if (!operand_map(k, a->v, dom, n_outer, split, &L->bv, &L->mv)) return false;
  dom[L->nb] = tq, dom[L->nb + 1] = dv;
  set_domain(k, n_outer, dom, -1);
  return attention_out_map(k, a, split, &L->mo);
}

static bool try_attention_layout(kbuild *k, const void *a, int32_t split, void *layout) {
  return attention_layout(k, a, split, layout);
}

static bool build_attention(kbuild *k, const sched_attention *a) {
  sched_ctx *c = k->c;
  const tc_vtype *ts = graph_value_type(k->g, a->scores), *to = graph_value_type(k->g, a->out);
  int32_t r = ts->rank;
  attn_layout L;
  if (lay_out_by_splits(k, r, try_attention_layout, a, &L) < 0) return false;
  int32_t ob = c->s->value_buf[k->root];
  int32_t zero = sx_c(c, 0);
#define OR0(e) ((e) >= 0 ? (e) : zero)
  int32_t two = L.nb == 2, vb = L.nb - 1; /* batch var; batch2 on var 0 when two levels */
  int32_t vt = L.nb, ve = L.nb + 1;        /* row and column vars */
  tc_attention_desc d = {
      .struct_size = sizeof d, .q = kbuf(k, L.bq, false), .k = kbuf(k, L.bk, false), .v = kbuf(k, L.bv, false),
      .o = kbuf(k, ob, true), .batch2 = two ? L.batch[0] : -1, .batch = L.batch[vb],
      .tq = sx_g(c, ts->shape[r - 2]), .tk = sx_g(c, ts->shape[r - 1]),
      .d = sx_g(c, graph_value_type(k->g, a->q)->shape[r - 1]), .dv = sx_g(c, to->shape[r - 1]),
      .q_offset = OR0(L.mq.c), .q_stride_batch2 = two ? OR0(L.mq.k[0]) : -1, .q_stride_batch = OR0(L.mq.k[vb]),
      .q_stride_t = OR0(L.mq.k[vt]), .q_stride_d = OR0(L.mq.k[ve]),
      /* kT's vars are (d, tk): K's row stride is kT's column stride */
      .k_offset = OR0(L.mk.c), .k_stride_batch2 = two ? OR0(L.mk.k[0]) : -1, .k_stride_batch = OR0(L.mk.k[vb]),
      .k_stride_t = OR0(L.mk.k[ve]), .k_stride_d = OR0(L.mk.k[vt]),
      .v_offset = OR0(L.mv.c), .v_stride_batch2 = two ? OR0(L.mv.k[0]) : -1, .v_stride_batch = OR0(L.mv.k[vb]),
      .v_stride_t = OR0(L.mv.k[vt]), .v_stride_d = OR0(L.mv.k[ve]),
      .o_offset = OR0(L.mo.c), .o_stride_batch2 = two ? OR0(L.mo.k[0]) : -1, .o_stride_batch = OR0(L.mo.k[vb]),
      .o_stride_t = OR0(L.mo.k[vt]), .o_stride_d = OR0(L.mo.k[ve]),
      .scale = a->scale, .causal = a->causal, .causal_offset = a->causal_offset};
#undef OR0
  set_domain(k, 0, NULL, -1);
  if (!finish(k, TC_KERNEL_ATTENTION, NULL)) return false;
  sched_kernel *sk = &c->s->kernels[c->s->n_kernels - 1];
  sk->has_attention = true;
  sk->attention = d;
  snprintf(sk->name, sizeof sk->name, "%s", a->causal ? "causal_attention" : "attention");
  return true;
}

bool kernel_build(sched_ctx *c, int32_t root, tc_status *err) {
  kbuild k;
  memset(&k, 0, sizeof k);
  k.c = c;
  k.g = c->g;
  k.root = root;
  k.mm = -1;
  k.cur_loop = -1;
  k.inner = -1;
  k.zero_buf = -1;
  k.store_loop = -1;
  c->fail_value = -1;
  c->why[0] = 0;
  *err = TC_OK;
  bool ok;
  int32_t mm = -1;
  for (int32_t v = 0; v < c->n_values && mm < 0; v++)
    if (c->epi_end[v] == root) mm = v;
  const tc_node *rn = graph_value_node(c->g, root);
  if (mm >= 0 && c->attn_of[mm] >= 0) {
    ok = build_attention(&k, &c->attns[c->attn_of[mm]]);
  } else if (mm >= 0) {
    ok = build_matmul(&k, mm);
  } else if (rn && (rn->prim == TC_PRIM_PAD || rn->prim == TC_PRIM_CONCATENATE || rn->prim == TC_PRIM_SCATTER_ADD)) {
    ok = build_special(&k, rn);
  } else if (rn && rn->prim >= TC_PRIM_REDUCE_SUM && rn->prim <= TC_PRIM_REDUCE_PROD && !reduce_dims_adjacent(rn)) {
    ok = build_split_reduction(&k, rn);
  } else {
    ok = build_loop(&k);
    if (ok) {
      char name[64];
      kernel_name(&k, false, name, sizeof name);
      ok = finish(&k, TC_KERNEL_LOOP, NULL);
      if (ok) snprintf(c->s->kernels[c->s->n_kernels - 1].name, sizeof c->s->kernels[0].name, "%s", name);
    }
  }
  if (k.oom) *err = core_error(TC_ERR_OUT_OF_MEMORY, "scheduler: out of memory building a kernel");
  kbuild_free(&k);
  return ok;
}

/* ---------------------------------------------------------------- prims that write in pieces */
static void kbuild_reset(kbuild *k) {
  sched_ctx *c = k->c;
  int32_t root = k->root;
  kbuild_free(k);
  memset(k, 0, sizeof *k);
  k->c = c;
  k->g = c->g;
  k->root = root;
  k->mm = -1;
  k->cur_loop = -1;
  k->inner = -1;
  k->zero_buf = -1;
  k->store_loop = -1;
}

/* Domain = shape of type t; the root read at (var_d + offset_d). */
static sched_access shifted_access(kbuild *k, int32_t rank, const int32_t *offset) {
  sched_access a = domain_access(k, rank, rank);
  for (int32_t d = 0; d < rank; d++) a.s[d].L.c = offset ? offset[d] : -1;
  return a;
}

static bool finish_named(kbuild *k, const char *name) {
  if (!finish(k, TC_KERNEL_LOOP, NULL)) return false;
  tc_schedule *s = k->c->s;
  snprintf(s->kernels[s->n_kernels - 1].name, sizeof s->kernels[0].name, "%s", name);
  return true;
}

/* Stores value src (read on its own domain) into the root at an offset per dim. */
static bool copy_into_root(kbuild *k, int32_t src, const int32_t *offset, const char *name) {
  sched_ctx *c = k->c;
  const tc_vtype *t = graph_value_type(k->g, src);
  int32_t outer[TC_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) outer[d] = sx_g(c, t->shape[d]);
  set_domain(k, t->rank, outer, -1);
  sched_access a = domain_access(k, t->rank, t->rank);
  int32_t val = emit(k, src, &a);
  if (val < 0) return false;
  sched_access dst = shifted_access(k, t->rank, offset);
  return store_root(k, val, &dst) && finish_named(k, name);
}

static bool build_special(kbuild *k, const tc_node *n) {
  sched_ctx *c = k->c;
  const tc_vtype *to = &n->out;
  int32_t outer[TC_MAX_RANK];
  for (int32_t d = 0; d < to->rank; d++) outer[d] = sx_g(c, to->shape[d]);
  if (n->prim == TC_PRIM_PAD) {
    set_domain(k, to->rank, outer, -1);
    sched_access a = domain_access(k, to->rank, to->rank);
    int32_t v = op_const(k, to->dtype, n->fattr);
    if (v < 0 || !store_root(k, v, &a) || !finish_named(k, "pad_fill")) return false;
    kbuild_reset(k);
    int32_t lo[TC_MAX_RANK];
    for (int32_t d = 0; d < to->rank; d++) lo[d] = sx_c(c, n->iattrs[d]);
    return copy_into_root(k, n->in[0], lo, "pad");
  }
  if (n->prim == TC_PRIM_CONCATENATE) {
    int32_t dim = (int32_t)n->iattrs[0];
    int32_t off[TC_MAX_RANK];
    for (int32_t d = 0; d < to->rank; d++) off[d] = -1;
    for (int32_t i = 0; i < n->n_in; i++) {
      if (i) kbuild_reset(k);
      if (!copy_into_root(k, n->in[i], off, "concatenate")) return false;
      off[dim] = sx_add(c, off[dim], sx_g(c, graph_value_type(k->g, n->in[i])->shape[dim]));
    }
    return true;
  }
  /* SCATTER_ADD: a copy of x, then src added at the indexed positions (atomically). */
  if (!copy_into_root(k, n->in[0], NULL, "scatter_add_copy")) return false;
  kbuild_reset(k);
  int32_t dim = (int32_t)n->iattrs[0];
  const tc_vtype *ts = graph_value_type(k->g, n->in[2]);
  for (int32_t d = 0; d < ts->rank; d++) outer[d] = sx_g(c, ts->shape[d]);
  set_domain(k, ts->rank, outer, -1);
  sched_access a = domain_access(k, ts->rank, ts->rank);
  int32_t iv = emit(k, n->in[1], &a), sv = emit(k, n->in[2], &a);
  if (iv < 0 || sv < 0) return false;
  if (graph_value_type(k->g, n->in[1])->dtype != TC_I64) iv = op_prim(k, TC_PRIM_CONVERT, TC_I64, iv, -1, -1);
  int32_t zero = op_const(k, TC_I64, 0), size = op_new(k, TC_KOP_INDEX, TC_I64, -1);
  if (zero < 0 || size < 0) return false;
  k->ops[size].index.offset = sx_g(c, to->shape[dim]);
  int32_t ok = emit_in_range(k, k->root, iv, zero, size);
  /* Skipped indices add nothing: they land on a clamped index with a zero. */
  int32_t safe = op_prim(k, TC_PRIM_WHERE, TC_I64, ok, iv, zero);
  int32_t val = op_prim(k, TC_PRIM_WHERE, to->dtype, ok, sv, op_const(k, to->dtype, 0));
  if (safe < 0 || val < 0) return false;
  a.s[dim].L = aff_zero();
  a.s[dim].ind = safe;
  a.s[dim].ind_coef = sx_c(c, 1);
  aff addr;
  int32_t ind, ind_coef;
  if (!access_address(c, &a, to, &addr, &ind, &ind_coef)) return false;
  int32_t b = c->s->value_buf[k->root];
  int32_t id = op_new(k, TC_KOP_STORE_ADD, to->dtype, -1);
  if (id < 0) return false;
  k->ops[id].args[0] = val;
  k->ops[id].buffer = kbuf(k, b, true);
  k->ops[id].index = index_of(k, &addr, ind, ind_coef);
  return finish_named(k, "scatter_add");
}

/* A reduction over dims that are not adjacent, e.g. sum over (0, 2): one kernel per block of
 * adjacent dims, last block first, through temporaries (sum, max, min and prod compose). */
static bool build_split_reduction(kbuild *k, const tc_node *n) {
  sched_ctx *c = k->c;
  tc_schedule *s = c->s;
  const tc_vtype *tx = graph_value_type(k->g, n->in[0]);
  tc_vtype src = *tx;
  bool reduced[TC_MAX_RANK] = {false};
  for (int32_t i = 0; i < n->n_iattrs; i++) reduced[n->iattrs[i]] = true;
  int32_t src_buf = -1; /* -1: the graph value itself (inlined) */
  int32_t stage = 0;
  for (;;) {
    /* The last block of adjacent reduced dims in the current source's numbering. */
    int32_t hi = -1, lo;
    for (int32_t d = src.rank - 1; d >= 0 && hi < 0; d--)
      if (reduced[d]) hi = d + 1;
    if (hi < 0) break;
    for (lo = hi - 1; lo > 0 && reduced[lo - 1]; lo--) {}
    tc_vtype dst = src;
    dst.rank = src.rank - (hi - lo);
    for (int32_t d = lo; d < dst.rank; d++) dst.shape[d] = src.shape[d + (hi - lo)];
    bool more = false;
    for (int32_t d = 0; d < lo; d++) more |= reduced[d];
    if (stage) kbuild_reset(k);
    int32_t outer[TC_MAX_RANK];
    for (int32_t d = 0; d < dst.rank; d++) outer[d] = sx_g(c, dst.shape[d]);
    set_domain(k, dst.rank, outer, sx_prod(c, &src, lo, hi));
    sched_access a;
    access_clear(&a);
    for (int32_t d = 0; d < src.rank; d++) {
      if (d > lo && d < hi) continue;
      seg *g = &a.s[a.n++];
      memset(g, 0xff, sizeof *g);
      g->lo = d;
      g->hi = d == lo ? hi : d + 1;
      g->L = aff_var(c, d == lo ? dst.rank : d < lo ? d : d - (hi - lo));
    }
    k->cur_loop = k->n_loops++;
    int32_t xv;
    if (src_buf < 0) {
      xv = emit(k, n->in[0], &a);
    } else {
      aff addr;
      int32_t ind, ind_coef;
      if (!access_address(c, &a, &src, &addr, &ind, &ind_coef)) return false;
      xv = op_new(k, TC_KOP_LOAD, src.dtype, k->cur_loop);
      if (xv >= 0) {
        k->ops[xv].buffer = kbuf(k, src_buf, false);
        k->ops[xv].index = index_of(k, &addr, -1, -1);
      }
    }
    if (xv < 0) return false;
    int32_t red = op_new(k, TC_KOP_REDUCE, n->out.dtype, k->cur_loop);
    if (red < 0) return false;
    k->ops[red].prim = n->prim;
    k->ops[red].args[0] = xv;
    k->lvl[red] = -1;
    k->cur_loop = -1;
    int32_t dst_buf = more ? sched_buffer_for(s, -1, SBUF_TEMP, -1, dst.dtype, sx_prod(c, &dst, 0, dst.rank))
                           : s->value_buf[k->root];
    if (dst_buf < 0) return false;
    sched_access ad = domain_access(k, dst.rank, dst.rank);
    aff addr;
    int32_t ind, ind_coef;
    if (!access_address(c, &ad, &dst, &addr, &ind, &ind_coef)) return false;
    int32_t st = op_new(k, TC_KOP_STORE, dst.dtype, -1);
    if (st < 0) return false;
    k->ops[st].args[0] = red;
    k->ops[st].buffer = kbuf(k, dst_buf, true);
    k->ops[st].index = index_of(k, &addr, -1, -1);
    char name[64];
    snprintf(name, sizeof name, "%s_dims_%d_%d", prim_name(n->prim), lo, hi - 1);
    if (!finish_named(k, name)) return false;
    /* The next stage reads what this one wrote; dims renumber around the removed block. */
    bool next_reduced[TC_MAX_RANK] = {false};
    for (int32_t d = 0; d < lo; d++) next_reduced[d] = reduced[d];
    memcpy(reduced, next_reduced, sizeof reduced);
    src = dst;
    src_buf = dst_buf;
    stage++;
  }
  return stage > 0;
}
