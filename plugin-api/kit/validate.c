/* validate.c — the one validator of what crosses the boundary: kernel lists and graphs. It
 * checks what a code generator or interpreter relies on without re-checking (sizes of structs
 * and elements, every id in range and pointing backwards, loop structure, known dtypes), so
 * generators may index without bounds checks. Prim semantics (operand dtypes and ranks) are
 * the backend's business. Messages name the kernel (or node), the op and the field. */
#include <stdio.h>
#include <string.h>

#include "tc_kit.h"

typedef struct vctx {
  char *err;
  size_t cap;
  char where[160]; /* "kernel 2 (softmax_1): op 5: " */
} vctx;

static tc_status fail(vctx *v, tc_status s, const char *fmt, ...) TCK_PRINTF(3, 4);
static tc_status fail(vctx *v, tc_status s, const char *fmt, ...) {
  if (v->err && v->cap) {
    int n = snprintf(v->err, v->cap, "%s", v->where);
    if (n >= 0 && (size_t)n < v->cap) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(v->err + n, v->cap - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return s;
}

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    tc_status tck_s_ = (expr);                                                                     \
    if (tck_s_ != TC_OK) return tck_s_;                                                            \
  } while (0)

/* An array of n ABI structs: non-negative count, a pointer when non-empty, elements large
 * enough for what this reader uses. */
static tc_status check_array(vctx *v, const char *what, int32_t n, const void *p, size_t elem, size_t need) {
  if (n < 0) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s count %d is negative", what, n);
  if (n > 0 && !p) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: %d elements but the pointer is NULL", what, n);
  if (n > 0 && elem < need)
    return fail(v, TC_ERR_VERSION, "%s: element size %zu is smaller than the %zu this reader needs", what, elem, need);
  return TC_OK;
}

static tc_status check_ids(vctx *v, const char *what, int32_t n, const int32_t *p) {
  if (n < 0) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s count %d is negative", what, n);
  if (n > 0 && !p) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: %d ids but the pointer is NULL", what, n);
  return TC_OK;
}

/* An expr id: in range, or -1 when allowed (meaning zero / none). */
static tc_status check_expr_id(vctx *v, int32_t n_exprs, int32_t id, bool allow_none, const char *field) {
  if ((allow_none && id == -1) || (id >= 0 && id < n_exprs)) return TC_OK;
  return fail(v, TC_ERR_INVALID_ARGUMENT, "%s = %d is not an expression id (%d exprs%s)", field, id, n_exprs,
              allow_none ? ", or -1" : "");
}

static tc_status check_exprs(vctx *v, const tc_size_expr *exprs, size_t expr_size, int32_t n, int32_t n_syms) {
  TRY(check_array(v, "exprs", n, exprs, expr_size, TC_STRUCT_SIZE(tc_size_expr, value)));
  if (n_syms < 0) return fail(v, TC_ERR_INVALID_ARGUMENT, "n_syms %d is negative", n_syms);
  for (int32_t i = 0; i < n; i++) {
    const tc_size_expr *e = TC_ELEM(tc_size_expr, exprs, expr_size, i);
    if (e->struct_size < TC_STRUCT_SIZE(tc_size_expr, value))
      return fail(v, TC_ERR_VERSION, "expr %d: struct_size %zu is too small", i, e->struct_size);
    if (e->op < TC_SX_CONST || e->op > TC_SX_MIN)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "expr %d: op %d is not a size op", i, e->op);
    if (e->op == TC_SX_SYM && (e->value < 0 || e->value >= n_syms))
      return fail(v, TC_ERR_INVALID_ARGUMENT, "expr %d: symbol s%lld out of range (%d symbols)", i,
                  (long long)e->value, n_syms);
    if (e->op >= TC_SX_ADD && (e->a < 0 || e->a >= i || e->b < 0 || e->b >= i))
      return fail(v, TC_ERR_INVALID_ARGUMENT, "expr %d: children a = %d, b = %d must be earlier exprs", i, e->a, e->b);
  }
  return TC_OK;
}

static bool dtype_known(int32_t dtype) { return dtype >= 0 && dtype < TC_DTYPE_COUNT; }

static int32_t prim_arity(int32_t p) {
  if (p == TC_PRIM_WHERE) return 3;
  if (p >= TC_PRIM_ADD && p <= TC_PRIM_FMOD) return 2;
  return 1;
}

