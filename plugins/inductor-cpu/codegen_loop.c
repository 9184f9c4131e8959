/* codegen_loop.c — TC_KERNEL_LOOP kernels as C: an OpenMP `parallel for` over the outer domain,
 * each inner loop a plain counted loop the compiler can vectorize (`omp simd` with reduction
 * clauses). When the outer domain is too small to feed every thread but rows are long, a second
 * copy of the body runs the outer points serially and parallelizes each inner loop instead (a
 * two-level reduction: per-thread partials combined by OpenMP). */
#include <stdio.h>
#include <string.h>

#include "icpu.h"

static const tc_kop *op_at(const tc_kernel_desc *k, int32_t i) { return tck_kernel_op(k, i); }
static const tc_kbuffer *buf_at(const tc_kernel_desc *k, int32_t i) { return tck_kernel_buffer(k, i); }
/* The op whose value indexes op's memory access, or -1. */
static int32_t indirect_of(const tc_kop *op) { return op->index ? op->index->indirect : -1; }

/* C name of buffer i: its descriptor name when that is a fresh identifier, else b<i>. */
void kgen_buf_name(const tc_kernel_desc *k, int32_t i, char *out, size_t cap) {
  const char *n = buf_at(k, i)->name;
  bool ok = n && n[0] && !(n[0] >= '0' && n[0] <= '9') && strlen(n) < cap - 8;
  for (const char *p = n; ok && *p; p++)
    ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
  for (int32_t j = 0; ok && j < i; j++) ok = buf_at(k, j)->name == NULL || strcmp(buf_at(k, j)->name, n) != 0;
  /* Names the generated code uses itself (v3, x7, s0, i1, j4, ok2, r, tc_*) must not be shadowed. */
  if (ok) {
    size_t skip = strncmp(n, "ok", 2) == 0 ? 2 : strchr("vxsij", n[0]) ? 1 : 0;
    bool digits = skip > 0 && n[skip] != 0;
    for (const char *p = n + skip; digits && *p; p++) digits = *p >= '0' && *p <= '9';
    if (digits || strcmp(n, "r") == 0 || strncmp(n, "tc_", 3) == 0) ok = false;
  }
  if (ok) snprintf(out, cap, "%s", n);
  else snprintf(out, cap, "b%d", i);
}

void kgen_params(tck_str *s, const icpu_kgen *g) {
  const tc_kernel_desc *k = g->k;
  bool first = true;
  tck_str_puts(s, "(");
  for (int32_t i = 0; i < k->n_buffers; i++) {
    char name[80];
    kgen_buf_name(k, i, name, sizeof name);
    const tc_kbuffer *b = buf_at(k, i);
    tck_str_printf(s, "%s%s%s *restrict %s", first ? "" : ", ", b->role == TC_BUF_INPUT ? "const " : "", tck_c_dtype(b->dtype),
               name);
    first = false;
  }
  for (int32_t i = 0; i < g->list->n_syms; i++) {
    tck_str_printf(s, "%sint64_t s%d", first ? "" : ", ", i);
    first = false;
  }
  tck_str_puts(s, first ? "void)" : ")");
}

/* The kit's emitter of ops as C (tck_c_op), with this backend's spellings. Its ctx: */
typedef struct body_ctx {
  const icpu_kgen *g;
  int32_t cur; /* the inner loop open, -1: none */
} body_ctx;

/* The name of op j's value where the copy `sfx` of loop `cur`'s body is being emitted: values
 * of that loop are per copy (v<j><sfx>), the others (per row, per kernel) shared (v<j>). */
static void body_value_name(const tck_c_body *e, int32_t j, const char *sfx, char *out, size_t cap) {
  int32_t cur = e->ctx ? ((const body_ctx *)e->ctx)->cur : -1;
  bool mine = j >= 0 && j < e->k->n_ops && cur >= 0 && op_at(e->k, j)->loop == cur;
  snprintf(out, cap, "v%d%s", (int)j, mine ? sfx : "");
}

static void body_buffer_name(const tck_c_body *e, int32_t b, char *out, size_t cap) { kgen_buf_name(e->k, b, out, cap); }

static void body_atomic_add(const tck_c_body *e, tck_str *s, int depth, const char *guard, const char *index,
                            const char *elem, const char *value) {
  (void)e;
  tck_str_indent(s, depth);
  if (guard) tck_str_printf(s, "if (%s) {\n", guard);
  else tck_str_printf(s, "if (1 || %s) {\n", index);
  tck_str_indent(s, depth + 1);
  tck_str_puts(s, "#pragma omp atomic\n");
  tck_str_indent(s, depth + 1);
  tck_str_printf(s, "%s += %s;\n", elem, value);
  tck_str_indent(s, depth);
  tck_str_puts(s, "}\n");
}

static tck_c_body body_emitter(const icpu_kgen *g, const body_ctx *ctx) {
  return (tck_c_body){.k = g->k,
                      .x = &g->exprs,
                      .index_type = "int64_t",
                      .bool_type = "int",
                      .int_reduce_wraps = false,
                      .typed_identities = false,
                      .ctx = (void *)ctx,
                      .value_name = body_value_name,
                      .buffer_name = body_buffer_name,
                      .atomic_add = body_atomic_add};
}

static bool loop_is_simd_safe(const tc_kernel_desc *k, int32_t loop) {
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->loop != loop) continue;
    if (op->kind == TC_KOP_REDUCE && (op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN)) return false;
    if (op->kind == TC_KOP_STORE_ADD) return false;
    if (op->kind == TC_KOP_STORE && indirect_of(op) >= 0) return false;
    if (op->kind == TC_KOP_INDEX_CHECK) return false; /* may call tc_index_error: not a simd body */
  }
  return true;
}

/* A float max/min reduction, accumulated on integer keys (tc_maxkey_f32 in the prelude): the
 * NaN- and signed-zero-exact tc_max_f32 does not vectorize into anything short. */
static bool reduce_keyed(const tc_kop *op) {
  return op->kind == TC_KOP_REDUCE && (op->prim == TC_PRIM_REDUCE_MAX || op->prim == TC_PRIM_REDUCE_MIN) &&
         tck_dtype_is_float(op->dtype);
}

/* A float division inside the inner loop that op `from` opens, whose divisor is fixed over the
 * loop (a reduction of an earlier loop, or a per-row value, computed before the loop opens): it
 * becomes a multiply by a reciprocal taken once. */
static bool div_by_invariant(const tc_kernel_desc *k, const tc_kop *op, int32_t from) {
  return from >= 0 && from < k->n_ops && op->loop >= 0 && op->loop == op_at(k, from)->loop && op->kind == TC_KOP_PRIM &&
         op->prim == TC_PRIM_DIV && tck_dtype_is_float(op->dtype) && tck_op_arg(op, 1) >= 0 && tck_op_arg(op, 1) < from;
}

static bool index_same(const tc_index *a, const tc_index *b, int32_t n_vars) {
  if (!a || !b) return a == b;
  if (a->offset != b->offset || a->indirect != b->indirect) return false;
  for (int32_t v = 0; v < n_vars; v++)
    if (tck_index_stride(a, v) != tck_index_stride(b, v)) return false;
  return true;
}

static int64_t expr_const_or(const tc_kernel_list *list, int32_t id, int64_t otherwise) {
  const tc_size_expr *e = id >= 0 && id < list->n_exprs ? tck_list_expr(list, id) : NULL;
  return e && e->op == TC_SX_CONST ? e->value : otherwise;
}

/* An f32 output qualifies for a scratch row when every access to it is a load or store inside
 * the inner loops at one unit-stride index (so row_<name>[r] stands for it), the first access
 * is a store (the row never reads what was there before), the row fits the scratch, and the
 * buffer is not known to be small (then the cache should keep it for the next kernel). */
