/* codegen_points.c — ops as CUDA C (the kit's tck_c_op, which writes inductor-cpu's ops too, with
 * CUDA's spellings), and the generic POINTS kernel: one thread per outer point (grid-stride over
 * the flattened outer domain), inner loops serial in that thread, exactly the semantics of
 * inductor-cpu's C (the same scalar helpers, the same op text). MATMUL epilogues are POINTS
 * kernels over (batch2,) batch, m, n reading the product from buffer c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

static const tc_kop *op_at(const tc_kernel_desc *k, int32_t i) { return tck_kernel_op(k, i); }
static int32_t indirect_of(const tc_kop *op) { return op->index ? op->index->indirect : -1; }

void cg_value_name(const icuda_gen *g, int32_t j, const char *sfx, char *out, size_t cap) {
  if (j >= 0 && g->value_of && g->value_of[j]) {
    snprintf(out, cap, "%s", g->value_of[j]);
    return;
  }
  bool mine = j >= 0 && g->percomp && g->percomp[j];
  snprintf(out, cap, "v%d%s", (int)j, mine ? sfx : "");
}

static const char *const comp[4] = {"x", "y", "z", "w"};

void cg_component_names(icuda_gen *g, const bool *loads, int32_t from, int32_t to, int c) {
  for (int32_t j = from; j < to; j++)
    if (loads[j]) {
      snprintf(g->comp_names[j], sizeof g->comp_names[j], "t%d.%s", (int)j, comp[c]);
      g->value_of[j] = g->comp_names[j];
    }
}

void cg_component_names_clear(icuda_gen *g, int32_t from, int32_t to) {
  for (int32_t j = from; j < to; j++) g->value_of[j] = NULL;
}

bool cg_tables_alloc(icuda_gen *g) {
  size_t n = (size_t)g->k->n_ops + 1;
  g->percomp = calloc(n, 1);
  g->value_of = calloc(n, sizeof(char *));
  g->comp_names = calloc(n, sizeof *g->comp_names);
  return g->percomp && g->value_of && g->comp_names;
}

void cg_tables_free(icuda_gen *g) {
  free(g->percomp);
  free(g->value_of);
  free(g->comp_names);
  g->percomp = NULL;
  g->value_of = NULL;
  g->comp_names = NULL;
}

/* The kit's emitter of ops as C, with CUDA's spellings. */
static void body_value_name(const tck_c_body *e, int32_t j, const char *sfx, char *out, size_t cap) {
  cg_value_name(e->ctx, j, sfx, out, cap);
}

static void body_buffer_name(const tck_c_body *e, int32_t b, char *out, size_t cap) {
  snprintf(out, cap, "%s", ((const icuda_gen *)e->ctx)->bname[b]);
}

static void body_atomic_add(const tck_c_body *e, tck_str *s, int depth, const char *guard, const char *index,
                            const char *elem, const char *value) {
  (void)e;
  (void)index;
  tck_str_indent(s, depth);
  if (guard) tck_str_printf(s, "if (%s) ", guard);
  tck_str_printf(s, "tc_atomic_add(&%s, %s);\n", elem, value);
}

static tck_c_body body_emitter(const icuda_gen *g) {
  return (tck_c_body){.k = g->k,
                      .x = &g->x,
                      .index_type = "long long",
                      .bool_type = "bool",
                      .int_reduce_wraps = true,
                      .typed_identities = true,
                      .ctx = (void *)g,
                      .value_name = body_value_name,
                      .buffer_name = body_buffer_name,
                      .atomic_add = body_atomic_add};
}

void cg_declare_accumulators(tck_str *s, const icuda_gen *g, int32_t loop, int depth, const char *arg_none) {
  const tc_kernel_desc *k = g->k;
  tck_c_body e = body_emitter(g);
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->loop == loop && op->kind == TC_KOP_REDUCE) tck_c_declare_accumulator(&e, s, i, depth, arg_none);
  }
}