/* ---------------------------------------------------------------- kernel lists */
typedef struct kctx {
  vctx *v;
  const tc_kernel_list *l;
  const tc_kernel_desc *k;
} kctx;

static tc_status check_index(const kctx *c, const tc_kop *op, int32_t i) {
  vctx *v = c->v;
  const tc_index *ix = op->index;
  if (!ix) return fail(v, TC_ERR_INVALID_ARGUMENT, "index is NULL");
  if (ix->struct_size < TC_STRUCT_SIZE(tc_index, indirect_stride))
    return fail(v, TC_ERR_VERSION, "index.struct_size %zu is too small", ix->struct_size);
  TRY(check_expr_id(v, c->l->n_exprs, ix->offset, true, "index.offset"));
  if (ix->n_vars != c->k->n_outer + 1)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "index.n_vars = %d, must be n_outer + 1 = %d", ix->n_vars,
                c->k->n_outer + 1);
  if (!ix->strides) return fail(v, TC_ERR_INVALID_ARGUMENT, "index.strides is NULL");
  for (int32_t d = 0; d < ix->n_vars; d++) {
    char field[48];
    snprintf(field, sizeof field, "index.strides[%d]", d);
    TRY(check_expr_id(v, c->l->n_exprs, ix->strides[d], true, field));
  }
  if (ix->indirect != -1) {
    if (ix->indirect < 0 || ix->indirect >= i)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "index.indirect = %d is not an earlier op", ix->indirect);
    const tc_kop *src = tck_kernel_op(c->k, ix->indirect);
    if (!tck_dtype_is_int(src->dtype))
      return fail(v, TC_ERR_INVALID_ARGUMENT, "index.indirect = %d is %s, not an integer", ix->indirect,
                  tck_dtype_name(src->dtype));
    TRY(check_expr_id(v, c->l->n_exprs, ix->indirect_stride, false, "index.indirect_stride"));
  }
  return TC_OK;
}