bool kgen_row_buffers(const tc_kernel_list *list, const tc_kernel_desc *k, bool *row_buf) {
  bool any = false;
  int64_t inner = k->inner >= 0 ? expr_const_or(list, k->inner, -1) : -1;
  int32_t nv = k->n_outer + 1;
  int64_t scratch = 0; /* elements of the rows marked so far */
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_kbuffer *kb = buf_at(k, b);
    row_buf[b] = false;
    if (k->n_outer < 1 || inner < 1 || kb->role == TC_BUF_INPUT || kb->dtype != TC_F32) continue;
    int64_t numel = expr_const_or(list, kb->numel, -1);
    if (numel >= 0 && numel * 4 < ICPU_STREAM_MIN_BYTES) continue;
    const tc_kop *first = NULL;
    bool ok = true;
    for (int32_t i = 0; i < k->n_ops && ok; i++) {
      const tc_kop *op = op_at(k, i);
      bool mem = op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD;
      if (!mem || op->buffer != b) continue;
      if (!first) {
        first = op;
        ok = op->kind == TC_KOP_STORE && indirect_of(op) < 0 && expr_const_or(list, tck_index_stride(op->index, nv - 1), 0) == 1;
      }
      ok = ok && op->kind != TC_KOP_STORE_ADD && op->loop >= 0 && index_same(op->index, first->index, nv);
    }
    /* Rows of different outer points must not overlap: scratch rows are private per point. */
    for (int32_t v = 0; ok && first && v < k->n_outer; v++) {
      int64_t st = tck_index_stride(first->index, v) < 0 ? 0 : expr_const_or(list, tck_index_stride(first->index, v), inner);
      ok = st >= inner || (st == 0 && expr_const_or(list, k->outer[v], 0) == 1);
    }
    /* Every scratch row sits on each thread's stack: keep them small together. */
    ok = ok && first && (scratch + inner) * 4 <= ICPU_ROW_SCRATCH_BYTES;
    row_buf[b] = ok;
    if (ok) scratch += inner;
    any |= ok;
  }
  return any;
}

/* Declares the accumulators of loop `loop` (op `from` opens it) and the reciprocals of its
 * divisions by loop-invariant values; appends the loop's reduction clauses to red. */
static void declare_loop_values(tck_str *s, const icpu_kgen *g, int32_t loop, int32_t from, int depth, tck_str *red) {
  const tc_kernel_desc *k = g->k;
  tck_c_body e = body_emitter(g, NULL);
  char idb[48];
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->loop != loop || op->kind != TC_KOP_REDUCE) continue;
    if (reduce_keyed(op)) {
      const char *mm = op->prim == TC_PRIM_REDUCE_MAX ? "max" : "min";
      tck_str_indent(s, depth);
      tck_str_printf(s, "%s v%d_key = tc_%skey_%s(%s);\n", op->dtype == TC_F32 ? "int32_t" : "int64_t", i, mm,
                 tck_dtype_name(op->dtype), tck_c_reduce_identity(op->prim, op->dtype, false, idb));
      tck_str_printf(red, " reduction(%s:v%d_key)", mm, i);
      if (i == g->row_min_of) {
        tck_str_indent(s, depth);
        tck_str_printf(s, "int32_t v%d_lo_key = INT32_MAX; /* the row's min too (tc_exp_normal_f32's check) */\n", i);
        tck_str_printf(red, " reduction(min:v%d_lo_key)", i);
      }
      continue;
    }
    tck_c_declare_accumulator(&e, s, i, depth, "0");
    switch (op->prim) {
    case TC_PRIM_REDUCE_SUM: tck_str_printf(red, " reduction(+:v%d)", i); break;
    case TC_PRIM_REDUCE_PROD: tck_str_printf(red, " reduction(*:v%d)", i); break;
    case TC_PRIM_REDUCE_MAX: case TC_PRIM_REDUCE_MIN: {
      const char *mm = op->prim == TC_PRIM_REDUCE_MAX ? "max" : "min";
      if (tck_dtype_is_float(op->dtype)) tck_str_printf(red, " reduction(tc_%s_%s:v%d)", mm, tck_dtype_name(op->dtype), i);
      else tck_str_printf(red, " reduction(%s:v%d)", mm, i);
      break;
    }
    default: break;
    }
  }
  for (int32_t i = from; i < k->n_ops && op_at(k, i)->loop == loop; i++) {
    const tc_kop *op = op_at(k, i);
    if (!div_by_invariant(k, op, from)) continue;
    bool seen = false;
    for (int32_t j = from; j < i && !seen; j++) seen = div_by_invariant(k, op_at(k, j), from) && tck_op_arg(op_at(k, j), 1) == tck_op_arg(op, 1);
    if (seen) continue;
    int32_t d = tck_op_arg(op, 1);
    const char *sx = tck_dtype_name(op->dtype);
    tck_str_indent(s, depth);
    /* named per inner loop: sibling loops may divide by the same value */
    tck_str_printf(s, "const %s v%d_recip_l%d = tc_recip_%s(v%d), v%d_recip_scale_l%d = tc_recip_scale_%s(v%d);\n",
               tck_c_dtype(op->dtype), d, (int)loop, sx, d, d, (int)loop, sx, d);
  }
}

static void emit_row_prefetch(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, int32_t part,
                              int32_t n_parts);

/* The pragma and header of loop `loop` over the block tc_rb .. tc_re (blocked) or the whole row;
 * red: its reduction clauses. */
static void open_loop_header(tck_str *s, const icpu_kgen *g, int32_t loop, const char *rvar, int depth, bool par,
                             bool blocked, const char *red) {
  const tc_kernel_desc *k = g->k;
  bool simd = loop_is_simd_safe(k, loop);
  tck_str_indent(s, depth);
  if (par) tck_str_printf(s, "#pragma omp parallel for%s num_threads(tc_nthreads) schedule(static)%s\n", simd ? " simd" : "",
                      red ? red : "");
  else if (simd) tck_str_printf(s, "#pragma omp simd%s\n", red ? red : "");
  else tck_str_puts(s, "/* not vectorized: an argmax or a scatter */\n");
  tck_str_indent(s, depth);
  if (blocked) {
    tck_str_printf(s, "for (int64_t %s = tc_rb; %s < tc_re; %s++) {\n", rvar, rvar, rvar);
  } else {
    tck_str_printf(s, "for (int64_t %s = 0; %s < ", rvar, rvar);
    tck_exprs_ref(s, &g->exprs, k->inner);
    tck_str_printf(s, "; %s++) {\n", rvar);
  }
}

/* Declares loop `loop`'s values and writes its pragma and header; returns the body's depth.
 * blocked: the loop runs in blocks of ICPU_ROW_BLOCK (tc_rb .. tc_re), each block's scratch
 * rows streamed out after it (close_inner_loop), each block touching its share of the row
 * after next (emit_row_prefetch). */
static int open_inner_loop(tck_str *s, const icpu_kgen *g, int32_t loop, int32_t from, const char *rvar, int depth,
                           bool par, bool blocked, const char *const *vars) {
  const tc_kernel_desc *k = g->k;
  tck_str red = {0};
  declare_loop_values(s, g, loop, from, depth, &red);
  if (blocked) {
    tck_str_indent(s, depth);
    tck_str_printf(s, "for (int64_t tc_rb = 0; tc_rb < ");
    tck_exprs_ref(s, &g->exprs, k->inner);
    tck_str_printf(s, "; tc_rb += %d) {\n", ICPU_ROW_BLOCK);
    depth++;
    tck_str_indent(s, depth);
    tck_str_printf(s, "const int64_t tc_re = tc_imin(tc_rb + %d, ", ICPU_ROW_BLOCK);
    tck_exprs_ref(s, &g->exprs, k->inner);
    tck_str_puts(s, ");\n");
    emit_row_prefetch(s, g, vars, depth, 0, 0);
  }
  open_loop_header(s, g, loop, rvar, depth, par, blocked, red.data);
  tck_str_free(&red);
  return depth + 1;
}