tc_status cg_op(tck_str *s, icuda_gen *g, int32_t i, const char *const *vars, int d, const char *sfx,
                const char *acc_expr, char *err, size_t cap) {
  tck_c_body e = body_emitter(g);
  return tck_c_op(&e, s, i, vars, d, sfx, acc_expr, err, cap);
}

void cg_mark_exprs(icuda_gen *g) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD || op->kind == TC_KOP_INDEX ||
        op->kind == TC_KOP_RANDOM)
      tck_exprs_mark_index(&g->x, op->index);
    if ((op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) && indirect_of(op) >= 0)
      tck_exprs_mark(&g->x, tck_kernel_buffer(k, op->buffer)->numel);
  }
  for (int32_t v = 0; v < k->n_outer; v++) tck_exprs_mark(&g->x, k->outer[v]);
  if (k->inner >= 0) tck_exprs_mark(&g->x, k->inner);
}

void cg_prologue(tck_str *s, icuda_gen *g, int block) {
  const tc_kernel_desc *k = g->k;
  tck_str_printf(s, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const tc_cu_args a) {\n", block, g->fname);
  /* an early launch (launch.c) starts here while the kernel before may still run: wait for it
   * before any memory access, then let the next kernel be scheduled behind this one */
  tck_str_puts(s, "  tc_after_previous_kernel();\n");
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_kbuffer *kb = tck_kernel_buffer(k, b);
    const char *c = kb->role == TC_BUF_INPUT ? "const " : "";
    tck_str_printf(s, "  %s%s *__restrict__ %s = (%s%s *)a.buf[%d];\n", c, tck_c_dtype(kb->dtype), g->bname[b], c,
                   tck_c_dtype(kb->dtype), (int)b);
  }
  /* the symbols the kernel refers to */
  bool *sym = NULL;
  int32_t ns = g->list->n_syms;
  if (ns > 0 && (sym = calloc((size_t)ns, 1))) {
    for (int32_t e = 0; e < g->x.n; e++) {
      const tc_size_expr *x = tck_list_expr(g->list, e);
      if (g->x.used[e] && x->op == TC_SX_SYM && x->value >= 0 && x->value < ns) sym[x->value] = true;
    }
    for (int32_t i = 0; i < ns && i < ICUDA_MAX_SYMS; i++)
      if (sym[i]) tck_str_printf(s, "  const long long s%d = a.s[%d];\n", (int)i, (int)i);
    free(sym);
  }
  tck_exprs_declare(s, &g->x, 1);
}

void cg_size_def(tck_str *s, const icuda_gen *g, const char *name, int32_t id, const char *absent) {
  tck_str_printf(s, "  const long long %s = ", name);
  if (id < 0) tck_str_puts(s, absent);
  else tck_exprs_ref(s, &g->x, id);
  tck_str_puts(s, ";\n");
}

void cg_decompose(tck_str *s, const icuda_gen *g, const char *lin, int depth, const char *const *vars, int32_t n_outer) {
  if (n_outer == 0) return;
  tck_str_indent(s, depth);
  tck_str_printf(s, "long long rem = %s;\n", lin);
  for (int32_t v = n_outer - 1; v >= 0; v--) {
    tck_str_indent(s, depth);
    if (v == 0) {
      tck_str_printf(s, "const long long %s = rem;\n", vars[0]);
    } else {
      tck_str_printf(s, "const long long %s = rem %% n%d;\n", vars[v], (int)v);
      tck_str_indent(s, depth);
      tck_str_printf(s, "rem /= n%d;\n", (int)v);
    }
  }
}

