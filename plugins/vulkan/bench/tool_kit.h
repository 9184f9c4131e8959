/* tool_kit.h — what the two vulkan bench tools (vk_bench.c, vk_diag.c) share: the plugin loaded
 * through the kit's test host (tck_test_host_*: every host service in process; the plugin's log
 * lines go to stderr, warnings and errors always, other categories when TC_LOGS names them,
 * comma-separated), its ABI 2.0 entries wrapped for the tools (CHECK exits with the error's
 * message), and a small builder for hand-made kernel descriptors. The descriptors carry the
 * scheduler's reuse decisions (schedule_fill_reuse from core/schedule, as the core would send them;
 * under ABI 1 the plugin derived them itself). Header-only: each tool is one translation unit. */
#ifndef TC_VK_TOOL_KIT_H
#define TC_VK_TOOL_KIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule_reuse.h"
#include "tc_kit.h"
#include "tc_plugin.h"

/* ------------------------------------------------------------------ the plugin, through the test host */

static tck_test_host *kit_th;
static tc_plugin_api kit_api;
static tc_plugin_ctx *kit_ctx;
static char g_err[4096];
static size_t kit_log_done; /* how much of the host's log text is already printed */
static uint64_t kit_call_id;

/* Prints what the plugin logged since the last call (the host keeps the text; only the new
 * part is printed, so lines logged by plugin threads meanwhile are not lost). */
static inline void kit_logs(void) {
  const char *log = tck_test_host_log(kit_th);
  size_t n = strlen(log);
  if (n > kit_log_done) fputs(log + kit_log_done, stderr);
  kit_log_done = n;
}

/* An entry's result as a status, its message in g_err; the logs printed. */
static inline tc_status kit_took(tc_error *e) {
  const char *m = "";
  tc_status s = tck_test_host_take(kit_th, e, &m);
  snprintf(g_err, sizeof g_err, "%s", m ? m : "");
  kit_logs();
  return s;
}

