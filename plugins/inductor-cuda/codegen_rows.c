/* codegen_rows.c — ROWS kernels, in one of two layouts:
 *   block per row: one block per outer point (a row), grid-stride over rows, the block's
 *              threads splitting every inner loop; reductions by warp butterflies, then the
 *              warps' partials through shared memory (every thread reads them in one fixed
 *              order, so every thread holds the same, deterministic row value).
 *   warp per row: rows of a constant N, N % 128 == 0, N <= ICUDA_WARP_ROW_MAX, when
 *              cuda.row_threads is not set: a block of ICUDA_WARP_ROW_WARPS warps handles as
 *              many rows at a time (warp w on row blockIdx.x * W + w, grid-stride over groups;
 *              the plan's rows_per_block tells the launch), the warp's lanes splitting every
 *              inner loop; reductions by a warp butterfly then lane 0's value to every lane:
 *              no shared memory, no __syncthreads (__syncwarp where a loop reads what an
 *              earlier one stored), so one warp's arithmetic overlaps another's loads.
 * The row's threads (block or 32) are TC_RT, a thread's place among them rt.
 *
 * Two bodies, chosen per launch by a uniform flag (vec_ok: sizes and pointer alignment):
 *   registers: the inner extent N is a compile-time constant, a multiple of 4, and at most
 *              block * 4 * R elements; thread t handles the float4 slots t, t + block, ...
 *              (R of them) in every inner loop, so an element an earlier loop loaded or stored
 *              is still in that thread's registers: a load the scheduler marked `reuse` reads
 *              them, and a store marked TC_KOP_OVERWRITTEN whose later reads all come from
 *              registers is dropped (one read and one write of memory per element). Contiguous
 *              f32 accesses are float4 loads and stores.
 *   scalar:    anything else (unaligned or strided views, symbolic N): r = t, t + block, ...
 *              re-reading memory in every loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

static const tc_kop *op_at(const tc_kernel_desc *k, int32_t i) { return tck_kernel_op(k, i); }

static int64_t expr_const_or(const icuda_gen *g, int32_t id, int64_t otherwise) {
  if (id < 0) return 0;
  const tc_size_expr *e = id < g->list->n_exprs ? tck_list_expr(g->list, id) : NULL;
  return e && e->op == TC_SX_CONST ? e->value : otherwise;
}

static int32_t n_loops(const tc_kernel_desc *k) {
  int32_t n = 0;
  for (int32_t i = 0; i < k->n_ops; i++)
    if (op_at(k, i)->loop + 1 > n) n = op_at(k, i)->loop + 1;
  return n;
}

bool cg_rows_wanted(const icuda_gen *g) {
  const tc_kernel_desc *k = g->k;
  if (k->kind != TC_KERNEL_LOOP || k->inner < 0 || n_loops(k) == 0) return false;
  int64_t n = expr_const_or(g, k->inner, -1);
  if (n >= 0 && n < 128) return false; /* short rows: a thread per row does better */
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind == TC_KOP_REDUCE && op_at(k, tck_op_arg(op, 0))->dtype == TC_BOOL) return false;
    /* an operand that is a per-element value of an earlier inner loop: the generic path */
    for (int32_t a = 0; a < op->n_args; a++) {
      const tc_kop *src = op_at(k, op->args[a]);
      if (op->loop >= 0 && src->loop >= 0 && src->loop != op->loop && src->kind != TC_KOP_REDUCE) return false;
    }
  }
  return true;
}

/* A contiguous f32 access along the inner var: a float4 candidate. */
static bool vecable(const icuda_gen *g, const tc_kop *op) {
  const tc_kernel_desc *k = g->k;
  if (op->loop < 0 || (op->kind != TC_KOP_LOAD && op->kind != TC_KOP_STORE) || !op->index || op->index->indirect >= 0)
    return false;
  if (tck_kernel_buffer(k, op->buffer)->dtype != TC_F32 || op->dtype != TC_F32) return false;
  return expr_const_or(g, tck_index_stride(op->index, k->n_outer), -1) == 1;
}

static bool touches(const tc_kop *op, int32_t b) {
  return (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) && op->buffer == b;
}