/* The body of one point: ops in order, inner loops serial (inductor-cpu's structure). */
static tc_status point_body(tck_str *s, icuda_gen *g, const char *const *vars, int depth, const char *acc_expr,
                            char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops;) {
    int32_t cur = op_at(k, i)->loop;
    if (cur < 0) {
      tc_status st = cg_op(s, g, i, vars, depth, "", acc_expr, err, cap);
      if (st != TC_OK) return st;
      i++;
      continue;
    }
    int32_t to = i;
    while (to < k->n_ops && op_at(k, to)->loop == cur) to++;
    cg_declare_accumulators(s, g, cur, depth, "0");
    tck_str_indent(s, depth);
    tck_str_printf(s, "for (long long %s = 0; %s < ", vars[k->n_outer], vars[k->n_outer]);
    tck_exprs_ref(s, &g->x, k->inner);
    tck_str_printf(s, "; %s++) { /* inner loop %d */\n", vars[k->n_outer], (int)cur);
    for (int32_t j = i; j < to; j++) {
      tc_status st = cg_op(s, g, j, vars, depth + 1, "", acc_expr, err, cap);
      if (st != TC_OK) return st;
    }
    tck_str_indent(s, depth);
    tck_str_puts(s, "}\n");
    i = to;
  }
  return TC_OK;
}

static void outer_extents(tck_str *s, icuda_gen *g, const char *total) {
  const tc_kernel_desc *k = g->k;
  for (int32_t v = 0; v < k->n_outer; v++) {
    tck_str_printf(s, "  const long long n%d = ", (int)v);
    tck_exprs_ref(s, &g->x, k->outer[v]);
    tck_str_puts(s, ";\n");
  }
  tck_str_printf(s, "  const long long %s = 1", total);
  for (int32_t v = 0; v < k->n_outer; v++) tck_str_printf(s, " * n%d", (int)v);
  tck_str_puts(s, ";\n");
}

static int32_t points_cap(const icuda_gen *g) {
  return g->o && g->o->n_sms > 0 ? g->o->n_sms * ICUDA_POINTS_BLOCKS_PER_SM : 0;
}

static const char *const point_vars[TC_MAX_RANK + 1] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "r"};

/* The value of a constant expression, or -1 (unknown until launch). */
static int64_t expr_const(const icuda_gen *g, int32_t id) {
  if (id < 0) return 1;
  const tc_size_expr *e = id < g->list->n_exprs ? tck_list_expr(g->list, id) : NULL;
  return e && e->op == TC_SX_CONST ? e->value : -1;
}

/* One element of a matmul operand: "buf[off (+ b2*s_b2) + b*s_b + r*s_r + c*s_c]", with the
 * batch variables of the kernel's outer domain (batch2, batch) and r, c the operand's two
 * indices (A: m, k; B: k, n; C: m, n) as text. */
typedef struct mm_operand_ix {
  int32_t buffer, offset, stride_batch2, stride_batch, stride_r, stride_c;
} mm_operand_ix;

static void operand_element(tck_str *s, const icuda_gen *g, mm_operand_ix o, const char *r, const char *c) {
  const tc_matmul_desc *mm = g->k->matmul;
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  tck_str_printf(s, "%s[", g->bname[o.buffer]);
  tck_exprs_ref(s, &g->x, o.offset);
  if (two) {
    tck_str_puts(s, " + i0*");
    tck_exprs_ref(s, &g->x, o.stride_batch2);
  }
  tck_str_printf(s, " + %s*", two ? "i1" : "i0");
  tck_exprs_ref(s, &g->x, o.stride_batch);
  tck_str_printf(s, " + %s*", r);
  tck_exprs_ref(s, &g->x, o.stride_r);
  tck_str_printf(s, " + %s*", c);
  tck_exprs_ref(s, &g->x, o.stride_c);
  tck_str_puts(s, "]");
}

/* A matmul epilogue's product element at (batch2,) batch, m, n of c, at c's strides (as
 * cuBLASLt wrote it), vn the n variable's text. */
static void acc_text(tck_str *s, const icuda_gen *g, const char *vn) {
  const tc_matmul_desc *mm = g->k->matmul;
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  operand_element(s, g, (mm_operand_ix){mm->c, mm->c_offset, two ? mm->c_stride_batch2 : -1, mm->c_stride_batch, mm->c_stride_m, mm->c_stride_n},
                  two ? "i2" : "i1", vn);
}

