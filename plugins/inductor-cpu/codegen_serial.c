/* codegen_serial.c — reduce-overhead's serial twins. A kernel below the parallel thresholds runs
 * on one thread either way, but `#pragma omp parallel ... if(work >= N)` still enters libgomp,
 * which makes a team of one and pays a futex call per launch (8 per call of tiny_mlp_b1, most of
 * its host time besides the BLAS calls). In reduce-overhead each kernel also gets a twin without
 * OpenMP regions, and its launcher calls the twin when the sizes keep the kernel small; with
 * constant sizes the compiler folds the test away. The default mode keeps one copy of each kernel
 * (the twins double the source to compile). */
#include <stdio.h>
#include <string.h>

#include "icpu.h"

/* True for the OpenMP lines a serial copy drops: regions and worksharing loops. */
static bool drops_line(const char *line, size_t len) {
  while (len && (*line == ' ' || *line == '\t')) line++, len--;
  static const char *const dropped[] = {"#pragma omp parallel", "#pragma omp for"};
  for (size_t i = 0; i < sizeof dropped / sizeof *dropped; i++) {
    size_t n = strlen(dropped[i]);
    if (len >= n && !memcmp(line, dropped[i], n)) return true;
  }
  return false;
}

void serial_twin_emit(tck_str *s, const char *kernel_text, const char *fname) {
  char head[128], twin_head[160];
  snprintf(head, sizeof head, "static void %s(", fname);
  snprintf(twin_head, sizeof twin_head, "static void %s_serial(", fname);
  tck_str_printf(s, "/* %s without OpenMP regions, for launches below the parallel thresholds. */\n", fname);
  for (const char *p = kernel_text; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    if (!strncmp(p, head, strlen(head))) {
      tck_str_puts(s, twin_head);
      tck_str_printf(s, "%.*s", (int)(len - strlen(head)), p + strlen(head));
    } else if (drops_line(p, len)) {
      /* the loop under it runs on this thread */
    } else {
      tck_str_printf(s, "%.*s", (int)len, p);
    }
    p += len;
  }
}

void serial_predicate_emit(tck_str *s, const tc_kernel_list *list, const tc_kernel_desc *k, tck_exprs *x,
                           const char *fname) {
  if (list->n_exprs > 0) memset(x->used, 0, (size_t)list->n_exprs * sizeof *x->used);
  int32_t ids[TC_MAX_RANK + 1];
  int32_t n = 0;
  int64_t limit;
  if (k->kind == TC_KERNEL_MATMUL) {
    /* codegen_matmul.c: parallel when items > 1 && M*N*K >= ICPU_PAR_MIN_MNK */
    ids[n++] = k->matmul->m;
    ids[n++] = k->matmul->n;
    ids[n++] = k->matmul->k;
    limit = ICPU_PAR_MIN_MNK;
  } else {
    /* codegen_loop.c: parallel when outer points x inner extent >= ICPU_PAR_MIN_WORK */
    for (int32_t v = 0; v < k->n_outer && n < TC_MAX_RANK; v++) ids[n++] = k->outer[v];
    if (k->inner >= 0) ids[n++] = k->inner;
    limit = ICPU_PAR_MIN_WORK;
  }
  for (int32_t i = 0; i < n; i++) tck_exprs_mark(x, ids[i]);
  tck_str_printf(s, "static int %s_is_small(const int64_t *syms) {\n", fname);
  for (int32_t i = 0; i < list->n_syms; i++) tck_str_printf(s, "  const int64_t s%d = syms[%d]; (void)s%d;\n", i, i, i);
  tck_exprs_declare(s, x, 1);
  if (list->n_syms == 0) tck_str_puts(s, "  (void)syms;\n");
  tck_str_puts(s, "  return 1");
  for (int32_t i = 0; i < n; i++) {
    tck_str_puts(s, "*(");
    tck_exprs_ref(s, x, ids[i]);
    tck_str_puts(s, ")");
  }
  tck_str_printf(s, " < %lld;\n", (long long)limit);
  tck_str_puts(s, "}\n");
}