/* x: an expression giving a tc_error * (NULL: success). */
#define CHECK(x)                                                                                                       \
  do {                                                                                                                 \
    tc_status st_ = kit_took(x);                                                                                       \
    if (st_ != TC_OK) {                                                                                                \
      fprintf(stderr, "%s:%d: %s -> %d (%s): %s\n", __FILE__, __LINE__, #x, (int)st_, tck_status_name(st_), g_err);    \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

/* Every option the plugin declares for `scope`, at its default, as the host hands them over
 * (normalized by the kit's checker; unset when there is no default). Valid until the next call. */
static inline int32_t kit_options(int32_t scope, tc_option *out, int32_t cap) {
  static char norm[32][256];
  int32_t n = 0;
  for (int32_t i = 0; i < kit_api.n_options && n < cap && n < 32; i++) {
    const tc_option_decl *d = TC_ELEM(tc_option_decl, kit_api.options, kit_api.option_size, i);
    if (d->scope != scope) continue;
    const char *value = NULL;
    char err[512];
    if (d->default_value) {
      if (!tck_option_check(d, d->default_value, norm[n], sizeof norm[n], err, sizeof err)) {
        fprintf(stderr, "the plugin's default of %s: %s\n", d->name, err);
        exit(1);
      }
      value = norm[n];
    }
    out[n++] = (tc_option){.struct_size = sizeof(tc_option), .name = d->name, .value = value, .set = false};
  }
  return n;
}

/* Loads the plugin at path into a fresh test host (disk cache in cache_dir, NULL: off) and
 * probes it. The plugin stays loaded for the process. */
static inline tc_probe_args kit_open(const char *path, const char *cache_dir) {
  const char *logs = getenv("TC_LOGS");
  kit_th = tck_test_host_new(cache_dir, logs && *logs ? logs : NULL);
  if (!kit_th) {
    fprintf(stderr, "tck_test_host_new: out of memory\n");
    exit(1);
  }
  char err[1024];
  if (!tck_test_plugin_open(kit_th, path, &kit_api, NULL, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    exit(1);
  }
  tc_probe_args info = {.struct_size = sizeof info, .host = tck_test_host_api(kit_th)};
  CHECK(kit_api.probe(&info));
  return info;
}

static inline void kit_init(int32_t device) {
  tc_option o[32];
  int32_t n = kit_options(TC_OPTION_CONTEXT, o, 32);
  tc_init_args a = {.struct_size = sizeof a, .host = tck_test_host_api(kit_th), .device = device, .n_options = n,
                    .options = o, .option_size = sizeof(tc_option)};
  CHECK(kit_api.init(&a));
  kit_ctx = a.ctx;
}

static inline void kit_release(void) {
  tc_release_args a = {.struct_size = sizeof a, .ctx = kit_ctx};
  kit_api.release(&a);
  kit_ctx = NULL;
  kit_logs();
}

/* Waits for all queued work; an asynchronous error reported meanwhile ends the tool too. */
static inline void kit_sync(void) {
  tc_queue_args a = {.struct_size = sizeof a, .ctx = kit_ctx};
  CHECK(kit_api.synchronize(&a));
  const char *async = tck_test_host_async_errors(kit_th);
  if (async && *async) {
    fprintf(stderr, "asynchronous error: %s", async);
    exit(1);
  }
}

static inline tc_buffer *kit_alloc(size_t bytes) {
  tc_buffer_alloc_args a = {.struct_size = sizeof a, .ctx = kit_ctx, .bytes = bytes};
  CHECK(kit_api.buffer_alloc(&a));
  return a.buffer;
}

static inline void kit_write(tc_buffer *b, size_t offset, const void *src, size_t bytes) {
  tc_buffer_copy_args a = {.struct_size = sizeof a, .ctx = kit_ctx, .buffer = b, .offset = offset, .host = (void *)src,
                           .bytes = bytes};
  CHECK(kit_api.buffer_write(&a));
}

static inline tc_buffer_arg kit_arg(tc_buffer *b) {
  return (tc_buffer_arg){.struct_size = sizeof(tc_buffer_arg), .buffer = b, .byte_offset = 0};
}

/* One launch of kernel `kernel` of exe (the tools' kernels have no symbols: sizes are constants). */
static inline void kit_launch(tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, int32_t n_args) {
  tc_launch_args a = {.struct_size = sizeof a, .ctx = kit_ctx, .exe = exe, .kernel = kernel, .n_args = n_args,
                      .args = args, .arg_size = sizeof(tc_buffer_arg), .n_syms = 0, .syms = NULL,
                      .call_id = ++kit_call_id};
  CHECK(kit_api.launch(&a));
}

/* The generated source of exe (GLSL for this plugin), valid until the executable is freed. */
static inline const char *kit_source(tc_executable *exe) {
  tc_executable_info_args a = {.struct_size = sizeof a, .ctx = kit_ctx, .exe = exe};
  if (!kit_api.executable_info) {
    fprintf(stderr, "the plugin has no executable_info\n");
    exit(1);
  }
  CHECK(kit_api.executable_info(&a));
  if (!a.source) {
    fprintf(stderr, "the plugin gave no source for the executable\n");
    exit(1);
  }
  return a.source;
}

/* ------------------------------------------------------------------ kernel descriptors by hand
 * Expressions, buffers, ops (f32 throughout). Everything a descriptor points to lives in the kb,
 * which must outlive the compile call. */
typedef struct kb {
  tc_size_expr ex[64];
  int n_ex;
  tc_kop ops[64];
  tc_index ixs[64];                        /* ops[i].index points to ixs[i] */
  int32_t strides[64][TC_MAX_RANK + 1];    /* ixs[i].strides */
  int32_t argv[64][2];                     /* ops[i].args */
  int n_ops;
  tc_kbuffer bufs[16];
  int n_bufs;
  int32_t outer[TC_MAX_RANK];
  tc_matmul_desc mm;
} kb;
/* An affine index: offset and the strides of vars 0..2 (expr ids, -1 for 0). */
typedef struct kix {
  int32_t off, s[3];
} kix;

static inline int ex(kb *b, int op, int a, int c, int64_t v) {
  b->ex[b->n_ex] = (tc_size_expr){.struct_size = sizeof(tc_size_expr), .op = op, .a = a, .b = c, .value = v};
  return b->n_ex++;
}
static inline int C(kb *b, int64_t v) { return ex(b, TC_SX_CONST, 0, 0, v); }
static inline int bf(kb *b, const char *n, int role, int numel) {
  b->bufs[b->n_bufs] = (tc_kbuffer){.struct_size = sizeof(tc_kbuffer), .name = n, .dtype = TC_F32, .role = role, .numel = numel};
  return b->n_bufs++;
}
static inline kix IX(int off, int s0, int s1, int s2) { return (kix){off, {s0, s1, s2}}; }
static inline int op(kb *b, int kind, int loop, int prim, int a0, int a1) {
  int i = b->n_ops;
  b->argv[i][0] = a0, b->argv[i][1] = a1;
  b->ops[i] = (tc_kop){.struct_size = sizeof(tc_kop), .kind = kind, .dtype = TC_F32, .loop = loop, .prim = prim,
                       .n_args = a0 < 0 ? 0 : a1 < 0 ? 1 : 2, .args = b->argv[i], .buffer = -1, .reuse = -1};
  return b->n_ops++;
}
/* Gives op i the index x (n_vars is set by kdesc, from the kernel's n_outer). */
static inline void set_ix(kb *b, int i, kix x) {
  int32_t *s = b->strides[i];
  for (int d = 0; d <= TC_MAX_RANK; d++) s[d] = d < 3 ? x.s[d] : -1;
  b->ixs[i] = (tc_index){.struct_size = sizeof(tc_index), .offset = x.off, .n_vars = 0, .strides = s, .indirect = -1,
                         .indirect_stride = -1};
  b->ops[i].index = &b->ixs[i];
}
static inline int ld(kb *b, int loop, int buf, kix x) { int i = op(b, TC_KOP_LOAD, loop, 0, -1, -1); b->ops[i].buffer = buf; set_ix(b, i, x); return i; }
static inline int st(kb *b, int loop, int buf, kix x, int v) { int i = op(b, TC_KOP_STORE, loop, 0, v, -1); b->ops[i].buffer = buf; set_ix(b, i, x); return i; }
static inline int P1(kb *b, int loop, int p, int x) { return op(b, TC_KOP_PRIM, loop, p, x, -1); }
static inline int P2(kb *b, int loop, int p, int x, int y) { return op(b, TC_KOP_PRIM, loop, p, x, y); }
static inline int K(kb *b, int loop, double f) { int i = op(b, TC_KOP_CONST, loop, 0, -1, -1); b->ops[i].fconst = f; return i; }
/* exact GELU: 0.5 * h * (1 + erf(h / sqrt(2))) */
static inline int gelu(kb *b, int loop, int h) {
  int e = P1(b, loop, TC_PRIM_ERF, P2(b, loop, TC_PRIM_MUL, h, K(b, loop, 0.70710678118654752)));
  return P2(b, loop, TC_PRIM_MUL, P2(b, loop, TC_PRIM_MUL, h, K(b, loop, 0.5)), P2(b, loop, TC_PRIM_ADD, e, K(b, loop, 1.0)));
}

/* The kernel descriptor over b, as the scheduler would send it: every index has n_outer + 1
 * variables, and a LOOP kernel's reuse / TC_KOP_OVERWRITTEN come from schedule_fill_reuse.
 * A MATMUL kernel gets b->mm (filled by the caller). */
static inline tc_kernel_desc kdesc(kb *b, const char *name, int kind, int n_outer, const int32_t *outer, int inner) {
  for (int i = 0; i < n_outer; i++) b->outer[i] = outer[i];
  for (int i = 0; i < b->n_ops; i++)
    if (b->ops[i].index) b->ixs[i].n_vars = n_outer + 1;
  if (kind == TC_KERNEL_LOOP) schedule_fill_reuse(b->ops, b->n_ops, n_outer + 1);
  return (tc_kernel_desc){.struct_size = sizeof(tc_kernel_desc), .name = name, .kind = kind, .n_outer = n_outer,
                          .outer = b->outer, .inner = inner, .n_buffers = b->n_bufs, .buffers = b->bufs,
                          .buffer_size = sizeof(tc_kbuffer), .n_ops = b->n_ops, .ops = b->ops, .op_size = sizeof(tc_kop),
                          .matmul = kind == TC_KERNEL_MATMUL ? &b->mm : NULL};
}

/* Compiles the one kernel k over b's expressions (checked by the kit's validator first, so a
 * builder mistake names the op and field instead of surfacing in the generator). */
static inline tc_executable *kit_compile(kb *b, const tc_kernel_desc *k) {
  tc_kernel_list l = {.struct_size = sizeof l, .name = k->name, .n_exprs = b->n_ex, .exprs = b->ex,
                      .expr_size = sizeof(tc_size_expr), .n_syms = 0, .n_kernels = 1, .kernels = k,
                      .kernel_size = sizeof *k};
  char err[1024];
  if (tck_kernel_list_validate(&l, err, sizeof err) != TC_OK) {
    fprintf(stderr, "kernel %s: %s\n", k->name, err);
    exit(1);
  }
  tc_option o[32];
  int32_t n = kit_options(TC_OPTION_COMPILE, o, 32);
  tc_compile_args a = {.struct_size = sizeof a, .ctx = kit_ctx, .kernels = &l, .mode = TC_MODE_DEFAULT, .n_options = n, .options = o,
                       .option_size = sizeof(tc_option)};
  CHECK(kit_api.compile(&a));
  return a.exe;
}

/* The benchmark kernels as the scheduler emits them, built into b (both tools use them: vk_bench
 * compiles and times them, vk_diag times their GLSL under timestamp queries). */
static inline tc_kernel_desc desc_copy(kb *b, int64_t n) {
  int N = C(b, n), one = C(b, 1), z = C(b, 0);
  int x = bf(b, "in_x", TC_BUF_INPUT, N), y = bf(b, "out_y", TC_BUF_OUTPUT, N);
  st(b, -1, y, IX(z, one, -1, -1), ld(b, -1, x, IX(z, one, -1, -1)));
  int32_t outer[1] = {N};
  return kdesc(b, "copy", TC_KERNEL_LOOP, 1, outer, -1);
}
/* gelu(layer_norm(x) * g + b) over rows of n */
static inline tc_kernel_desc desc_ln_gelu(kb *b, int64_t m, int64_t n) {
  int M = C(b, m), N = C(b, n), MN = C(b, m * n), one = C(b, 1), z = C(b, 0);
  int bx = bf(b, "in_x", TC_BUF_INPUT, MN), bg = bf(b, "in_g", TC_BUF_INPUT, N), bb = bf(b, "in_b", TC_BUF_INPUT, N), by = bf(b, "out_y", TC_BUF_OUTPUT, MN);
  int s0 = op(b, TC_KOP_REDUCE, 0, TC_PRIM_REDUCE_SUM, ld(b, 0, bx, IX(z, N, one, -1)), -1);
  int nf = K(b, -1, (double)n);
  int mean = P2(b, -1, TC_PRIM_DIV, s0, nf);
  int d = P2(b, 1, TC_PRIM_SUB, ld(b, 1, bx, IX(z, N, one, -1)), mean);
  int s1 = op(b, TC_KOP_REDUCE, 1, TC_PRIM_REDUCE_SUM, P2(b, 1, TC_PRIM_MUL, d, d), -1);
  int rstd = P1(b, -1, TC_PRIM_RSQRT, P2(b, -1, TC_PRIM_ADD, P2(b, -1, TC_PRIM_DIV, s1, nf), K(b, -1, 1e-5)));
  int h = P2(b, 2, TC_PRIM_MUL, P2(b, 2, TC_PRIM_SUB, ld(b, 2, bx, IX(z, N, one, -1)), mean), rstd);
  h = P2(b, 2, TC_PRIM_ADD, P2(b, 2, TC_PRIM_MUL, h, ld(b, 2, bg, IX(z, -1, one, -1))), ld(b, 2, bb, IX(z, -1, one, -1)));
  st(b, 2, by, IX(z, N, one, -1), gelu(b, 2, h));
  int32_t outer[1] = {M};
  return kdesc(b, "layer_norm_gelu", TC_KERNEL_LOOP, 1, outer, N);
}
/* softmax over rows of n */
static inline tc_kernel_desc desc_softmax(kb *b, int64_t m, int64_t n) {
  int M = C(b, m), N = C(b, n), MN = C(b, m * n), one = C(b, 1), z = C(b, 0);
  int bx = bf(b, "in_x", TC_BUF_INPUT, MN), by = bf(b, "out_y", TC_BUF_OUTPUT, MN);
  int mx = op(b, TC_KOP_REDUCE, 0, TC_PRIM_REDUCE_MAX, ld(b, 0, bx, IX(z, N, one, -1)), -1);
  int e1 = P1(b, 1, TC_PRIM_EXP, P2(b, 1, TC_PRIM_SUB, ld(b, 1, bx, IX(z, N, one, -1)), mx));
  int sm = op(b, TC_KOP_REDUCE, 1, TC_PRIM_REDUCE_SUM, e1, -1);
  int e2 = P1(b, 2, TC_PRIM_EXP, P2(b, 2, TC_PRIM_SUB, ld(b, 2, bx, IX(z, N, one, -1)), mx));
  st(b, 2, by, IX(z, N, one, -1), P2(b, 2, TC_PRIM_DIV, e2, sm));
  int32_t outer[1] = {M};
  return kdesc(b, "softmax", TC_KERNEL_LOOP, 1, outer, N);
}

#endif