/* ---------------------------------------------------------------- float4 POINTS
 * A kernel without inner loops whose f32 accesses run contiguously along the last outer
 * dimension (an elementwise kernel, a matmul epilogue): each thread takes 4 neighbours along
 * it, reads and writes them as float4 (one 16-byte access where four 4-byte ones left the
 * memory system short of requests in flight), and runs the ops once per component. Chosen per
 * launch by a uniform flag (vec_ok: the last extent a multiple of 4, every float4 access
 * 16-byte aligned), else the scalar body. Accesses along other directions (a broadcast row
 * value, a gather) stay scalar, per component. */
typedef struct points_vec {
  bool *vec;    /* per op: a float4 load or store */
  bool acc_vec; /* epilogue: the product read as float4 (c's n stride is 1) */
} points_vec;

static bool vec_along_last(const icuda_gen *g, const tc_kop *op) {
  const tc_kernel_desc *k = g->k;
  if (k->n_outer < 1 || op->loop >= 0 || (op->kind != TC_KOP_LOAD && op->kind != TC_KOP_STORE) || !op->index ||
      op->index->indirect >= 0)
    return false;
  if (tck_kernel_buffer(k, op->buffer)->dtype != TC_F32 || op->dtype != TC_F32) return false;
  return tck_exprs_is_const(&g->x, tck_index_stride(op->index, k->n_outer - 1), 1);
}

/* Fills pv; false when the kernel gets no float4 body. */
static bool points_vec_plan(const icuda_gen *g, points_vec *pv) {
  const tc_kernel_desc *k = g->k;
  if (k->n_outer < 1) return false;
  bool any = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    if (op_at(k, i)->loop >= 0) return false;
    pv->vec[i] = vec_along_last(g, op_at(k, i));
    any |= pv->vec[i];
  }
  if (k->kind == TC_KERNEL_MATMUL && tck_kernel_buffer(k, k->matmul->c)->dtype == TC_F32)
    pv->acc_vec = tck_exprs_is_const(&g->x, k->matmul->c_stride_n, 1);
  return any || pv->acc_vec;
}

/* " && (x) % 4 == 0" unless expr id is a constant multiple of 4 (or absent). */
static void multiple_of_4(tck_str *s, const icuda_gen *g, int32_t id) {
  if (id < 0 || tck_exprs_is_const(&g->x, id, 0)) return;
  const tc_size_expr *e = tck_list_expr(g->list, id);
  if (e && e->op == TC_SX_CONST && e->value % 4 == 0) return;
  tck_str_puts(s, "\n      && (");
  tck_exprs_ref(s, &g->x, id);
  tck_str_puts(s, ") % 4 == 0");
}

static void points_vec_ok(tck_str *s, icuda_gen *g, const points_vec *pv) {
  const tc_kernel_desc *k = g->k;
  const int32_t last = k->n_outer - 1;
  bool aligned[ICUDA_MAX_BUFS] = {false}; /* a buffer's pointer checked already */
  tck_str_printf(s, "  const bool vec_ok = n%d %% 4 == 0", (int)last);
  for (int32_t i = 0; i < k->n_ops; i++) {
    if (!pv->vec[i]) continue;
    const tc_kop *op = op_at(k, i);
    if (!aligned[op->buffer]) tck_str_printf(s, "\n      && (unsigned long long)%s %% 16 == 0", g->bname[op->buffer]);
    aligned[op->buffer] = true;
    multiple_of_4(s, g, op->index->offset);
    for (int32_t v = 0; v < last; v++) multiple_of_4(s, g, tck_index_stride(op->index, v));
  }
  if (pv->acc_vec) {
    const tc_matmul_desc *mm = k->matmul;
    if (!aligned[mm->c]) tck_str_printf(s, "\n      && (unsigned long long)%s %% 16 == 0", g->bname[mm->c]);
    multiple_of_4(s, g, mm->c_offset);
    multiple_of_4(s, g, mm->c_stride_batch);
    multiple_of_4(s, g, mm->c_stride_m);
    if (TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2) multiple_of_4(s, g, mm->c_stride_batch2);
  }
  tck_str_puts(s, ";\n");
}