static tc_status check_op(const kctx *c, int32_t i, int32_t *loop_prev, int32_t *loop_max) {
  vctx *v = c->v;
  const tc_kernel_desc *k = c->k;
  const tc_kop *op = tck_kernel_op(k, i);
  if (op->struct_size < TC_STRUCT_SIZE(tc_kop, flags))
    return fail(v, TC_ERR_VERSION, "struct_size %zu is too small", op->struct_size);
  if (op->kind < TC_KOP_LOAD || op->kind > TC_KOP_INDEX_CHECK)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "kind = %d is not an op kind", op->kind);
  if (!dtype_known(op->dtype)) return fail(v, TC_ERR_INVALID_ARGUMENT, "dtype = %d is not a dtype", op->dtype);
  /* Loops: -1, or the current inner loop, or the next one; each loop one run of ops. */
  if (op->loop < -1) return fail(v, TC_ERR_INVALID_ARGUMENT, "loop = %d is negative", op->loop);
  if (op->loop >= 0) {
    if (k->inner < 0) return fail(v, TC_ERR_INVALID_ARGUMENT, "loop = %d but the kernel has no inner extent", op->loop);
    if (op->loop != *loop_prev && op->loop != *loop_max + 1)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "loop = %d: inner loops must be consecutive and increasing (expected %d)",
                  op->loop, *loop_max + 1);
    if (op->loop > *loop_max) *loop_max = op->loop;
  }
  *loop_prev = op->loop;
  TRY(check_ids(v, "args", op->n_args, op->args));
  for (int32_t a = 0; a < op->n_args; a++)
    if (op->args[a] < 0 || op->args[a] >= i)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "args[%d] = %d is not an earlier op", a, op->args[a]);
  int32_t want_args = 0;
  switch (op->kind) {
  case TC_KOP_PRIM:
    if (!tck_prim_is_elementwise(op->prim))
      return fail(v, TC_ERR_INVALID_ARGUMENT, "prim = %d (%s) is not an elementwise prim", op->prim,
                  tck_prim_name(op->prim));
    want_args = prim_arity(op->prim);
    break;
  case TC_KOP_REDUCE:
    if (op->prim < TC_PRIM_REDUCE_SUM || op->prim > TC_PRIM_ARGMIN)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "prim = %d (%s) is not a reduction", op->prim, tck_prim_name(op->prim));
    if (op->loop < 0) return fail(v, TC_ERR_INVALID_ARGUMENT, "a reduce must be inside an inner loop (loop = -1)");
    want_args = 1;
    break;
  case TC_KOP_STORE:
  case TC_KOP_STORE_ADD: want_args = 1; break;
  case TC_KOP_ACC:
    if (k->kind != TC_KERNEL_MATMUL) return fail(v, TC_ERR_INVALID_ARGUMENT, "an acc op outside a matmul kernel");
    break;
  case TC_KOP_INDEX_CHECK:
    want_args = 2;
    if (op->dtype != TC_BOOL)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "an index check's value is bool, not %s", tck_dtype_name(op->dtype));
    for (int32_t a = 0; a < 2 && a < op->n_args; a++)
      if (tck_kernel_op(k, op->args[a])->dtype != TC_I64)
        return fail(v, TC_ERR_INVALID_ARGUMENT, "an index check's args[%d] = %d is %s, not i64", a, op->args[a],
                    tck_dtype_name(tck_kernel_op(k, op->args[a])->dtype));
    /* The record (tc_index_error): four i64 words at the buffer's start. */
    if (op->buffer < 0 || op->buffer >= k->n_buffers || tck_kernel_buffer(k, op->buffer)->dtype != TC_I64 ||
        tck_kernel_buffer(k, op->buffer)->role == TC_BUF_INPUT)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "an index check's buffer = %d is not a writable i64 buffer (%d buffers)",
                  op->buffer, k->n_buffers);
    break;
  default: break;
  }
  if (op->n_args != want_args)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "n_args = %d, this op takes %d", op->n_args, want_args);
  bool buffered = op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD;
  if (buffered && (op->buffer < 0 || op->buffer >= k->n_buffers))
    return fail(v, TC_ERR_INVALID_ARGUMENT, "buffer = %d is not a buffer (%d buffers)", op->buffer, k->n_buffers);
  if (buffered || op->kind == TC_KOP_INDEX || op->kind == TC_KOP_RANDOM) TRY(check_index(c, op, i));
  if (op->reuse != -1) {
    if (op->kind != TC_KOP_LOAD) return fail(v, TC_ERR_INVALID_ARGUMENT, "reuse = %d on an op that is not a load", op->reuse);
    if (op->reuse < 0 || op->reuse >= i)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "reuse = %d is not an earlier op", op->reuse);
    const tc_kop *r = tck_kernel_op(k, op->reuse);
    if ((r->kind != TC_KOP_LOAD && r->kind != TC_KOP_STORE) || r->buffer != op->buffer)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "reuse = %d is not a load or store of buffer %d", op->reuse, op->buffer);
  }
  return TC_OK;
}

static tc_status check_matmul(const kctx *c) {
  vctx *v = c->v;
  const tc_matmul_desc *m = c->k->matmul;
  int32_t ne = c->l->n_exprs;
  if (m->struct_size < TC_STRUCT_SIZE(tc_matmul_desc, c_stride_batch2))
    return fail(v, TC_ERR_VERSION, "matmul.struct_size %zu is too small", m->struct_size);
  const int32_t bufs[] = {m->a, m->b, m->c};
  static const char *const bnames[] = {"matmul.a", "matmul.b", "matmul.c"};
  for (int i = 0; i < 3; i++)
    if (bufs[i] < 0 || bufs[i] >= c->k->n_buffers)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "%s = %d is not a buffer (%d buffers)", bnames[i], bufs[i],
                  c->k->n_buffers);
  if (m->batch_levels != 1 && m->batch_levels != 2)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "matmul.batch_levels = %d, must be 1 or 2", m->batch_levels);
#define EXPR(f, none) TRY(check_expr_id(v, ne, m->f, none, "matmul." #f))
  EXPR(batch, false);
  EXPR(m, false);
  EXPR(n, false);
  EXPR(k, false);
  EXPR(a_offset, true);
  EXPR(a_stride_batch, true);
  EXPR(a_stride_m, true);
  EXPR(a_stride_k, true);
  EXPR(b_offset, true);
  EXPR(b_stride_batch, true);
  EXPR(b_stride_k, true);
  EXPR(b_stride_n, true);
  EXPR(c_offset, true);
  EXPR(c_stride_batch, true);
  EXPR(c_stride_m, true);
  EXPR(c_stride_n, true);
  if (m->batch_levels == 2) {
    EXPR(batch2, false);
    EXPR(a_stride_batch2, true);
    EXPR(b_stride_batch2, true);
    EXPR(c_stride_batch2, true);
  } else if (m->batch2 != -1) {
    return fail(v, TC_ERR_INVALID_ARGUMENT, "matmul.batch2 = %d with batch_levels 1 (must be -1)", m->batch2);
  }