typedef struct rows_plan {
  bool regs;       /* the register body exists */
  bool warp;       /* warp per row: the block's warps on `warps` rows, reductions by shuffles only */
  int block, R;    /* threads per block; float4 slots per thread */
  int rt;          /* threads per row: block, or 32 (warp) */
  int warps;       /* warps per block */
  int64_t N;       /* the constant inner extent (regs) */
  bool *vec;       /* per op: a float4 access (regs body) */
  bool *vec_load;  /* per op: a float4 load (regs body) */
  int32_t *from;   /* per load: the op whose registers hold its value, or -1 */
  bool *kept;      /* per op: its float4 kept in registers c<i>[R] for later loops */
  bool *dead;      /* per store: not made (a later store overwrites it; reads come from registers) */
} rows_plan;

static void plan_build(const icuda_gen *g, rows_plan *pl) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops; i++) {
    pl->from[i] = -1;
    pl->vec[i] = pl->regs && vecable(g, op_at(k, i));
    pl->vec_load[i] = pl->vec[i] && op_at(k, i)->kind == TC_KOP_LOAD;
  }
  if (!pl->regs) return;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (!pl->vec[i] || op->kind != TC_KOP_LOAD || op->reuse < 0 || op->reuse >= i || !pl->vec[op->reuse]) continue;
    if (op_at(k, op->reuse)->loop >= op->loop) continue;
    pl->from[i] = op->reuse;
    pl->kept[op->reuse] = true;
  }
  /* A store is dropped only when every reuse in between was honoured: every later access to
   * its buffer is a float4 one, and every later load that counted on reuse reads registers. */
  for (int32_t s = 0; s < k->n_ops; s++) {
    const tc_kop *so = op_at(k, s);
    if (!pl->vec[s] || so->kind != TC_KOP_STORE || !(so->flags & TC_KOP_OVERWRITTEN)) continue;
    bool ok = true, overwritten = false;
    for (int32_t e = s + 1; e < k->n_ops && ok; e++) {
      const tc_kop *eo = op_at(k, e);
      if (!touches(eo, so->buffer)) continue;
      ok = pl->vec[e] && (eo->kind != TC_KOP_LOAD || pl->from[e] >= 0);
      if (eo->kind == TC_KOP_STORE) overwritten = true;
    }
    pl->dead[s] = ok && overwritten;
  }
}

static const char *const comp[4] = {"x", "y", "z", "w"};

/* The combination of two partials of reduction op (operand dtype vt). */
static void combine(tck_str *s, const tc_kop *op, int32_t vt, const char *a, const char *b) {
  bool fl = tck_dtype_is_float(vt);
  switch (op->prim) {
  case TC_PRIM_REDUCE_SUM:
    if (fl) tck_str_printf(s, "%s + %s", a, b);
    else tck_str_printf(s, "tc_add_%s(%s, %s)", tck_dtype_name(vt), a, b);
    break;
  case TC_PRIM_REDUCE_PROD:
    if (fl) tck_str_printf(s, "%s * %s", a, b);
    else tck_str_printf(s, "tc_mul_%s(%s, %s)", tck_dtype_name(vt), a, b);
    break;
  case TC_PRIM_REDUCE_MAX:
    if (fl) tck_str_printf(s, "tc_max_%s(%s, %s)", tck_dtype_name(vt), a, b);
    else tck_str_printf(s, "(%s > %s ? %s : %s)", a, b, a, b);
    break;
  case TC_PRIM_REDUCE_MIN:
    if (fl) tck_str_printf(s, "tc_min_%s(%s, %s)", tck_dtype_name(vt), a, b);
    else tck_str_printf(s, "(%s < %s ? %s : %s)", a, b, a, b);
    break;
  default: break;
  }
}

/* Warp per row: after an inner loop, each reduction's per-lane partial becomes the row's value
 * in every lane: a butterfly over the warp (no shared memory, no barrier), then lane 0's result
 * to every lane (a butterfly may leave lanes with different bits where the combination is not
 * commutative bit for bit, e.g. max(+0, -0); the block body likewise uses one value per row). */
/* Reduction op i's per-lane partial combined over the warp by a butterfly of xor shuffles:
 * afterwards every lane holds a combination of all 32 partials (v<i>, and v<i>_best for
 * argmax/argmin). The warp-per-row and block-per-row bodies both start with it. */