/* The float4 body: 4 neighbours along the last dim per thread, grid-stride over total / 4. */
static tc_status points_vec_body(tck_str *s, icuda_gen *g, const points_vec *pv, const char **vars, char *err,
                                 size_t cap) {
  const tc_kernel_desc *k = g->k;
  const int32_t last = k->n_outer - 1;
  tck_str_puts(s, "    for (long long p4 = (long long)blockIdx.x * blockDim.x + threadIdx.x; p4 < total / 4;\n"
                  "         p4 += (long long)gridDim.x * blockDim.x) {\n");
  cg_decompose(s, g, "p4 * 4", 3, vars, k->n_outer);
  for (int32_t j = 0; j < k->n_ops; j++) {
    if (!pv->vec[j]) continue;
    tck_str_printf(s, "      const long long a%d = ", (int)j);
    tck_index_emit(s, &g->x, op_at(k, j)->index, vars);
    tck_str_puts(s, ";\n");
    if (op_at(k, j)->kind == TC_KOP_LOAD)
      tck_str_printf(s, "      const float4 t%d = *(const float4 *)&%s[a%d];\n", (int)j, g->bname[op_at(k, j)->buffer], (int)j);
  }
  if (pv->acc_vec) {
    tck_str_puts(s, "      const float4 acc4 = *(const float4 *)&");
    acc_text(s, g, vars[last]);
    tck_str_puts(s, "; /* the product, 4 neighbours */\n");
  }
  for (int32_t j = 0; j < k->n_ops; j++) g->percomp[j] = true;
  bool *loads = calloc((size_t)k->n_ops + 1, 1);
  if (!loads) return TC_ERR_OUT_OF_MEMORY;
  for (int32_t j = 0; j < k->n_ops; j++) loads[j] = pv->vec[j] && op_at(k, j)->kind == TC_KOP_LOAD;
  const char *base = vars[last];
  char cvar[4][24], sfx[8];
  for (int c = 0; c < 4; c++) {
    snprintf(cvar[c], sizeof cvar[c], c ? "(%s + %d)" : "%s", base, c);
    vars[last] = cvar[c];
    snprintf(sfx, sizeof sfx, "_%d", c);
    tck_str acc = {0};
    if (k->kind == TC_KERNEL_MATMUL) {
      if (pv->acc_vec) tck_str_printf(&acc, "acc4.%s", comp[c]);
      else acc_text(&acc, g, cvar[c]);
      if (acc.oom) return TC_ERR_OUT_OF_MEMORY;
    }
    cg_component_names(g, loads, 0, k->n_ops, c);
    for (int32_t j = 0; j < k->n_ops; j++) {
      if (pv->vec[j]) continue; /* float4 loads are named; float4 stores come after the components */
      tc_status st = cg_op(s, g, j, (const char *const *)vars, 3, sfx, acc.data, err, cap);
      if (st != TC_OK) {
        tck_str_free(&acc);
        free(loads);
        return st;
      }
    }
    tck_str_free(&acc);
    cg_component_names_clear(g, 0, k->n_ops); /* a component's names hold for that component only */
  }
  free(loads);
  vars[last] = base;
  for (int32_t j = 0; j < k->n_ops; j++) {
    const tc_kop *jo = op_at(k, j);
    if (!pv->vec[j] || jo->kind != TC_KOP_STORE) continue;
    char a[4][48];
    for (int c = 0; c < 4; c++) {
      snprintf(sfx, sizeof sfx, "_%d", c);
      int32_t src = jo->args[0];
      if (pv->vec[src] && op_at(k, src)->kind == TC_KOP_LOAD) snprintf(a[c], sizeof a[c], "t%d.%s", (int)src, comp[c]);
      else cg_value_name(g, src, sfx, a[c], sizeof a[c]);
    }
    tck_str_printf(s, "      *(float4 *)&%s[a%d] = make_float4(%s, %s, %s, %s);\n", g->bname[jo->buffer], (int)j, a[0], a[1],
                   a[2], a[3]);
  }
  for (int32_t j = 0; j < k->n_ops; j++) g->percomp[j] = false;
  tck_str_puts(s, "    }\n");
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}