static void emit_row_store(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, int32_t b, bool block,
                           int32_t scale);

/* streamed: the buffers whose scratch rows go out per block (NULL: not blocked). */
static void close_inner_loop(tck_str *s, const icpu_kgen *g, int32_t loop, int depth, const bool *streamed,
                             const char *const *vars) {
  if (streamed) {
    tck_str_indent(s, depth + 1);
    tck_str_puts(s, "}\n");
    for (int32_t b = 0; b < g->k->n_buffers; b++)
      if (streamed[b]) emit_row_store(s, g, vars, depth + 1, b, true, -1);
  }
  tck_str_indent(s, depth);
  tck_str_puts(s, "}\n");
  for (int32_t i = 0; i < g->k->n_ops; i++) {
    const tc_kop *op = op_at(g->k, i);
    if (op->loop != loop || !reduce_keyed(op)) continue;
    tck_str_indent(s, depth);
    if (i != g->row_min_of) {
      tck_str_printf(s, "const %s v%d = tc_unkey_%s(v%d_key);\n", tck_c_dtype(op->dtype), i, tck_dtype_name(op->dtype), i);
      continue;
    }
    tck_str_printf(s, "const float v%d = tc_unkey_max_f32(v%d_key, v%d_lo_key); /* NaN if either key says so */\n", i, i, i);
    tck_str_indent(s, depth);
    tck_str_printf(s, "const float v%d_lo = tc_unkey_f32(v%d_lo_key);\n", i, i);
  }
}

/* One step of a keyed float max/min reduction (reduce_keyed) of value a; with_min: the f32 max
 * also keeps the row's min (icpu_kgen.row_min_of), both on plain keys (tc_key_f32): a positive
 * NaN's key is above +inf's, so the max catches it, a negative NaN's below -inf's, so the min
 * does, and tc_unkey_max_f32 makes the max NaN then. That saves tc_maxkey_f32's NaN select (two
 * of the max pass's seven vector instructions: softmax's unit 5% faster on the AVX2 Zen 3). */
static void emit_keyed_step(tck_str *s, int32_t i, const tc_kop *op, int32_t vt, int depth, const char *a, bool with_min) {
  const char *mm = op->prim == TC_PRIM_REDUCE_MAX ? "max" : "min";
  tck_str_indent(s, depth);
  if (with_min) tck_str_printf(s, "const int32_t v%d_next = tc_key_f32(%s);\n", i, a);
  else tck_str_printf(s, "const %s v%d_next = tc_%skey_%s(%s);\n", vt == TC_F32 ? "int32_t" : "int64_t", i, mm, tck_dtype_name(vt), a);
  tck_str_indent(s, depth);
  tck_str_printf(s, "v%d_key = v%d_next %s v%d_key ? v%d_next : v%d_key;\n", i, i, op->prim == TC_PRIM_REDUCE_MAX ? ">" : "<",
                 i, i, i);
  if (!with_min) return;
  tck_str_indent(s, depth);
  tck_str_printf(s, "v%d_lo_key = v%d_next < v%d_lo_key ? v%d_next : v%d_lo_key;\n", i, i, i, i, i);
}

/* Rows are walked several times each (one inner loop per reduction), with compute between the
 * passes, so the hardware prefetcher is idle when a row starts (and does not cross the page a
 * 4 KiB row fills). Touch the row after next of each buffer the first inner loop streams with
 * unit stride, spread over the row's compute: all of it at once stalls the row on full fill
 * buffers, where slices overlap the misses with the compute. A slice of it before each inner
 * loop (part of n_parts), or, where the last loop runs in blocks (n_parts 0), the block
 * tc_rb .. tc_re of it at the start of each block and nothing before the passes: that loop is
 * where a row with an expensive elementwise tail spends its time (ln_gelu 12% faster on the
 * AVX2 development VM with its erf split off, 15-30% on the GPU machine's Xeon; softmax, whose
 * time is in a pass before its last, keeps the slices: 10% slower with all of the row before
 * that pass). The touch loops sit outside the vectorized loops. */
static void emit_row_prefetch(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, int32_t part,
                              int32_t n_parts) {
  const tc_kernel_desc *k = g->k;
  if (k->n_outer == 0 || k->inner < 0) return;
  int32_t last = k->n_outer - 1, rv = k->n_outer;
  const char *names[TC_MAX_RANK + 1];
  char ahead[32];
  snprintf(ahead, sizeof ahead, "(%s + 2)", vars[last]);
  for (int32_t v = 0; v < k->n_outer; v++) names[v] = vars[v];
  names[last] = ahead;
  names[rv] = "0"; /* row start */
  int32_t done[8], n_done = 0;
  for (int32_t i = 0; i < k->n_ops && n_done < 8; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind != TC_KOP_LOAD || op->loop != 0 || indirect_of(op) >= 0 || tck_index_stride(op->index, last) < 0) continue;
    const tc_size_expr *rs = tck_index_stride(op->index, rv) >= 0 ? tck_list_expr(g->list, tck_index_stride(op->index, rv)) : NULL;
    if (!rs || rs->op != TC_SX_CONST || rs->value != 1) continue;
    bool seen = false;
    for (int32_t j = 0; j < n_done; j++) seen |= op_at(k, done[j])->buffer == op->buffer;
    if (seen) continue;
    done[n_done++] = i;
    char bname[80];
    kgen_buf_name(k, op->buffer, bname, sizeof bname);
    tck_str_indent(s, depth);
    tck_str_printf(s, "if (%s + 2 < ", vars[last]);
    tck_exprs_ref(s, &g->exprs, k->outer[last]);
    tck_str_printf(s, ") { /* prefetch %sa later row of %s */\n", n_parts ? "" : "this block of ", bname);
    tck_str_indent(s, depth + 1);
    tck_str_printf(s, "const char *p = (const char *)&%s[", bname);
    tck_index_emit(s, &g->exprs, op->index, names);
    tck_str_puts(s, "];\n");
    tck_str_indent(s, depth + 1);
    int size = (int)tck_dtype_size(op->dtype);
    if (n_parts == 0) {
      tck_str_printf(s, "for (int64_t q = tc_rb*%d/64*64; q < tc_re*%d; q += 64) __builtin_prefetch(p + q);\n", size, size);
      tck_str_indent(s, depth);
      tck_str_puts(s, "}\n");
      continue;
    }
    tck_str_puts(s, "for (int64_t q = ");
    if (part == 0) tck_str_puts(s, "0");
    else { tck_exprs_ref(s, &g->exprs, k->inner); tck_str_printf(s, "*%d*%d/%d/64*64", size, part, n_parts); }
    tck_str_puts(s, "; q < ");
    tck_exprs_ref(s, &g->exprs, k->inner);
    if (part + 1 < n_parts) tck_str_printf(s, "*%d*%d/%d/64*64", size, part + 1, n_parts);
    else tck_str_printf(s, "*%d", size);
    tck_str_puts(s, "; q += 64) __builtin_prefetch(p + q);\n");
    tck_str_indent(s, depth);
    tck_str_puts(s, "}\n");
  }
}