#undef EXPR
  int32_t want_outer = m->batch_levels + 2;
  if (c->k->n_outer != want_outer)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "n_outer = %d, a matmul with %d batch levels has %d", c->k->n_outer,
                m->batch_levels, want_outer);
  return TC_OK;
}

/* An ATTENTION kernel: four buffers named by index, its sizes and strides, constant head sizes
 * (at most 256), f32 q/k/v/o, no ops and no outer domain (tc_plugin.h). */
static tc_status check_attention(const kctx *c) {
  vctx *v = c->v;
  const tc_kernel_desc *k = c->k;
  const tc_attention_desc *a = k->attention;
  int32_t ne = c->l->n_exprs;
  if (a->struct_size < TC_STRUCT_SIZE(tc_attention_desc, causal_offset))
    return fail(v, TC_ERR_VERSION, "attention.struct_size %zu is too small", a->struct_size);
  const int32_t bufs[] = {a->q, a->k, a->v, a->o};
  static const char *const bnames[] = {"attention.q", "attention.k", "attention.v", "attention.o"};
  for (int i = 0; i < 4; i++) {
    if (bufs[i] < 0 || bufs[i] >= k->n_buffers)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "%s = %d is not a buffer (%d buffers)", bnames[i], bufs[i], k->n_buffers);
    if (tck_kernel_buffer(k, bufs[i])->dtype != TC_F32)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: dtype %d, attention kernels are f32", bnames[i],
                  tck_kernel_buffer(k, bufs[i])->dtype);
  }
#define EXPR(f, none) TRY(check_expr_id(v, ne, a->f, none, "attention." #f))
  EXPR(batch, false);
  EXPR(tq, false);
  EXPR(tk, false);
  EXPR(d, false);
  EXPR(dv, false);
  EXPR(q_offset, false); EXPR(q_stride_batch, false); EXPR(q_stride_t, false); EXPR(q_stride_d, false);
  EXPR(k_offset, false); EXPR(k_stride_batch, false); EXPR(k_stride_t, false); EXPR(k_stride_d, false);
  EXPR(v_offset, false); EXPR(v_stride_batch, false); EXPR(v_stride_t, false); EXPR(v_stride_d, false);
  EXPR(o_offset, false); EXPR(o_stride_batch, false); EXPR(o_stride_t, false); EXPR(o_stride_d, false);
  if (a->batch2 != -1) {
    EXPR(batch2, false);
    EXPR(q_stride_batch2, false); EXPR(k_stride_batch2, false); EXPR(v_stride_batch2, false); EXPR(o_stride_batch2, false);
  }
#undef EXPR
  const tc_size_expr *ed = TC_ELEM(tc_size_expr, c->l->exprs, c->l->expr_size, a->d);
  const tc_size_expr *edv = TC_ELEM(tc_size_expr, c->l->exprs, c->l->expr_size, a->dv);
  if (ed->op != TC_SX_CONST || edv->op != TC_SX_CONST || ed->value < 1 || edv->value < 1 || ed->value > 256 ||
      edv->value > 256)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "attention.d and attention.dv must be constants in 1..256");
  if (k->n_ops != 0 || k->n_outer != 0)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "an attention kernel has no ops and no outer domain (%d ops, n_outer %d)",
                k->n_ops, k->n_outer);
  return TC_OK;
}