/* An inline product (small matmuls, see cg_matmul): a warp per element of the product, its lanes
 * splitting k (lane l takes k = l, l + 32, ...: neighbouring lanes read neighbouring elements of
 * A's row), each accumulating with fma in the operands' dtype, then a butterfly: every lane
 * holds the sum in `acc`, and lane 0 runs the epilogue (its ACC reads acc). A thread per
 * element instead ran a 64-step dependent chain of loads and fmas per output, slower on the
 * H200 than cuBLASLt's call plus the epilogue's kernel inside a CUDA graph. */
static void inline_product(tck_str *s, icuda_gen *g, const char *const *vars, int depth) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul;
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  const char *vm = vars[two ? 2 : 1], *vn = vars[two ? 3 : 2];
  const char *T = tck_c_dtype(tck_kernel_buffer(k, mm->a)->dtype);
  tck_str_indent(s, depth);
  tck_str_printf(s, "%s acc = 0; /* the product's element, computed here by the warp: no cuBLASLt call */\n", T);
  tck_str_indent(s, depth);
  tck_str_puts(s, "for (long long kk = threadIdx.x & 31; kk < ");
  tck_exprs_ref(s, &g->x, mm->k);
  tck_str_printf(s, "; kk += 32) /* the lanes split k: neighbouring lanes, neighbouring k */\n");
  tck_str_indent(s, depth + 1);
  tck_str_printf(s, "acc = %s(", T[0] == 'd' ? "fma" : "fmaf");
  operand_element(s, g, (mm_operand_ix){mm->a, mm->a_offset, two ? mm->a_stride_batch2 : -1, mm->a_stride_batch, mm->a_stride_m, mm->a_stride_k},
                  vm, "kk");
  tck_str_puts(s, ", ");
  operand_element(s, g, (mm_operand_ix){mm->b, mm->b_offset, two ? mm->b_stride_batch2 : -1, mm->b_stride_batch, mm->b_stride_k, mm->b_stride_n},
                  "kk", vn);
  tck_str_puts(s, ", acc);\n");
  tck_str_indent(s, depth);
  tck_str_puts(s, "for (int o = 16; o > 0; o >>= 1) acc += tc_shfl_xor(acc, o); /* the lanes' partial sums */\n");
  if (k->n_ops == 0) { /* a bare product: it is the result */
    tck_str_indent(s, depth);
    tck_str_printf(s, "if ((threadIdx.x & 31) == 0) ");
    acc_text(s, g, vn);
    tck_str_puts(s, " = acc;\n");
  }
}

/* The grid-stride loop of a POINTS kernel (a matmul epilogue when k is a MATMUL): a float4
 * body where points_vec_plan finds one, and the scalar body. inline_mm: a MATMUL whose product
 * the kernel computes itself (scalar body only). */