/* Scratch row b goes out to its buffer: all of it from the row's start, or (block) the block
 * tc_rb .. tc_re just computed. scale >= 0: the division op folded into the store
 * (scaled_store_loop), which multiplies by its reciprocals on the way out. */
static void emit_row_store(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, int32_t b, bool block,
                           int32_t scale) {
  const tc_kernel_desc *k = g->k;
  const char *names[TC_MAX_RANK + 1];
  for (int32_t v = 0; v < k->n_outer; v++) names[v] = vars[v];
  names[k->n_outer] = "0";
  const tc_kop *store = NULL;
  for (int32_t i = 0; i < k->n_ops && !store; i++)
    if (op_at(k, i)->kind == TC_KOP_STORE && op_at(k, i)->buffer == b) store = op_at(k, i);
  char bname[80];
  kgen_buf_name(k, b, bname, sizeof bname);
  tck_str_indent(s, depth);
  tck_str_printf(s, "tc_row_store%s_f32(&%s[", scale >= 0 ? "_scaled" : "", bname);
  tck_index_emit(s, &g->exprs, store->index, names);
  if (block) {
    tck_str_printf(s, " + tc_rb], row_%s + tc_rb, tc_re - tc_rb, stream_%s);\n", bname, bname);
    return;
  }
  tck_str_printf(s, "], row_%s, ", bname);
  tck_exprs_ref(s, &g->exprs, k->inner);
  tck_str_printf(s, ", stream_%s", bname);
  if (scale >= 0) {
    const tc_kop *div = op_at(k, scale);
    int32_t d = tck_op_arg(div, 1), l = div->loop;
    tck_str_printf(s, ", v%d_recip_l%d, v%d_recip_scale_l%d", d, (int)l, d, (int)l);
  }
  tck_str_puts(s, ");\n");
}

/* At the end of a row: each scratch row not streamed per block goes out to its buffer, row
 * scaled_b through the division op scale (-1: none). */
static void emit_row_stores(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, const bool *streamed,
                            int32_t scaled_b, int32_t scale) {
  if (!g->row_buf) return;
  for (int32_t b = 0; b < g->k->n_buffers; b++)
    if (g->row_buf[b] && !(streamed && streamed[b])) emit_row_store(s, g, vars, depth, b, false, b == scaled_b ? scale : -1);
}

/* The row's last inner loop, ops from .. to, only divides scratch row b by a value fixed over
 * the row, in place (load, divide, store: softmax's normalization). It folds into the row's
 * store (tc_row_store_scaled_f32), which multiplies on the way out instead of a pass that reads
 * and writes the scratch row once more. Returns the division op (-1: not such a loop), sets *b. */
static int32_t scaled_store_loop(const icpu_kgen *g, int32_t from, int32_t to, int32_t *b) {
  const tc_kernel_desc *k = g->k;
  if (!g->row_buf || to != k->n_ops || to - from != 3) return -1;
  const tc_kop *load = op_at(k, from), *div = op_at(k, from + 1), *store = op_at(k, from + 2);
  bool ok = load->kind == TC_KOP_LOAD && load->dtype == TC_F32 && load->buffer >= 0 && load->buffer < k->n_buffers &&
            g->row_buf[load->buffer] && indirect_of(load) < 0 && div_by_invariant(k, div, from) &&
            div->dtype == TC_F32 && tck_op_arg(div, 0) == from && store->kind == TC_KOP_STORE &&
            store->buffer == load->buffer && tck_op_arg(store, 0) == from + 1;
  if (!ok) return -1;
  *b = load->buffer;
  return from + 1;
}

/* The last inner loop runs in blocks when it writes scratch rows that no later op writes: each
 * block streams out right after it is computed, so the streaming stores drain while the next
 * block computes instead of stalling a copy loop at the end of the row (6-8% of ln_gelu on
 * the development VM). Returns that loop, and marks the buffers in streamed. */
static int32_t blocked_loop(const icpu_kgen *g, bool *streamed) {
  const tc_kernel_desc *k = g->k;
  if (!g->row_buf || k->n_ops == 0 || k->n_buffers > 64) return -1;
  int32_t last = op_at(k, k->n_ops - 1)->loop, first = k->n_ops - 1;
  if (last < 0) return -1;
  while (first > 0 && op_at(k, first - 1)->loop == last) first--;
  for (int32_t i = 0; i < first; i++)
    if (op_at(k, i)->loop == last) return -1; /* the loop opens twice */
  bool any = false;
  for (int32_t b = 0; b < k->n_buffers; b++) {
    streamed[b] = false;
    if (!g->row_buf[b]) continue;
    bool in_last = false, elsewhere = false;
    for (int32_t i = 0; i < k->n_ops; i++) {
      const tc_kop *op = op_at(k, i);
      if (op->kind != TC_KOP_STORE || op->buffer != b) continue;
      if (i >= first) in_last = true;
      else elsewhere = true;
    }
    streamed[b] = in_last && !elsewhere;
    any |= streamed[b];
  }
  return any ? last : -1;
}

/* The values op reads: operand a for a = 0 .. n_args - 1, and (a = -1) the value indexing its
 * memory access; -1 where there is none. */
static int32_t op_reads(const tc_kop *op, int32_t a) { return a < 0 ? indirect_of(op) : tck_op_arg(op, a); }

/* A prim costly enough that the compiler cannot keep the whole loop body in registers with it. */
static bool costly_prim(const tc_kop *op) {
  if (op->kind != TC_KOP_PRIM) return false;
  switch (op->prim) {
  case TC_PRIM_EXP: case TC_PRIM_LOG: case TC_PRIM_SIN: case TC_PRIM_COS: case TC_PRIM_TANH: case TC_PRIM_ERF:
  case TC_PRIM_POW: return true;
  default: return false;
  }
}

/* The blocked last loop (ops from .. to) splits in two at `cut`, before its first costly prim:
 * the first loop ends by storing the one value that crosses into the block of scratch row *b at
 * r, the second starts by loading it back, and the compiler then schedules each half with its
 * own constants in registers (ln_gelu's layer norm then its erf: AVX2 has 16 vector registers,
 * the erf alone needs 11 coefficients; with the block's prefetch, 12% faster on the AVX2
 * development VM). A float stored and loaded back is the same float: the results do not change.
 * The cut is the latest one at or before that prim where a single f32 value (not a load) crosses;
 * the scratch row is the one the loop stores last, which it never loads. Loops with reductions
 * stay whole. Returns cut (-1: no split) and sets *value and *b. */
static int32_t fission_cut(const icpu_kgen *g, int32_t from, int32_t to, const bool *streamed, int32_t *value,
                           int32_t *b) {
  const tc_kernel_desc *k = g->k;
  int32_t costly = -1, row = -1, row_store = -1;
  for (int32_t i = from; i < to; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind == TC_KOP_REDUCE || op->kind == TC_KOP_STORE_ADD || op->kind == TC_KOP_INDEX_CHECK) return -1;
    if (costly < 0 && costly_prim(op)) costly = i;
    if (op->kind == TC_KOP_STORE && op->buffer >= 0 && op->buffer < k->n_buffers && streamed[op->buffer])
      row = op->buffer, row_store = i;
  }
  if (costly < 0 || row < 0 || op_at(k, row_store)->dtype != TC_F32) return -1;
  for (int32_t i = from; i < to; i++)
    if (op_at(k, i)->buffer == row && op_at(k, i)->kind != TC_KOP_PRIM && i != row_store) return -1;
  for (int32_t cut = costly; cut > from; cut--) {
    int32_t live = -1;
    bool one = true;
    for (int32_t j = cut; j < to && one; j++) {
      const tc_kop *op = op_at(k, j);
      for (int32_t a = -1; a < op->n_args && one; a++) {
        int32_t v = op_reads(op, a);
        if (v < from || v >= cut || v == live) continue;
        if (live >= 0) one = false;
        else live = v;
      }
    }
    if (!one || live < 0) continue;
    const tc_kop *lv = op_at(k, live);
    if (lv->kind != TC_KOP_PRIM || lv->dtype != TC_F32 || row_store < cut) return -1;
    *value = live;
    *b = row;
    return cut;
  }
  return -1;
}