static tc_status check_kernel(vctx *v, const tc_kernel_list *l, int32_t ki) {
  const tc_kernel_desc *k = tck_list_kernel(l, ki);
  snprintf(v->where, sizeof v->where, "kernel %d (%s): ", ki,
           k->struct_size >= TC_STRUCT_SIZE(tc_kernel_desc, name) && k->name ? k->name : "?");
  if (k->struct_size < TC_STRUCT_SIZE(tc_kernel_desc, matmul))
    return fail(v, TC_ERR_VERSION, "struct_size %zu is too small", k->struct_size);
  if (!k->name) return fail(v, TC_ERR_INVALID_ARGUMENT, "name is NULL");
  if (k->kind != TC_KERNEL_LOOP && k->kind != TC_KERNEL_MATMUL && k->kind != TC_KERNEL_ATTENTION)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "kind = %d is not a kernel kind", k->kind);
  const tc_attention_desc *attention =
      k->struct_size >= TC_STRUCT_SIZE(tc_kernel_desc, attention) ? k->attention : NULL;
  if ((k->kind == TC_KERNEL_ATTENTION) != (attention != NULL))
    return fail(v, TC_ERR_INVALID_ARGUMENT, "attention must be set exactly for attention kernels (kind %d, attention %s)",
                k->kind, attention ? "set" : "NULL");
  TRY(check_ids(v, "outer", k->n_outer, k->outer));
  for (int32_t d = 0; d < k->n_outer; d++) {
    char field[32];
    snprintf(field, sizeof field, "outer[%d]", d);
    TRY(check_expr_id(v, l->n_exprs, k->outer[d], false, field));
  }
  TRY(check_expr_id(v, l->n_exprs, k->inner, true, "inner"));
  TRY(check_array(v, "buffers", k->n_buffers, k->buffers, k->buffer_size, TC_STRUCT_SIZE(tc_kbuffer, numel)));
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_kbuffer *buf = tck_kernel_buffer(k, b);
    if (buf->struct_size < TC_STRUCT_SIZE(tc_kbuffer, numel))
      return fail(v, TC_ERR_VERSION, "buffer %d: struct_size %zu is too small", b, buf->struct_size);
    if (!buf->name) return fail(v, TC_ERR_INVALID_ARGUMENT, "buffer %d: name is NULL", b);
    if (!dtype_known(buf->dtype))
      return fail(v, TC_ERR_INVALID_ARGUMENT, "buffer %d (%s): dtype = %d is not a dtype", b, buf->name, buf->dtype);
    if (buf->role < TC_BUF_INPUT || buf->role > TC_BUF_INOUT)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "buffer %d (%s): role = %d is not a buffer role", b, buf->name, buf->role);
    char field[96];
    snprintf(field, sizeof field, "buffer %d (%s): numel", b, buf->name);
    TRY(check_expr_id(v, l->n_exprs, buf->numel, false, field));
  }
  TRY(check_array(v, "ops", k->n_ops, k->ops, k->op_size, TC_STRUCT_SIZE(tc_kop, flags)));
  if ((k->kind == TC_KERNEL_MATMUL) != (k->matmul != NULL))
    return fail(v, TC_ERR_INVALID_ARGUMENT, "matmul must be set exactly for matmul kernels (kind %d, matmul %s)",
                k->kind, k->matmul ? "set" : "NULL");
  kctx c = {v, l, k};
  if (k->matmul) TRY(check_matmul(&c));
  if (attention) TRY(check_attention(&c));
  int32_t loop_prev = -1, loop_max = -1;
  size_t base = strlen(v->where);
  for (int32_t i = 0; i < k->n_ops; i++) {
    snprintf(v->where + base, sizeof v->where - base, "op %d: ", i);
    TRY(check_op(&c, i, &loop_prev, &loop_max));
  }
  return TC_OK;
}

tc_status tck_kernel_list_validate(const tc_kernel_list *l, char *err, size_t cap) {
  vctx v = {err, cap, ""};
  if (err && cap) err[0] = 0;
  if (!l) return fail(&v, TC_ERR_INVALID_ARGUMENT, "kernel list is NULL");
  if (l->struct_size < TC_STRUCT_SIZE(tc_kernel_list, kernel_size))
    return fail(&v, TC_ERR_VERSION, "tc_kernel_list.struct_size %zu is too small", l->struct_size);
  TRY(check_exprs(&v, l->exprs, l->expr_size, l->n_exprs, l->n_syms));
  TRY(check_array(&v, "kernels", l->n_kernels, l->kernels, l->kernel_size, TC_STRUCT_SIZE(tc_kernel_desc, matmul)));
  for (int32_t k = 0; k < l->n_kernels; k++) TRY(check_kernel(&v, l, k));
  return TC_OK;
}

/* ---------------------------------------------------------------- graphs */
const tc_value_type *tck_graph_value_type(const tc_graph_desc *g, int32_t v) {
  if (!g || v < 0) return NULL;
  if (v < g->n_inputs) return tck_graph_input(g, v);
  if (v - g->n_inputs < g->n_nodes) return tck_graph_node(g, v - g->n_inputs)->out;
  return NULL;
}