static tc_status points_kernel(tck_str *s, icuda_gen *g, bool inline_mm, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const char *vars[TC_MAX_RANK + 1];
  for (int32_t v = 0; v < k->n_outer; v++) vars[v] = point_vars[v];
  vars[k->n_outer] = "r";
  size_t n = (size_t)k->n_ops + 1;
  points_vec pv = {.vec = calloc(n, 1)};
  tck_str acc = {0};
  tc_status st = TC_OK;
  if (!cg_tables_alloc(g) || !pv.vec) {
    st = TC_ERR_OUT_OF_MEMORY;
    goto done;
  }
  bool vec = !inline_mm && points_vec_plan(g, &pv);
  if (vec)
    for (int32_t i = 0; i < k->n_ops; i++)
      if (pv.vec[i]) tck_exprs_mark_index(&g->x, op_at(k, i)->index);
  cg_prologue(s, g, ICUDA_POINTS_BLOCK);
  outer_extents(s, g, "total");
  if (k->kind == TC_KERNEL_MATMUL) {
    if (inline_mm) tck_str_puts(&acc, "acc");
    else acc_text(&acc, g, vars[k->n_outer - 1]);
  }
  if (acc.oom) {
    st = TC_ERR_OUT_OF_MEMORY;
    goto done;
  }
  int depth = 2;
  if (vec) {
    points_vec_ok(s, g, &pv);
    tck_str_puts(s, "  if (vec_ok) { /* float4: 4 neighbours along the last dimension per thread */\n");
    st = points_vec_body(s, g, &pv, vars, err, cap);
    if (st != TC_OK) goto done;
    tck_str_puts(s, "  } else { /* scalar: a last extent not a multiple of 4, or unaligned views */\n");
    depth = 3;
  }
  tck_str_indent(s, depth - 1);
  if (inline_mm) /* a warp per point: uniform over the warp, so all 32 lanes take part in the shuffles */
    tck_str_puts(s, "for (long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; p < total;\n");
  else
    tck_str_puts(s, "for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total;\n");
  tck_str_indent(s, depth - 1);
  tck_str_puts(s, inline_mm ? "     p += ((long long)gridDim.x * blockDim.x) >> 5) {\n"
                            : "     p += (long long)gridDim.x * blockDim.x) {\n");
  cg_decompose(s, g, "p", depth, vars, k->n_outer);
  if (inline_mm) {
    inline_product(s, g, vars, depth);
    tck_str_indent(s, depth);
    tck_str_puts(s, "if ((threadIdx.x & 31) == 0) { /* lane 0 holds the sum: the epilogue */\n");
    depth++;
  }
  st = point_body(s, g, vars, depth, acc.data, err, cap);
  if (st != TC_OK) goto done;
  if (inline_mm) {
    depth--;
    tck_str_indent(s, depth);
    tck_str_puts(s, "}\n");
  }
  tck_str_indent(s, depth - 1);
  tck_str_puts(s, "}\n");
  if (vec) tck_str_puts(s, "  }\n");
  tck_str_puts(s, "}\n");
  if (s->oom) st = TC_ERR_OUT_OF_MEMORY;
done:
  tck_str_free(&acc);
  free(pv.vec);
  cg_tables_free(g);
  return st;
}

tc_status cg_points(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  plan->kind = ICUDA_LAUNCH_POINTS;
  plan->block = ICUDA_POINTS_BLOCK;
  plan->smem_bytes = 0;
  plan->max_blocks = points_cap(g);
  tck_str_printf(s, "/* one thread per outer point (float4: per 4 neighbours), grid-stride; inner loops serial per thread */\n");
  return points_kernel(s, g, false, err, cap);
}