/* The second half of a split loop splits again when the costly prim (the first at or after cut)
 * can run alone: the ops of [cut, to) it needs (its cone, marked in cone[j - cut]) are prims
 * and constants, and no op outside the cone uses any of them but the prim's f32 value. Then the
 * prim's loop writes its values into a block-sized array and the last loop reads them back, so
 * each loop holds fewer values in flight (ln_gelu's erf then gelu's arithmetic: 4% on the AVX2
 * development VM). Returns the prim (-1: no such split). */
#define ICPU_CONE_MAX 256
static int32_t costly_alone(const tc_kernel_desc *k, int32_t cut, int32_t to, bool *cone) {
  if (to - cut > ICPU_CONE_MAX) return -1;
  int32_t costly = -1;
  for (int32_t j = cut; j < to && costly < 0; j++)
    if (costly_prim(op_at(k, j))) costly = j;
  if (costly < 0 || op_at(k, costly)->dtype != TC_F32) return -1;
  for (int32_t j = cut; j < to; j++) cone[j - cut] = j == costly;
  for (int32_t j = costly; j >= cut; j--) {
    if (!cone[j - cut]) continue;
    const tc_kop *op = op_at(k, j);
    if (op->kind != TC_KOP_PRIM && op->kind != TC_KOP_CONST) return -1;
    for (int32_t a = -1; a < op->n_args; a++) {
      int32_t v = op_reads(op, a);
      if (v >= cut && v < to) cone[v - cut] = true;
    }
  }
  for (int32_t j = cut; j < to; j++) {
    if (cone[j - cut]) continue;
    const tc_kop *op = op_at(k, j);
    for (int32_t a = -1; a < op->n_args; a++) {
      int32_t v = op_reads(op, a);
      if (v >= cut && v < to && cone[v - cut] && v != costly) return -1;
    }
  }
  return costly;
}

/* Op i is exp(x - m), x an element of a row and m the max over that row (softmax): its argument
 * is <= 0 or NaN, so tc_exp_nonpos_f32 (no overflow select) gives tc_exp_f32's results. The row
 * is the same buffer at the same index in both loads, and nothing in the kernel stores to it. */
static bool exp_of_row_minus_max(const tc_kernel_desc *k, int32_t i) {
  const tc_kop *op = op_at(k, i);
  if (op->kind != TC_KOP_PRIM || op->prim != TC_PRIM_EXP || op->dtype != TC_F32) return false;
  int32_t a = tck_op_arg(op, 0);
  if (a < 0 || a >= i) return false;
  const tc_kop *sub = op_at(k, a);
  if (sub->kind != TC_KOP_PRIM || sub->prim != TC_PRIM_SUB || sub->dtype != TC_F32) return false;
  int32_t x = tck_op_arg(sub, 0), m = tck_op_arg(sub, 1);
  if (x < 0 || m < 0) return false;
  const tc_kop *xo = op_at(k, x), *mo = op_at(k, m);
  if (mo->kind != TC_KOP_REDUCE || mo->prim != TC_PRIM_REDUCE_MAX || mo->dtype != TC_F32 || tck_op_arg(mo, 0) < 0) return false;
  const tc_kop *yo = op_at(k, tck_op_arg(mo, 0));
  if (xo->kind != TC_KOP_LOAD || yo->kind != TC_KOP_LOAD || xo->buffer != yo->buffer || xo->buffer < 0 ||
      indirect_of(xo) >= 0 || !index_same(xo->index, yo->index, k->n_outer + 1))
    return false;
  for (int32_t j = 0; j < k->n_ops; j++) {
    const tc_kop *w = op_at(k, j);
    if ((w->kind == TC_KOP_STORE || w->kind == TC_KOP_STORE_ADD) && w->buffer == xo->buffer) return false;
  }
  return true;
}

/* The max m that the exp(x - m) ops (exp_of_row_minus_max) of ops from .. to all take, or -1
 * (none, or several maxes). */
static int32_t exp_row_max(const tc_kernel_desc *k, int32_t from, int32_t to) {
  int32_t m = -1;
  for (int32_t i = from; i < to; i++) {
    if (!exp_of_row_minus_max(k, i)) continue;
    int32_t mi = tck_op_arg(op_at(k, tck_op_arg(op_at(k, i), 0)), 1);
    if (m >= 0 && mi != m) return -1;
    m = mi;
  }
  return m;
}

/* Emits op i at depth d: scratch rows, keyed max/min and divisions by loop invariants here, the
 * rest through the kit. cur/from: the inner loop open (-1: none) and the op that opened it;
 * vars[n_outer]: that loop's variable (an expression for a split copy); sfx: the copy's suffix. */
static tc_status emit_op(tck_str *s, const icpu_kgen *g, int32_t i, const char *const *vars, int d, int32_t cur,
                         int32_t from, const char *sfx, const char *acc_expr, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_kop *op = op_at(k, i);
  const char *rvar = vars[k->n_outer];
  body_ctx ctx = {g, cur};
  tck_c_body e = body_emitter(g, &ctx);
  bool row = op->buffer >= 0 && op->buffer < k->n_buffers && g->row_buf && g->row_buf[op->buffer];
  bool row_access = row && (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE);
  bool div = cur >= 0 && tck_op_arg(op, 0) >= 0 && div_by_invariant(k, op, from);
  bool exp_nonpos = exp_of_row_minus_max(k, i);
  if (!row_access && !div && !exp_nonpos && !reduce_keyed(op)) return tck_c_op(&e, s, i, vars, d, sfx, acc_expr, err, cap);
  char bname[80] = "", V[48], A[48], B[48];
  if (row) kgen_buf_name(k, op->buffer, bname, sizeof bname);
  body_value_name(&e, i, sfx, V, sizeof V);
  body_value_name(&e, tck_op_arg(op, 0), sfx, A, sizeof A);
  body_value_name(&e, tck_op_arg(op, 1), sfx, B, sizeof B);
  if (reduce_keyed(op)) {
    emit_keyed_step(s, i, op, op_at(k, tck_op_arg(op, 0))->dtype, d, A, i == g->row_min_of);
    return TC_OK;
  }
  tck_str_indent(s, d);
  if (exp_nonpos && g->exp_normal)
    tck_str_printf(s, "const float %s = tc_exp_normal_f32(%s); /* x - max(x): in [TC_EXP_NORMAL_MIN, 0] */\n", V, A);
  else if (exp_nonpos)
    tck_str_printf(s, "const float %s = tc_exp_nonpos_f32(%s); /* x - max(x): <= 0 or NaN */\n", V, A);
  else if (op->kind == TC_KOP_LOAD)
    tck_str_printf(s, "const %s %s = row_%s[%s];\n", tck_c_dtype(op->dtype), V, bname, rvar);
  else if (op->kind == TC_KOP_STORE)
    tck_str_printf(s, "row_%s[%s] = (float)%s;\n", bname, rvar, A);
  else
    tck_str_printf(s, "const %s %s = %s * %s_recip_l%d * %s_recip_scale_l%d; /* %s / %s */\n", tck_c_dtype(op->dtype), V, A,
                   B, (int)op->loop, B, (int)op->loop, A, B);
  return TC_OK;
}