static tc_status check_type(vctx *v, const tc_graph_desc *g, const tc_value_type *t, const char *what) {
  if (!t) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: type is NULL", what);
  if (t->struct_size < TC_STRUCT_SIZE(tc_value_type, shape))
    return fail(v, TC_ERR_VERSION, "%s: tc_value_type.struct_size %zu is too small", what, t->struct_size);
  if (!dtype_known(t->dtype)) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: dtype = %d is not a dtype", what, t->dtype);
  if (t->rank < 0 || t->rank > TC_MAX_RANK)
    return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: rank = %d is out of range 0..%d", what, t->rank, TC_MAX_RANK);
  if (t->rank > 0 && !t->shape) return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: shape is NULL", what);
  for (int32_t d = 0; d < t->rank; d++)
    if (t->shape[d] < 0 || t->shape[d] >= g->n_exprs)
      return fail(v, TC_ERR_INVALID_ARGUMENT, "%s: shape[%d] = %d is not an expression id (%d exprs)", what, d,
                  t->shape[d], g->n_exprs);
  return TC_OK;
}

tc_status tck_graph_validate(const tc_graph_desc *g, char *err, size_t cap) {
  vctx v = {err, cap, ""};
  if (err && cap) err[0] = 0;
  if (!g) return fail(&v, TC_ERR_INVALID_ARGUMENT, "graph is NULL");
  if (g->struct_size < TC_STRUCT_SIZE(tc_graph_desc, outputs))
    return fail(&v, TC_ERR_VERSION, "tc_graph_desc.struct_size %zu is too small", g->struct_size);
  snprintf(v.where, sizeof v.where, "graph '%s': ", g->name ? g->name : "?");
  TRY(check_exprs(&v, g->exprs, g->expr_size, g->n_exprs, g->n_syms));
  TRY(check_array(&v, "inputs", g->n_inputs, g->inputs, g->input_size, TC_STRUCT_SIZE(tc_value_type, shape)));
  for (int32_t i = 0; i < g->n_inputs; i++) {
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    TRY(check_type(&v, g, tck_graph_input(g, i), what));
  }
  TRY(check_array(&v, "nodes", g->n_nodes, g->nodes, g->node_size, TC_STRUCT_SIZE(tc_prim_node, fattr)));
  size_t base = strlen(v.where);
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_prim_node *n = tck_graph_node(g, i);
    snprintf(v.where + base, sizeof v.where - base, "node %d (%s): ", i,
             n->struct_size >= TC_STRUCT_SIZE(tc_prim_node, prim) ? tck_prim_name(n->prim) : "?");
    if (n->struct_size < TC_STRUCT_SIZE(tc_prim_node, fattr))
      return fail(&v, TC_ERR_VERSION, "struct_size %zu is too small", n->struct_size);
    /* An id this kit does not know may be a newer host's prim: declined, not malformed. */
    if (strcmp(tck_prim_name(n->prim), "prim?") == 0)
      return fail(&v, TC_ERR_UNSUPPORTED, "prim = %d is not a prim this plugin knows (a newer host?)", n->prim);
    TRY(check_type(&v, g, n->out, "out"));
    TRY(check_ids(&v, "inputs", n->n_inputs, n->inputs));
    for (int32_t k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] < 0 || n->inputs[k] >= g->n_inputs + i)
        return fail(&v, TC_ERR_INVALID_ARGUMENT, "inputs[%d] = %d is not an earlier value", k, n->inputs[k]);
    if (n->n_iattrs < 0) return fail(&v, TC_ERR_INVALID_ARGUMENT, "n_iattrs %d is negative", n->n_iattrs);
    if (n->n_iattrs > 0 && !n->iattrs)
      return fail(&v, TC_ERR_INVALID_ARGUMENT, "iattrs: %d attributes but the pointer is NULL", n->n_iattrs);
  }
  v.where[base] = 0;
  TRY(check_ids(&v, "outputs", g->n_outputs, g->outputs));
  for (int32_t k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] < 0 || g->outputs[k] >= g->n_inputs + g->n_nodes)
      return fail(&v, TC_ERR_INVALID_ARGUMENT, "outputs[%d] = %d is not a value (%d values)", k, g->outputs[k],
                  g->n_inputs + g->n_nodes);
  return TC_OK;
}