tc_status cg_matmul(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul;
  int32_t dt = tck_kernel_buffer(k, mm->a)->dtype;
  plan->kind = ICUDA_LAUNCH_MATMUL;
  plan->has_epilogue = false;
  if (dt != TC_F32 && dt != TC_F64) {
    snprintf(err, cap, "matmul of %s is not supported (f32, f64)", tck_dtype_name(dt));
    return TC_ERR_UNSUPPORTED;
  }
  /* A small product of constant sizes is computed by the kernel itself, a thread per element
   * with the epilogue fused: one launch instead of cuBLASLt's (several microseconds of host work
   * and a kernel of its own) plus the epilogue's; what makes tiny models fast, in a CUDA graph
   * above all. */
  const bool two_levels = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  const int32_t dims[5] = {mm->batch, two_levels ? mm->batch2 : -1, mm->m, mm->n, mm->k};
  int64_t work = 1;
  for (int i = 0; i < 5 && work > 0; i++) {
    int64_t v = expr_const(g, dims[i]);
    work = v < 0 || v > ICUDA_INLINE_MATMUL_MAX ? -1 : work * v; /* unknown or large: cuBLASLt */
    if (work > ICUDA_INLINE_MATMUL_MAX) work = -1;
  }
  /* cuda.gemm=generated: every product through the generated GEMM, small ones too (so the
   * conformance suite's small matmuls run it on a GPU) */
  const bool generated = g->o && g->o->gemm == ICUDA_GEMM_GENERATED;
  const bool inline_mm = work > 0 && work <= ICUDA_INLINE_MATMUL_MAX && !generated;
  /* the generated GEMM (codegen_gemm.c) next to the epilogue kernel, for launches cuBLASLt does
   * not take (gemm.c); an inline product needs neither */
  const bool gemm = !inline_mm && !(g->o && g->o->gemm == ICUDA_GEMM_CUBLASLT);
  if (!gemm) plan->gemm_name[0] = '\0';
  if (k->n_ops == 0 && !inline_mm) {
    plan->block = 0;
    tck_str_printf(s, "/* the product goes straight to %s (cuBLASLt%s): no epilogue */\n", g->bname[mm->c],
                   gemm ? ", or the generated GEMM below" : "");
    return gemm ? cg_gemm(s, g, plan, err, cap) : TC_OK;
  }
  for (int32_t i = 0; i < k->n_ops; i++)
    if (op_at(k, i)->loop >= 0) {
      snprintf(err, cap, "op %d: a matmul epilogue has no inner loops", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  tck_exprs_mark(&g->x, mm->c_offset);
  tck_exprs_mark(&g->x, mm->c_stride_batch);
  tck_exprs_mark(&g->x, mm->c_stride_m);
  tck_exprs_mark(&g->x, mm->c_stride_n);
  if (two) tck_exprs_mark(&g->x, mm->c_stride_batch2);
  plan->has_epilogue = true;
  plan->inline_product = inline_mm;
  plan->block = ICUDA_POINTS_BLOCK;
  plan->smem_bytes = 0;
  plan->max_blocks = points_cap(g);
  if (inline_mm) {
    tck_exprs_mark(&g->x, mm->k);
    tck_exprs_mark(&g->x, mm->a_offset);
    tck_exprs_mark(&g->x, mm->a_stride_batch);
    tck_exprs_mark(&g->x, mm->a_stride_m);
    tck_exprs_mark(&g->x, mm->a_stride_k);
    tck_exprs_mark(&g->x, mm->b_offset);
    tck_exprs_mark(&g->x, mm->b_stride_batch);
    tck_exprs_mark(&g->x, mm->b_stride_k);
    tck_exprs_mark(&g->x, mm->b_stride_n);
    if (two) {
      tck_exprs_mark(&g->x, mm->a_stride_batch2);
      tck_exprs_mark(&g->x, mm->b_stride_batch2);
    }
    tck_str_printf(s, "/* a small matmul (%lld multiply-adds) and its epilogue in one kernel: one thread per element\n"
                      " * of the product (%s), its dot product computed here */\n",
                   (long long)work, two ? "batch2, batch, m, n" : "batch, m, n");
  } else {
    tck_str_printf(s, "/* the epilogue of a matmul: one thread per element of the product (%s; float4: per 4\n"
                      " * neighbours along n), which cuBLASLt has written to %s; runs after it on the same stream */\n",
                   two ? "batch2, batch, m, n" : "batch, m, n", g->bname[mm->c]);
    icuda_lt_epilogue lt;
    icuda_lt_epilogue_find(k, &lt);
    if (lt.possible)
      tck_str_puts(s, "/* (acc plus a bias and/or a residual: cuBLASLt adds them in its own epilogue where the layouts at\n"
                      " * launch allow, and this kernel is not launched; see blaslt_epilogue.c) */\n");
  }
  tc_status st = points_kernel(s, g, inline_mm, err, cap);
  return st == TC_OK && gemm ? cg_gemm(s, g, plan, err, cap) : st;
}