/* A row-reduction loop whose reductions are all float sums runs as ICPU_SPLIT interleaved
 * quarters of the row, each summed into its own accumulator: one accumulator is a chain of
 * dependent additions, and four streams through the row keep more loads in flight (3-5% of
 * ln_gelu on the development VM). A loop with a costly prim (softmax's exp) runs as two halves:
 * its body, not the chain of additions, sets its pace, and four copies of an exp's constants and
 * temporaries do not fit AVX2's 16 registers (GCC spilled three of the four accumulators:
 * softmax's unit 14.3-14.6 cycles per 8 floats in L2 with quarters, 13.7-13.9 with halves, on the
 * AVX2 Zen 3). The leftover elements (n not a multiple of the copies) go through the plain loop
 * into the first accumulator; the copies are added in a fixed order, so results are
 * deterministic for each n. */
#define ICPU_SPLIT 4
static bool split_loop(const tc_kernel_desc *k, int32_t loop, int32_t from, int32_t to) {
  if (!loop_is_simd_safe(k, loop)) return false;
  int32_t sums = 0;
  for (int32_t i = from; i < to; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind != TC_KOP_REDUCE) continue;
    if (op->prim != TC_PRIM_REDUCE_SUM || !tck_dtype_is_float(op->dtype)) return false;
    sums++;
  }
  return sums > 0;
}

/* How many copies of the row the split loop of ops from .. to walks side by side. */
static int split_ways(const tc_kernel_desc *k, int32_t from, int32_t to) {
  for (int32_t i = from; i < to; i++)
    if (costly_prim(op_at(k, i))) return 2;
  return ICPU_SPLIT;
}

static tc_status emit_split_loop(tck_str *s, const icpu_kgen *g, const char *const *vars, int depth, int32_t loop,
                                 int32_t from, int32_t to, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  int32_t nv = k->n_outer + 1;
  const int ways = split_ways(k, from, to);
  /* the accumulators v<i> and their recips, as for a plain loop; the copies' accumulators */
  tck_str_indent(s, depth);
  tck_str_puts(s, "{\n");
  int d = depth + 1;
  tck_str red = {0};
  for (int32_t i = from; i < to; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind != TC_KOP_REDUCE) continue;
    for (int c = 1; c < ways; c++) {
      tck_str_indent(s, d);
      tck_str_printf(s, "%s v%d_%d = 0;\n", tck_c_dtype(op->dtype), i, c);
    }
    for (int c = 0; c < ways; c++) tck_str_printf(&red, c ? ",v%d_%d" : " reduction(+:v%d", i, c);
    tck_str_puts(&red, ")");
  }
  tck_str_indent(s, d);
  tck_str_puts(s, "const int64_t tc_q = ");
  tck_exprs_ref(s, &g->exprs, k->inner);
  tck_str_printf(s, " / %d; /* a %s row: the copies walk it side by side */\n", ways, ways == 2 ? "half" : "quarter");
  tck_str_indent(s, d);
  tck_str_printf(s, "#pragma omp simd%s\n", red.data ? red.data : "");
  tck_str_free(&red);
  tck_str_indent(s, d);
  tck_str_puts(s, "for (int64_t r = 0; r < tc_q; r++) {\n");
  const char *cvars[TC_MAX_RANK + 1];
  for (int32_t v = 0; v < nv; v++) cvars[v] = vars[v];
  static const char *const copy_at[ICPU_SPLIT] = {"r", "(r + tc_q)", "(r + 2*tc_q)", "(r + 3*tc_q)"};
  for (int c = 0; c < ways; c++) {
    char sfx[16] = "";
    if (c) snprintf(sfx, sizeof sfx, "_%d", c);
    cvars[nv - 1] = copy_at[c];
    for (int32_t i = from; i < to; i++) {
      tc_status st = emit_op(s, g, i, cvars, d + 1, loop, from, sfx, NULL, err, cap);
      if (st != TC_OK) return st;
    }
  }
  tck_str_indent(s, d);
  tck_str_puts(s, "}\n");
  tck_str_indent(s, d);
  tck_str_puts(s, "#pragma omp simd");
  for (int32_t i = from; i < to; i++)
    if (op_at(k, i)->kind == TC_KOP_REDUCE) tck_str_printf(s, " reduction(+:v%d)", i);
  tck_str_puts(s, "\n");
  tck_str_indent(s, d);
  tck_str_printf(s, "for (int64_t r = %d*tc_q; r < ", ways);
  tck_exprs_ref(s, &g->exprs, k->inner);
  tck_str_puts(s, "; r++) { /* the leftovers */\n");
  cvars[nv - 1] = "r";
  for (int32_t i = from; i < to; i++) {
    tc_status st = emit_op(s, g, i, cvars, d + 1, loop, from, "", NULL, err, cap);
    if (st != TC_OK) return st;
  }
  tck_str_indent(s, d);
  tck_str_puts(s, "}\n");
  for (int32_t i = from; i < to; i++) {
    if (op_at(k, i)->kind != TC_KOP_REDUCE) continue;
    tck_str_indent(s, d);
    if (ways == 2) tck_str_printf(s, "v%d = v%d + v%d_1;\n", i, i, i);
    else tck_str_printf(s, "v%d = (v%d + v%d_1) + (v%d_2 + v%d_3);\n", i, i, i, i, i);
  }
  tck_str_indent(s, depth);
  tck_str_puts(s, "}\n");
  return TC_OK;
}

/* Where the blocked loop (ops from .. to, body at depth d) reaches `cut` (fission_cut): parks
 * `value` in scratch row `row` and closes the loop; when the costly prim `alone` runs alone
 * (costly_alone), a loop of its cone that leaves the prim's values in tc_part; then opens the
 * last loop, which loads them back, for the ops of [cut, to) outside the cone. */
static tc_status emit_loop_splits(tck_str *s, const icpu_kgen *g, const char *const *vars, int d, int32_t cur,
                                  int32_t from, int32_t cut, int32_t to, int32_t value, int32_t row, int32_t alone,
                                  const bool *cone, char *err, size_t cap) {
  const char *rvar = vars[g->k->n_outer];
  char bname[80];
  kgen_buf_name(g->k, row, bname, sizeof bname);
  tck_str_indent(s, d);
  tck_str_printf(s, "row_%s[%s] = v%d; /* the next loops take it from here */\n", bname, rvar, (int)value);
  tck_str_indent(s, d - 1);
  tck_str_puts(s, "}\n");
  if (alone >= 0) {
    tck_str_indent(s, d - 1);
    tck_str_printf(s, "float tc_part[%d] __attribute__((aligned(64))); /* v%d of the block */\n", ICPU_ROW_BLOCK,
                   (int)alone);
    open_loop_header(s, g, cur, rvar, d - 1, false, true, NULL);
    tck_str_indent(s, d);
    tck_str_printf(s, "const float v%d = row_%s[%s];\n", (int)value, bname, rvar);
    for (int32_t c = cut; c < to; c++) {
      if (!cone[c - cut]) continue;
      tc_status st = emit_op(s, g, c, vars, d, cur, from, "", NULL, err, cap);
      if (st != TC_OK) return st;
    }
    tck_str_indent(s, d);
    tck_str_printf(s, "tc_part[%s - tc_rb] = v%d;\n", rvar, (int)alone);
    tck_str_indent(s, d - 1);
    tck_str_puts(s, "}\n");
  }
  open_loop_header(s, g, cur, rvar, d - 1, false, true, NULL);
  tck_str_indent(s, d);
  tck_str_printf(s, "const float v%d = row_%s[%s];\n", (int)value, bname, rvar);
  if (alone >= 0) {
    tck_str_indent(s, d);
    tck_str_printf(s, "const float v%d = tc_part[%s - tc_rb];\n", (int)alone, rvar);
  }
  return TC_OK;
}