static void warp_butterfly(tck_str *s, const icuda_gen *g, int32_t i, int d) {
  const tc_kop *op = op_at(g->k, i);
  int32_t vt = op_at(g->k, tck_op_arg(op, 0))->dtype;
  tck_str_indent(s, d);
  tck_str_puts(s, "#pragma unroll\n");
  tck_str_indent(s, d);
  if (op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN) {
    const char *mm = op->prim == TC_PRIM_ARGMAX ? "max" : "min";
    tck_str_printf(s, "for (int o = 16; o > 0; o >>= 1) {\n");
    tck_str_indent(s, d + 1);
    tck_str_printf(s, "const %s ob = tc_shfl_xor(v%d_best, o);\n", tck_c_dtype(vt), (int)i);
    tck_str_indent(s, d + 1);
    tck_str_printf(s, "const long long oi = tc_shfl_xor(v%d, o);\n", (int)i);
    tck_str_indent(s, d + 1);
    tck_str_printf(s, "if (tc_better_%s_%s(v%d_best, v%d, ob, oi)) { v%d_best = ob; v%d = oi; }\n", mm, tck_dtype_name(vt),
                   (int)i, (int)i, (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_puts(s, "}\n");
  } else {
    char me[16], other[64];
    snprintf(me, sizeof me, "v%d", (int)i);
    snprintf(other, sizeof other, "tc_shfl_xor(v%d, o)", (int)i);
    tck_str_printf(s, "for (int o = 16; o > 0; o >>= 1) v%d = ", (int)i);
    combine(s, op, vt, me, other);
    tck_str_puts(s, ";\n");
  }
}

static void warp_reduce(tck_str *s, const icuda_gen *g, int32_t i, int d) {
  const tc_kop *op = op_at(g->k, i);
  bool arg = op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN;
  tck_str_indent(s, d);
  tck_str_printf(s, "{ /* the row's %s: warp butterfly (one warp per row), lane 0's to every lane */\n",
                 tck_prim_name(op->prim));
  d++;
  warp_butterfly(s, g, i, d);
  if (arg) {
    tck_str_indent(s, d);
    tck_str_printf(s, "v%d_best = __shfl_sync(0xffffffffu, v%d_best, 0);\n", (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_printf(s, "v%d = __shfl_sync(0xffffffffu, v%d, 0);\n", (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_printf(s, "if (v%d == INT64_MAX) v%d = 0; /* no element beat the identity: the first index */\n", (int)i, (int)i);
  } else {
    tck_str_indent(s, d);
    tck_str_printf(s, "v%d = __shfl_sync(0xffffffffu, v%d, 0);\n", (int)i, (int)i);
  }
  tck_str_indent(s, d - 1);
  tck_str_puts(s, "}\n");
}

/* After an inner loop: each reduction's per-thread partial becomes the row's value in every
 * thread (butterfly over the warp, then the warps' partials in order from shared memory). */
static void block_reduce(tck_str *s, const icuda_gen *g, int32_t i, int d) {
  const tc_kop *op = op_at(g->k, i);
  int32_t vt = op_at(g->k, tck_op_arg(op, 0))->dtype;
  bool arg = op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN;
  tck_str_indent(s, d);
  tck_str_printf(s, "{ /* the row's %s: warp butterfly, then the warps' partials in order */\n", tck_prim_name(op->prim));
  d++;
  if (arg) {
    const char *mm = op->prim == TC_PRIM_ARGMAX ? "max" : "min";
    const char *sx = tck_dtype_name(vt);
    warp_butterfly(s, g, i, d);
    tck_str_indent(s, d);
    tck_str_printf(s, "if (lane == 0) { red%d[warp] = v%d_best; red%d_ix[warp] = v%d; }\n", (int)i, (int)i, (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_puts(s, "__syncthreads();\n");
    tck_str_indent(s, d);
    tck_str_printf(s, "v%d_best = red%d[0]; v%d = red%d_ix[0];\n", (int)i, (int)i, (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_printf(s, "for (int w = 1; w < TC_WARPS; w++)\n");
    tck_str_indent(s, d + 1);
    tck_str_printf(s, "if (tc_better_%s_%s(v%d_best, v%d, red%d[w], red%d_ix[w])) { v%d_best = red%d[w]; v%d = red%d_ix[w]; }\n",
                   mm, sx, (int)i, (int)i, (int)i, (int)i, (int)i, (int)i, (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_printf(s, "if (v%d == INT64_MAX) v%d = 0; /* no element beat the identity: the first index */\n", (int)i, (int)i);
  } else {
    char me[16], other[64];
    snprintf(me, sizeof me, "v%d", (int)i);
    warp_butterfly(s, g, i, d);
    tck_str_indent(s, d);
    tck_str_printf(s, "if (lane == 0) red%d[warp] = v%d;\n", (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_puts(s, "__syncthreads();\n");
    tck_str_indent(s, d);
    tck_str_printf(s, "v%d = red%d[0];\n", (int)i, (int)i);
    tck_str_indent(s, d);
    tck_str_printf(s, "for (int w = 1; w < TC_WARPS; w++) v%d = ", (int)i);
    snprintf(other, sizeof other, "red%d[w]", (int)i);
    combine(s, op, vt, me, other);
    tck_str_puts(s, ";\n");
  }
  tck_str_indent(s, d);
  tck_str_puts(s, "__syncthreads(); /* red is reused by the next row */\n");
  tck_str_indent(s, d - 1);
  tck_str_puts(s, "}\n");
}

/* "(a combined with b)" into out; false when it does not fit (or out of memory). */
static bool combined(char *out, size_t cap, const tc_kop *op, int32_t vt, const char *a, const char *b) {
  tck_str t = {0};
  tck_str_puts(&t, "(");
  combine(&t, op, vt, a, b);
  tck_str_puts(&t, ")");
  char *text = tck_str_take(&t);
  bool ok = text && strlen(text) < cap;
  if (ok) memcpy(out, text, strlen(text) + 1);
  free(text);
  return ok;
}

/* A reduction whose float4 components the register body of a block per row combines in pairs:
 * every one but argmax/argmin (whose index rides along with the value). Measured in isolation on
 * the H200 (bench/probes/ln_gelu_tc.sh, softmax_tc.sh): ln_gelu's block per row 2.5% faster,
 * softmax's warp per row 0.5% slower, so a warp per row keeps one chain. */
static bool paired(const rows_plan *pl, const tc_kop *op) {
  return !pl->warp && op->kind == TC_KOP_REDUCE && op->prim != TC_PRIM_ARGMAX && op->prim != TC_PRIM_ARGMIN;
}

/* True when a store of ops [from, to) is read by a later op from memory (other threads may
 * have written it): the block must synchronize first. */
static bool needs_sync(const icuda_gen *g, const rows_plan *pl, bool regs, int32_t from, int32_t to) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = from; i < to; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind != TC_KOP_STORE && op->kind != TC_KOP_STORE_ADD) continue;
    if (regs && pl->dead[i]) continue;
    for (int32_t j = to; j < k->n_ops; j++) {
      const tc_kop *lo = op_at(k, j);
      if (lo->kind == TC_KOP_LOAD && lo->buffer == op->buffer && !(regs && pl->from[j] >= 0)) return true;
    }
  }
  return false;
}

/* One row's body; regs: the register body, else the scalar one. */
static tc_status row_body(tck_str *s, icuda_gen *g, const rows_plan *pl, bool regs, const char **vars, int d0,
                          char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const int32_t inner = k->n_outer;
  if (regs)
    for (int32_t i = 0; i < k->n_ops; i++)
      if (pl->kept[i]) {
        tck_str_indent(s, d0);
        tck_str_printf(s, "float4 c%d[%d]; /* op %d's float4s, kept for later inner loops */\n", (int)i, pl->R, (int)i);
      }
  for (int32_t i = 0; i < k->n_ops;) {
    const tc_kop *op = op_at(k, i);
    if (op->loop < 0) {
      tc_status st;
      if (op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) {
        tck_str_indent(s, d0);
        tck_str_puts(s, "if (rt == 0) {\n");
        st = cg_op(s, g, i, (const char *const *)vars, d0 + 1, "", NULL, err, cap);
        tck_str_indent(s, d0);
        tck_str_puts(s, "}\n");
        if (st == TC_OK && needs_sync(g, pl, regs, i, i + 1)) {
          tck_str_indent(s, d0);
          tck_str_puts(s, pl->warp ? "__syncwarp(); /* the row's warp reads it next */\n" : "__syncthreads();\n");
        }
      } else {
        st = cg_op(s, g, i, (const char *const *)vars, d0, "", NULL, err, cap);
      }
      if (st != TC_OK) return st;
      i++;
      continue;
    }
    int32_t loop = op->loop, end = i;
    while (end < k->n_ops && op_at(k, end)->loop == loop) end++;
    tck_str_indent(s, d0);
    tck_str_printf(s, "/* inner loop %d */\n", (int)loop);
    cg_declare_accumulators(s, g, loop, d0, "INT64_MAX");
    int d = d0 + 1;
    if (!regs) {
      tck_str_indent(s, d0);
      tck_str_printf(s, "for (long long r = rt; r < N; r += TC_RT) {\n");
      vars[inner] = "r";
      for (int32_t j = i; j < end; j++) {
        tc_status st = cg_op(s, g, j, (const char *const *)vars, d, "", NULL, err, cap);
        if (st != TC_OK) return st;
      }
      tck_str_indent(s, d0);
      tck_str_puts(s, "}\n");
    } else {
      /* each float4 access's element at the row's start: the slots add r */
      const char *names[TC_MAX_RANK + 1];
      for (int32_t v = 0; v < inner; v++) names[v] = vars[v];
      names[inner] = "0";
      for (int32_t j = i; j < end; j++) {
        const tc_kop *jo = op_at(k, j);
        if (!pl->vec[j] || (jo->kind == TC_KOP_LOAD && pl->from[j] >= 0) || (jo->kind == TC_KOP_STORE && pl->dead[j]))
          continue;
        tck_str_indent(s, d0);
        tck_str_printf(s, "const long long a%d = ", (int)j);
        tck_index_emit(s, &g->x, jo->index, names);
        tck_str_puts(s, ";\n");
      }
      bool exact = (int64_t)pl->R * pl->rt * 4 == pl->N;
      tck_str_indent(s, d0);
      tck_str_puts(s, "#pragma unroll\n");
      tck_str_indent(s, d0);
      tck_str_printf(s, "for (int it = 0; it < %d; it++) { /* the slots of this thread: the same in every loop */\n", pl->R);
      tck_str_indent(s, d);
      tck_str_puts(s, "const long long r = 4 * (rt + (long long)it * TC_RT);\n");
      if (!exact) {
        tck_str_indent(s, d);
        tck_str_puts(s, "if (r < N) { /* no break: the loop must unroll for c*[it] to stay in registers */\n");
        d++;
      }
      for (int32_t j = i; j < end; j++) g->percomp[j] = op_at(k, j)->kind != TC_KOP_REDUCE;
      /* a reduction's 4 components of a slot: combined in pairs, then into the accumulator (one
       * chain of R steps a thread instead of 4 R), in a block per row (paired) */
      char(*parts)[4][48] = calloc((size_t)(end - i), sizeof *parts);
      if (!parts) return TC_ERR_OUT_OF_MEMORY;
      for (int32_t j = i; j < end; j++) {
        const tc_kop *jo = op_at(k, j);
        if (jo->kind != TC_KOP_LOAD || !pl->vec[j]) continue;
        tck_str_indent(s, d);
        if (pl->from[j] >= 0)
          tck_str_printf(s, "const float4 t%d = c%d[it]; /* %s in inner loop %d: from registers */\n", (int)j,
                         (int)pl->from[j], op_at(k, pl->from[j])->kind == TC_KOP_STORE ? "stored" : "loaded",
                         (int)op_at(k, pl->from[j])->loop);
        else
          tck_str_printf(s, "const float4 t%d = *(const float4 *)&%s[a%d + r];\n", (int)j, g->bname[jo->buffer], (int)j);
        if (pl->kept[j]) {
          tck_str_indent(s, d);
          tck_str_printf(s, "c%d[it] = t%d;\n", (int)j, (int)j);
        }
      }
      char cvar[4][16];
      for (int c = 0; c < 4; c++) {
        snprintf(cvar[c], sizeof cvar[c], c ? "(r + %d)" : "r", c);
        vars[inner] = cvar[c];
        char sfx[8];
        snprintf(sfx, sizeof sfx, "_%d", c);
        cg_component_names(g, pl->vec_load, i, end, c);
        for (int32_t j = i; j < end; j++) {
          if (pl->vec[j]) continue; /* float4 loads are named; float4 stores come after the components */
          if (paired(pl, op_at(k, j))) { /* combined after the components */
            cg_value_name(g, tck_op_arg(op_at(k, j), 0), sfx, parts[j - i][c], sizeof parts[j - i][c]);
            continue;
          }
          tc_status st = cg_op(s, g, j, (const char *const *)vars, d, sfx, NULL, err, cap);
          if (st != TC_OK) {
            free(parts);
            return st;
          }
        }
        cg_component_names_clear(g, i, end); /* valid for this component only */
      }
      for (int32_t j = i; j < end; j++) {
        const tc_kop *jo = op_at(k, j);
        if (!paired(pl, jo)) continue;
        const int32_t vt = op_at(k, tck_op_arg(jo, 0))->dtype;
        char lo[512], hi[512], both[1100], acc[16];
        snprintf(acc, sizeof acc, "v%d", (int)j);
        if (!combined(lo, sizeof lo, jo, vt, parts[j - i][0], parts[j - i][1]) ||
            !combined(hi, sizeof hi, jo, vt, parts[j - i][2], parts[j - i][3]) ||
            !combined(both, sizeof both, jo, vt, lo, hi)) {
          free(parts);
          return TC_ERR_OUT_OF_MEMORY;
        }
        tck_str_indent(s, d);
        tck_str_printf(s, "%s = ", acc);
        combine(s, jo, vt, acc, both);
        tck_str_puts(s, ";\n");
      }
      free(parts);
      for (int32_t j = i; j < end; j++) {
        const tc_kop *jo = op_at(k, j);
        if (!pl->vec[j] || jo->kind != TC_KOP_STORE) continue;
        char a[4][48];
        for (int c = 0; c < 4; c++) {
          char sfx[8];
          snprintf(sfx, sizeof sfx, "_%d", c);
          /* the stored value's name in component c */
          int32_t src = jo->args[0];
          if (pl->vec[src] && op_at(k, src)->kind == TC_KOP_LOAD) snprintf(a[c], sizeof a[c], "t%d.%s", (int)src, comp[c]);
          else cg_value_name(g, src, sfx, a[c], sizeof a[c]);
        }
        tck_str_indent(s, d);
        tck_str_printf(s, "const float4 w%d = make_float4(%s, %s, %s, %s);\n", (int)j, a[0], a[1], a[2], a[3]);
        if (pl->kept[j]) {
          tck_str_indent(s, d);
          tck_str_printf(s, "c%d[it] = w%d;\n", (int)j, (int)j);
        }
        tck_str_indent(s, d);
        if (pl->dead[j]) tck_str_printf(s, "/* %s: not stored, a later inner loop overwrites it */\n", g->bname[jo->buffer]);
        else tck_str_printf(s, "*(float4 *)&%s[a%d + r] = w%d;\n", g->bname[jo->buffer], (int)j, (int)j);
      }
      for (int32_t j = i; j < end; j++) g->percomp[j] = false;
      if (!exact) {
        d--;
        tck_str_indent(s, d);
        tck_str_puts(s, "}\n");
      }
      tck_str_indent(s, d0);
      tck_str_puts(s, "}\n");
    }
    vars[inner] = NULL;
    for (int32_t j = i; j < end; j++)
      if (op_at(k, j)->kind == TC_KOP_REDUCE) {
        if (pl->warp) warp_reduce(s, g, j, d0);
        else block_reduce(s, g, j, d0);
      }
    if (needs_sync(g, pl, regs, i, end)) {
      tck_str_indent(s, d0);
      tck_str_puts(s, pl->warp ? "__syncwarp(); /* later ops read what this loop stored (this warp's row) */\n"
                               : "__syncthreads(); /* later ops read what this loop stored */\n");
    }
    i = end;
  }
  return TC_OK;
}

/* The grid-stride loop over rows (row groups for a warp per row) around one body, at depth d. */
static tc_status row_loop(tck_str *s, icuda_gen *g, const rows_plan *pl, bool regs, const char **vars, int d, char *err,
                          size_t cap) {
  tck_str_indent(s, d);
  if (pl->warp) /* the loop is uniform over each warp (no barrier: warps may run different counts) */
    tck_str_puts(s, "for (long long row = (long long)blockIdx.x * TC_WARPS + warp; row < rows; row += (long long)gridDim.x * TC_WARPS) {\n");
  else
    tck_str_puts(s, "for (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n");
  cg_decompose(s, g, "row", d + 1, vars, g->k->n_outer);
  tc_status st = row_body(s, g, pl, regs, vars, d + 1, err, cap);
  tck_str_indent(s, d);
  tck_str_puts(s, "}\n");
  return st;
}

tc_status cg_rows(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  size_t n = (size_t)k->n_ops + 1;
  rows_plan pl = {0};
  pl.vec = calloc(n, 1);
  pl.from = calloc(n, sizeof(int32_t));
  pl.kept = calloc(n, 1);
  pl.dead = calloc(n, 1);
  pl.vec_load = calloc(n, 1);
  tc_status st = TC_OK;
  if (!cg_tables_alloc(g) || !pl.vec || !pl.from || !pl.kept || !pl.dead || !pl.vec_load) {
    st = TC_ERR_OUT_OF_MEMORY;
    goto done;
  }
  /* The block: about 4 float4 slots per thread, 64..512 threads. */
  pl.N = expr_const_or(g, k->inner, -1);
  int64_t slots = pl.N > 0 ? (pl.N + 3) / 4 : 1024;
  pl.block = 64;
  while (pl.block < 512 && (int64_t)pl.block * 4 < slots) pl.block *= 2;
  if (g->o && g->o->row_threads >= 32) pl.block = g->o->row_threads; /* cuda.row_threads */
  bool any_vec = false;
  for (int32_t i = 0; i < k->n_ops; i++) any_vec |= vecable(g, op_at(k, i));
  /* Warp per row: rows of a constant N, a multiple of 128 (each lane R = N / 128 whole float4
   * slots) up to ICUDA_WARP_ROW_MAX, unless cuda.row_threads asks for a block per row. A block
   * per row would leave each row's phases (load, reduce, barrier, ...) serialized; warps on
   * their own rows overlap one row's arithmetic with another's loads, without barriers. */
  pl.warp = any_vec && !(g->o && g->o->row_threads >= 32) && pl.N > 0 && pl.N % 128 == 0 && pl.N <= ICUDA_WARP_ROW_MAX &&
            pl.N / 128 <= ICUDA_ROW_REGS;
  if (pl.warp) {
    pl.warps = ICUDA_WARP_ROW_WARPS;
    pl.block = 32 * pl.warps;
    pl.rt = 32;
    pl.R = (int)(pl.N / 128);
  } else {
    pl.warps = pl.block / 32;
    pl.rt = pl.block;
    pl.R = (int)((slots + pl.block - 1) / pl.block);
  }
  /* cuda.row_threads set by hand may keep up to 4 x ICUDA_ROW_REGS float4s a thread in registers
   * (a row of 4096 on 32 or 64 threads: more bytes in flight per thread, fewer barriers) */
  const bool by_hand = g->o && g->o->row_threads >= 32;
  pl.regs = any_vec && pl.N > 0 && pl.N % 4 == 0 && pl.R <= (by_hand ? 4 * ICUDA_ROW_REGS : ICUDA_ROW_REGS);
  plan_build(g, &pl);

  plan->kind = ICUDA_LAUNCH_ROWS;
  plan->block = pl.block;
  plan->rows_per_block = pl.warp ? pl.warps : 1;
  plan->smem_bytes = 0; /* the reductions' partials are static __shared__ arrays */
  plan->max_blocks = 0; /* a block per row group: see ICUDA_POINTS_BLOCK */

  if (pl.warp)
    tck_str_printf(s, "/* warp per row: a block of %d warps on %d rows at a time (grid-stride over row groups), "
                      "reductions by warp shuffles only; the row in registers when aligned, else scalar */\n",
                   pl.warps, pl.warps);
  else
    tck_str_printf(s, "/* one block of %d threads per row (grid-stride over rows); %s */\n", pl.block,
                   pl.regs ? "the row in registers across inner loops when aligned, else scalar" : "scalar accesses");
  tck_str_printf(s, "#define TC_BLOCK %d\n#define TC_WARPS %d\n#define TC_RT %d\n", pl.block, pl.warps, pl.rt);
  /* the alignment conditions reference offsets and strides: mark them before the prologue */
  for (int32_t i = 0; i < k->n_ops; i++)
    if (pl.vec[i]) tck_exprs_mark_index(&g->x, op_at(k, i)->index);
  cg_prologue(s, g, pl.block);
  for (int32_t v = 0; v < k->n_outer; v++) {
    tck_str_printf(s, "  const long long n%d = ", (int)v);
    tck_exprs_ref(s, &g->x, k->outer[v]);
    tck_str_puts(s, ";\n");
  }
  tck_str_puts(s, "  const long long rows = 1");
  for (int32_t v = 0; v < k->n_outer; v++) tck_str_printf(s, " * n%d", (int)v);
  tck_str_puts(s, ";\n  const long long N = ");
  tck_exprs_ref(s, &g->x, k->inner);
  tck_str_puts(s, "; /* the inner (reduction) extent */\n");
  tck_str_puts(s, "  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n");
  tck_str_printf(s, "  const int rt = %s; /* this thread's place in its row's %s */\n", pl.warp ? "lane" : "tid",
                 pl.warp ? "warp" : "block");
  bool any_red = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind != TC_KOP_REDUCE) continue;
    any_red = true;
    if (pl.warp) continue; /* no shared memory: shuffles only */
    int32_t vt = op_at(k, tck_op_arg(op, 0))->dtype;
    bool arg = op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN;
    tck_str_printf(s, "  __shared__ %s red%d[TC_WARPS];\n", tck_c_dtype(arg ? vt : op->dtype), (int)i);
    if (arg) tck_str_printf(s, "  __shared__ long long red%d_ix[TC_WARPS];\n", (int)i);
  }
  if (!any_red || pl.warp) tck_str_puts(s, "  (void)lane; (void)warp;\n");
  if (pl.regs) {
    /* float4 accesses need 16-byte alignment of every row's start */
    tck_str_puts(s, "  const bool vec_ok = true");
    for (int32_t i = 0; i < k->n_ops; i++) {
      if (!pl.vec[i]) continue;
      const tc_kop *op = op_at(k, i);
      tck_str_printf(s, "\n      && (unsigned long long)%s %% 16 == 0", g->bname[op->buffer]);
      if (op->index->offset >= 0 && !tck_exprs_is_const(&g->x, op->index->offset, 0)) {
        tck_str_puts(s, " && (");
        tck_exprs_ref(s, &g->x, op->index->offset);
        tck_str_puts(s, ") % 4 == 0");
      }
      for (int32_t v = 0; v < k->n_outer; v++) {
        int32_t st_id = tck_index_stride(op->index, v);
        if (st_id < 0 || tck_exprs_is_const(&g->x, st_id, 0)) continue;
        tck_str_puts(s, " && (");
        tck_exprs_ref(s, &g->x, st_id);
        tck_str_puts(s, ") % 4 == 0");
      }
    }
    tck_str_puts(s, ";\n");
  }
  static const char *const ovars[TC_MAX_RANK] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
  const char *vars[TC_MAX_RANK + 1] = {0};
  for (int32_t v = 0; v < k->n_outer; v++) vars[v] = ovars[v];
  /* The alignment test is uniform over the launch, so it chooses between two whole row loops:
   * with the test inside one loop (as until session 11) the kernel ran 6% slower at ln_gelu's
   * shape (bench/probes/ln_gelu_tc.sh: 3600 against 3816 GB/s in isolation). */
  if (pl.regs) {
    tck_str_puts(s, "  if (vec_ok) { /* every row in registers, float4 accesses */\n");
    st = row_loop(s, g, &pl, true, vars, 2, err, cap);
    if (st != TC_OK) goto done;
    tck_str_puts(s, "  } else { /* scalar: unaligned views */\n");
    st = row_loop(s, g, &pl, false, vars, 2, err, cap);
    if (st != TC_OK) goto done;
    tck_str_puts(s, "  }\n");
  } else {
    st = row_loop(s, g, &pl, false, vars, 1, err, cap);
    if (st != TC_OK) goto done;
  }
  tck_str_puts(s, "}\n#undef TC_BLOCK\n#undef TC_WARPS\n#undef TC_RT\n");
  if (s->oom) st = TC_ERR_OUT_OF_MEMORY;
done:
  free(pl.vec);
  free(pl.from);
  free(pl.kept);
  free(pl.dead);
  free(pl.vec_load);
  cg_tables_free(g);
  return st;
}