/* How kgen_body writes the inner loop of ops from .. to (loop cur). */
typedef enum loop_form {
  FORM_LOOP,         /* one loop (open_inner_loop), per block where cur is the blocked loop */
  FORM_SCALED_STORE, /* no loop: the row's store divides (scaled_store_loop) */
  FORM_SPLIT         /* quarters side by side (split_loop) */
} loop_form;

static loop_form form_of(const icpu_kgen *g, int32_t cur, int32_t from, int32_t to, bool plain, int32_t *b, int32_t *div) {
  *div = plain ? scaled_store_loop(g, from, to, b) : -1;
  if (*div >= 0) return FORM_SCALED_STORE;
  return plain && split_loop(g->k, cur, from, to) ? FORM_SPLIT : FORM_LOOP;
}

/* A split loop whose exp(x - max) ops all take one max m (softmax's, log_softmax's sum of
 * exps): the max's loop keeps the row's min as well, and the split loop is written twice, once
 * with tc_exp_normal_f32 for rows where tc_exp_normal_row_f32(min, max) holds (every exp normal: 14
 * vector instructions per exp instead of 23) and once with tc_exp_nonpos_f32 for the rest (subnormal results,
 * -inf, NaN). Returns m for the first such loop, -1 if none. */
static int32_t exp_normal_max(const icpu_kgen *g, bool par_inner, const char *acc_expr, int32_t blocked) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops;) {
    int32_t cur = op_at(k, i)->loop, to = i + 1;
    if (cur < 0) {
      i++;
      continue;
    }
    while (to < k->n_ops && op_at(k, to)->loop == cur) to++;
    int32_t b, div, m = exp_row_max(k, i, to);
    bool plain = !par_inner && !acc_expr && cur != blocked;
    if (m >= 0 && form_of(g, cur, i, to, plain, &b, &div) == FORM_SPLIT) return m;
    i = to;
  }
  return -1;
}

/* The split loop of ops from .. to; where its exps are the ones exp_normal_max chose (g's
 * row_min_of), twice, behind the row's check: tc_exp_normal_f32, else tc_exp_nonpos_f32. */
static tc_status emit_split_loops(tck_str *s, icpu_kgen *g, const char *const *vars, int depth, int32_t cur,
                                  int32_t from, int32_t to, char *err, size_t cap) {
  int32_t m = g->row_min_of;
  if (m < 0 || exp_row_max(g->k, from, to) != m) return emit_split_loop(s, g, vars, depth, cur, from, to, err, cap);
  tck_str_indent(s, depth);
  tck_str_printf(s, "if (tc_exp_normal_row_f32(v%d_lo, v%d)) { /* every x - max(x) of the row: tc_exp_normal_f32 */\n", m, m);
  g->exp_normal = true;
  tc_status st = emit_split_loop(s, g, vars, depth + 1, cur, from, to, err, cap);
  g->exp_normal = false;
  if (st != TC_OK) return st;
  tck_str_indent(s, depth);
  tck_str_puts(s, "} else { /* a subnormal exp, an infinity or a NaN */\n");
  st = emit_split_loop(s, g, vars, depth + 1, cur, from, to, err, cap);
  tck_str_indent(s, depth);
  tck_str_puts(s, "}\n");
  return st;
}

tc_status kgen_body(tck_str *s, const icpu_kgen *g_in, const char *const *vars, int depth, bool par_inner,
                    const char *acc_expr, char *err, size_t cap) {
  const tc_kernel_desc *k = g_in->k;
  const char *rvar = vars[k->n_outer];
  int32_t n_loops = 0;
  for (int32_t i = 0; i < k->n_ops; i++)
    if (op_at(k, i)->loop + 1 > n_loops) n_loops = op_at(k, i)->loop + 1;
  bool streamed[64];
  int32_t blocked = par_inner || acc_expr ? -1 : blocked_loop(g_in, streamed);
  icpu_kgen gl = *g_in; /* with this body's row_min_of and exp_normal */
  const icpu_kgen *g = &gl;
  gl.exp_normal = false;
  gl.row_min_of = exp_normal_max(g, par_inner, acc_expr, blocked);
  int32_t scaled_b = -1, scale = -1;
  for (int32_t i = 0; i < k->n_ops;) {
    int32_t cur = op_at(k, i)->loop;
    if (cur < 0) { /* per row (or per point) */
      tc_status st = emit_op(s, g, i, vars, depth, -1, -1, "", acc_expr, err, cap);
      if (st != TC_OK) return st;
      i++;
      continue;
    }
    int32_t from = i, to = i;
    while (to < k->n_ops && op_at(k, to)->loop == cur) to++;
    if (!par_inner && !acc_expr && blocked < 0) emit_row_prefetch(s, g, vars, depth, cur, n_loops);
    const bool plain = !par_inner && !acc_expr && cur != blocked; /* a serial loop, not per block */
    int32_t b = -1, div;
    loop_form form = form_of(g, cur, from, to, plain, &b, &div);
    if (form != FORM_LOOP) { /* their values here: neither opens a loop through open_inner_loop */
      tck_str unused = {0};
      declare_loop_values(s, g, cur, from, depth, &unused);
      tck_str_free(&unused);
    }
    if (form == FORM_SCALED_STORE) {
      scaled_b = b, scale = div;
    } else if (form == FORM_SPLIT) {
      tc_status st = emit_split_loops(s, &gl, vars, depth, cur, from, to, err, cap);
      if (st != TC_OK) return st;
    } else {
      int d = open_inner_loop(s, g, cur, from, rvar, depth, par_inner, cur == blocked, vars);
      int32_t value = -1, row = -1, cut = cur == blocked ? fission_cut(g, from, to, streamed, &value, &row) : -1;
      bool cone[ICPU_CONE_MAX];
      int32_t alone = cut >= 0 ? costly_alone(k, cut, to, cone) : -1;
      for (int32_t j = from; j < to; j++) {
        if (j == cut) { /* the loop's second half (fission_cut), and the costly prim's own loop */
          tc_status st = emit_loop_splits(s, g, vars, d, cur, from, cut, to, value, row, alone, cone, err, cap);
          if (st != TC_OK) return st;
        }
        if (alone >= 0 && j >= cut && cone[j - cut]) continue; /* in the costly prim's loop */
        tc_status st = emit_op(s, g, j, vars, d, cur, from, "", acc_expr, err, cap);
        if (st != TC_OK) return st;
      }
      close_inner_loop(s, g, cur, depth, cur == blocked ? streamed : NULL, vars);
    }
    i = to;
  }
  emit_row_stores(s, g, vars, depth, blocked >= 0 ? streamed : NULL, scaled_b, scale);
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}

/* The outer loop nest around the body. par_inner: outer points run serially, inner loops in
 * parallel (the two-level reduction for a few long rows). */
static tc_status emit_nest(tck_str *s, icpu_kgen *g, bool has_inner, bool par_inner, int depth, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  static const char *const vars[TC_MAX_RANK + 1] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
  const char *names[TC_MAX_RANK + 1];
  for (int32_t v = 0; v < k->n_outer; v++) names[v] = vars[v];
  names[k->n_outer] = "r";
  bool simd_ok = true;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->kind == TC_KOP_STORE_ADD || (op->kind == TC_KOP_STORE && indirect_of(op) >= 0)) simd_ok = false;
  }
  const bool *row_buf = g->row_buf;
  g->row_buf = par_inner || k->n_outer == 0 ? NULL : row_buf;
  bool rows = false;
  for (int32_t b = 0; g->row_buf && b < k->n_buffers; b++) rows |= g->row_buf[b];
  int d = depth;
  if (k->n_outer == 0) {
    tck_str_indent(s, d);
    tck_str_puts(s, "{\n");
    d++;
  } else if (par_inner) {
    for (int32_t v = 0; v < k->n_outer; v++) {
      tck_str_indent(s, d);
      tck_str_printf(s, "for (int64_t %s = 0; %s < ", vars[v], vars[v]);
      tck_exprs_ref(s, &g->exprs, k->outer[v]);
      tck_str_printf(s, "; %s++) {\n", vars[v]);
      d++;
    }
  } else {
    /* Row kernels parallelize every outer dim; pointwise kernels keep the last one for SIMD. */
    int32_t n_par = has_inner || k->n_outer == 1 ? k->n_outer : k->n_outer - 1;
    if (rows) {
      /* A parallel region around the loop, so each thread has its scratch rows and fences its
       * streaming stores once, after its last row. */
      tck_str_indent(s, d);
      tck_str_printf(s, "#pragma omp parallel num_threads(tc_nthreads) if(work >= %d)\n", ICPU_PAR_MIN_WORK);
      tck_str_indent(s, d);
      tck_str_puts(s, "{\n");
      d++;
      for (int32_t b = 0; b < k->n_buffers; b++) {
        if (!g->row_buf[b]) continue;
        char bname[80];
        kgen_buf_name(k, b, bname, sizeof bname);
        tck_str_indent(s, d);
        tck_str_printf(s, "float row_%s[", bname);
        tck_exprs_ref(s, &g->exprs, k->inner);
        tck_str_printf(s, "] __attribute__((aligned(64))); /* this thread's row of %s */\n", bname);
      }
      tck_str_indent(s, d);
      tck_str_puts(s, "#pragma omp for");
      if (n_par > 1) tck_str_printf(s, " collapse(%d)", n_par);
      tck_str_puts(s, " schedule(static) nowait\n");
    } else {
      tck_str_indent(s, d);
      tck_str_printf(s, "#pragma omp parallel for%s", !has_inner && k->n_outer == 1 && simd_ok ? " simd" : "");
      if (n_par > 1) tck_str_printf(s, " collapse(%d)", n_par);
      tck_str_printf(s, " num_threads(tc_nthreads) schedule(static) if(work >= %d)\n", ICPU_PAR_MIN_WORK);
    }
    for (int32_t v = 0; v < k->n_outer; v++) {
      if (v == n_par && simd_ok) { tck_str_indent(s, d); tck_str_puts(s, "#pragma omp simd\n"); }
      tck_str_indent(s, d);
      tck_str_printf(s, "for (int64_t %s = 0; %s < ", vars[v], vars[v]);
      tck_exprs_ref(s, &g->exprs, k->outer[v]);
      tck_str_printf(s, "; %s++)%s\n", vars[v], v == k->n_outer - 1 ? " {" : "");
      if (v == k->n_outer - 1) d++;
    }
  }
  tc_status st = kgen_body(s, g, names, d, par_inner, NULL, err, cap);
  g->row_buf = row_buf;
  if (st != TC_OK) return st;
  if (k->n_outer == 0) { tck_str_indent(s, depth); tck_str_puts(s, "}\n"); }
  else if (par_inner) {
    for (int32_t v = k->n_outer - 1; v >= 0; v--) { tck_str_indent(s, depth + v); tck_str_puts(s, "}\n"); }
  } else {
    tck_str_indent(s, d - 1);
    tck_str_puts(s, "}\n");
    if (rows) {
      tck_str_indent(s, depth + 1);
      tck_str_puts(s, "tc_stream_fence();\n");
      tck_str_indent(s, depth);
      tck_str_puts(s, "}\n");
    }
  }
  return TC_OK;
}

tc_status codegen_loop(tck_str *s, icpu_kgen *g, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  if (k->n_outer < 0 || k->n_outer > TC_MAX_RANK) {
    snprintf(err, cap, "n_outer %d out of range", k->n_outer);
    return TC_ERR_INVALID_ARGUMENT;
  }
  bool has_inner = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->loop >= 0) has_inner = true;
    if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD ||
        op->kind == TC_KOP_INDEX || op->kind == TC_KOP_RANDOM)
      tck_exprs_mark_index(&g->exprs, op->index);
    if ((op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) && indirect_of(op) >= 0 &&
        op->buffer >= 0 && op->buffer < k->n_buffers)
      tck_exprs_mark(&g->exprs, tck_kernel_buffer(k, op->buffer)->numel);
  }
  for (int32_t v = 0; v < k->n_outer; v++) tck_exprs_mark(&g->exprs, k->outer[v]);
  if (has_inner) tck_exprs_mark(&g->exprs, k->inner);
  bool row_buf[64] = {false};
  g->row_buf = has_inner && k->n_buffers <= 64 && kgen_row_buffers(g->list, k, row_buf) ? row_buf : NULL;
  for (int32_t b = 0; g->row_buf && b < k->n_buffers; b++)
    if (row_buf[b]) tck_exprs_mark(&g->exprs, buf_at(k, b)->numel);

  tck_str_printf(s, "static void %s", g->fname);
  kgen_params(s, g);
  tck_str_puts(s, " {\n");
  tck_exprs_declare(s, &g->exprs, 1);
  /* Work estimate, for the decision to go parallel at all (small kernels run on one thread). */
  tck_str_puts(s, "  const int64_t outer = 1");
  for (int32_t v = 0; v < k->n_outer; v++) { tck_str_puts(s, "*"); tck_exprs_ref(s, &g->exprs, k->outer[v]); }
  tck_str_puts(s, ";\n  const int64_t work = outer");
  if (has_inner) { tck_str_puts(s, "*"); tck_exprs_ref(s, &g->exprs, k->inner); }
  tck_str_puts(s, ";\n");
  for (int32_t b = 0; g->row_buf && b < k->n_buffers; b++) {
    if (!row_buf[b]) continue;
    char bname[80];
    kgen_buf_name(k, b, bname, sizeof bname);
    tck_str_printf(s, "  /* %s goes out with streaming stores when it is far bigger than the caches. */\n", bname);
    tck_str_printf(s, "  const int stream_%s = ", bname);
    tck_exprs_ref(s, &g->exprs, buf_at(k, b)->numel);
    tck_str_printf(s, "*4 >= %d;\n", ICPU_STREAM_MIN_BYTES);
  }
  tc_status st;
  /* A static outer domain with many points never takes the few-long-rows path: skip it (less
   * code to compile). */
  int64_t static_outer = 1;
  for (int32_t v = 0; v < k->n_outer && static_outer >= 0; v++) {
    const tc_size_expr *e = tck_list_expr(g->list, k->outer[v]);
    static_outer = e->op == TC_SX_CONST ? static_outer * e->value : -1;
  }
  if (has_inner && static_outer >= 256) {
    st = emit_nest(s, g, true, false, 1, err, cap);
    if (st != TC_OK) return st;
  } else if (has_inner) {
    tck_str_printf(s, "  if (outer < tc_nthreads && work >= %d) {\n", 2 * ICPU_PAR_MIN_WORK);
    st = emit_nest(s, g, true, true, 2, err, cap);
    if (st != TC_OK) return st;
    tck_str_puts(s, "  } else {\n");
    st = emit_nest(s, g, true, false, 2, err, cap);
    if (st != TC_OK) return st;
    tck_str_puts(s, "  }\n");
  } else {
    st = emit_nest(s, g, false, false, 1, err, cap);
    if (st != TC_OK) return st;
  }
  tck_str_puts(s, "}\n");
  g->row_buf = NULL;
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}
