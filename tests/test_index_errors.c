/* test_index_errors.c — out-of-range index values inside tc_compile (issue 13; ABI 2.3's index
 * error record). On each backend here (debug-eager, inductor-cpu, vulkan on lavapipe), gather,
 * index_select, embedding, scatter_add and cross_entropy compiled and called with an index too
 * large and with a negative one fail with the facts eager mode names (the op, the value, the dim
 * and its size), the same compiled function then works with good indices, and cross_entropy's
 * ignore_index -100 is no error. A device backend reports at the next wait (reading the result,
 * tc_synchronize), for every call since the last one, also after the compiled function was
 * freed. A plugin of ABI 2.2 gets no checks: it keeps the prims' rule (read 0 / skip) silently. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"
#include "plugin_entry.h"
#include "tc_kit.h"
#include "tc_plugin.h"
#include "test_support.h"

#define assert_contains(hay, needle)                                                                                   \
  cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in:\n%.4000s", (needle), (hay))

static void index_errors_setup(void) {
  unsetenv("TC_OPTIONS");
  setenv("TC_CACHE_DIR", "off", 1);
  tc_error_clear();
}

TestSuite(index_errors, .init = index_errors_setup, .timeout = 300);

/* ---------------------------------------------------------------- the models */
static tc_tensor *m_gather(tc_tensor *x, tc_tensor *i) { return tc_gather(x, 1, i); }
static tc_tensor *m_index_select(tc_tensor *x, tc_tensor *i) { return tc_index_select(x, 0, i); }
static tc_tensor *m_embedding(tc_tensor *w, tc_tensor *i) { return tc_embedding(w, i); }
static tc_tensor *m_scatter_add(tc_tensor *x, tc_tensor *i, tc_tensor *s) { return tc_scatter_add(x, 1, i, s); }
static tc_tensor *m_cross_entropy(tc_tensor *logits, tc_tensor *target) { return tc_cross_entropy(logits, target); }

static tc_tensor *f32(int rank, const int64_t *sizes, const float *v) { return tc_from_host(v, TC_F32, rank, sizes); }
static tc_tensor *i64(int rank, const int64_t *sizes, const int64_t *v) { return tc_from_host(v, TC_I64, rank, sizes); }

static const float X45[20] = {0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34};

/* One op's case: its model, inputs with index `bad` at input `which`, and what the error says. */
typedef struct op_case {
  const char *name;
  tc_model_fn fn;
  int n_inputs;
  int which;       /* the index input */
  int64_t n_index; /* its element count; the bad value goes to element 1 */
  int rank;
  int64_t sizes[2];
  int64_t good[4];
  int64_t too_large;
  const char *large_text, *neg_text; /* the message with each value */
  int n_out;                         /* elements of the good call's result */
  float want[20];                    /* the good call's result (first n_out, row-major) */
} op_case;

static tc_tensor *index_input(const op_case *oc, int64_t bad_value, bool bad) {
  int64_t v[4];
  memcpy(v, oc->good, sizeof v);
  if (bad) v[1] = bad_value;
  return i64(oc->rank, oc->sizes, v);
}

static void inputs_of(const op_case *oc, tc_tensor **in, tc_tensor *index) {
  in[oc->which] = index;
  if (oc->fn == TC_FN(m_cross_entropy)) {
    in[0] = f32(2, (int64_t[]){4, 5}, X45);
  } else {
    in[0] = f32(2, (int64_t[]){4, 5}, X45);
    if (oc->n_inputs == 3) in[2] = f32(2, (int64_t[]){1, 4}, (const float[]){1, 1, 1, 1});
  }
}

static const op_case cases[] = {
    {"gather", TC_FN(m_gather), 2, 1, 4, 2, {4, 1}, {0, 1, 2, 3}, 5,
     "tc_gather: index value 5 is out of range for dim 1 of x of size 5",
     "tc_gather: index value -1 is out of range for dim 1 of x of size 5", 4, {0, 11, 22, 33}},
    {"index_select", TC_FN(m_index_select), 2, 1, 3, 1, {3}, {3, 0, 3}, 4,
     "tc_index_select: index value 4 is out of range for dim 0 of x of size 4",
     "tc_index_select: index value -1 is out of range for dim 0 of x of size 4", 15,
     {30, 31, 32, 33, 34, 0, 1, 2, 3, 4, 30, 31, 32, 33, 34}},
    {"embedding", TC_FN(m_embedding), 2, 1, 2, 1, {2}, {2, 1}, 77777,
     "tc_embedding: indices value 77777 is out of range for dim 0 of weight of size 4",
     "tc_embedding: indices value -1 is out of range for dim 0 of weight of size 4", 10,
     {20, 21, 22, 23, 24, 10, 11, 12, 13, 14}},
    {"scatter_add", TC_FN(m_scatter_add), 3, 1, 4, 2, {1, 4}, {4, 3, 2, 1}, 5,
     "tc_scatter_add: index value 5 is out of range for dim 1 of x of size 5",
     "tc_scatter_add: index value -1 is out of range for dim 1 of x of size 5", 20,
     {0, 2, 3, 4, 5, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34}},
};

/* The error of a call that must fail: at tc_call (host memory) or at the read of its result
 * (a device reports at the next wait). */
static const char *failing_call(tc_compiled *f, tc_tensor *const *in) {
  tc_error_clear();
  tc_tensor *y = tc_call(f, in);
  if (!y) return tc_last_error();
  size_t bytes = (size_t)tc_numel(y) * tc_dtype_size(tc_dtype_of(y));
  void *buf = malloc(bytes + 1);
  tc_status s = tc_to_host(y, buf, bytes);
  free(buf);
  tc_release(y);
  cr_assert_neq(s, TC_OK, "an out-of-range index gave a result without an error");
  return tc_last_error();
}

static void read_f32(tc_tensor *y, float *out, int64_t n) {
  cr_assert(y, "%s", tc_last_error());
  cr_assert_eq(tc_numel(y), n);
  cr_assert_eq(tc_to_host(y, out, (size_t)n * sizeof(float)), TC_OK, "%s", tc_last_error());
}

static tc_compiled *compile_on(const char *backend, const op_case *oc) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = oc->name, .fullgraph = true};
  tc_compiled *f = tc_compile(oc->fn, oc->n_inputs, &o);
  cr_assert(f, "%s", tc_last_error());
  return f;
}

/* Each op: too large, negative, then good indices on the same compiled function. */
static void each_op(const char *backend) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const op_case *oc = &cases[c];
    tc_compiled *f = compile_on(backend, oc);
    tc_tensor *in[3] = {0};
    inputs_of(oc, in, index_input(oc, oc->too_large, true));
    const char *msg = failing_call(f, in);
    assert_contains(msg, oc->large_text);
    assert_contains(msg, backend);
    cr_assert_eq(tc_last_status(), TC_ERR_INVALID_ARGUMENT, "%s: %s", oc->name, msg);
    tc_release(in[oc->which]);
    in[oc->which] = index_input(oc, -1, true);
    assert_contains(failing_call(f, in), oc->neg_text);
    tc_release(in[oc->which]);
    in[oc->which] = index_input(oc, 0, false);
    float got[20];
    tc_tensor *y = tc_call(f, in);
    read_f32(y, got, oc->n_out);
    for (int k = 0; k < oc->n_out; k++)
      cr_assert_eq(got[k], oc->want[k], "%s on %s: element %d is %g, want %g", oc->name, backend, k, got[k],
                   oc->want[k]);
    tc_release(y);
    for (int k = 0; k < oc->n_inputs; k++) tc_release(in[k]);
    tc_compiled_free(f);
  }
}

/* cross_entropy: a target beyond the classes or negative is an error, -100 (ignore_index) is not. */
static void cross_entropy_targets(const char *backend) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = "ce", .fullgraph = true};
  tc_compiled *f = tc_compile(TC_FN(m_cross_entropy), 2, &o);
  cr_assert(f, "%s", tc_last_error());
  tc_tensor *logits = tc_zeros(TC_F32, 2, (int64_t[]){4, 5});
  tc_tensor *big = i64(1, (int64_t[]){4}, (const int64_t[]){0, -100, 5, 1});
  tc_tensor *neg = i64(1, (int64_t[]){4}, (const int64_t[]){0, -100, -1, 1});
  tc_tensor *ok = i64(1, (int64_t[]){4}, (const int64_t[]){0, -100, 4, -100});
  assert_contains(failing_call(f, (tc_tensor *[]){logits, big}),
                  "tc_cross_entropy: target value 5 is out of range for the classes of logits of size 5");
  assert_contains(failing_call(f, (tc_tensor *[]){logits, neg}),
                  "tc_cross_entropy: target value -1 is out of range for the classes of logits of size 5");
  float loss;
  read_f32(tc_call(f, (tc_tensor *[]){logits, ok}), &loss, 1);
  cr_assert(fabsf(loss - logf(5.0f)) < 1e-6f, "uniform logits: log(5), got %g", loss); /* -100 rows left out */
  tc_compiled_free(f);
}

/* Many threads meet bad indices at once: one error is reported, with one of the bad values. */
static void one_error_of_many(const char *backend) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  enum { ROWS = 4096, COLS = 64 };
  int64_t *idx = malloc(sizeof(int64_t) * ROWS * COLS);
  for (int64_t k = 0; k < ROWS * COLS; k++) idx[k] = k % 3 == 0 ? 1000 + k : k % COLS; /* every third bad */
  tc_tensor *x = tc_zeros(TC_F32, 2, (int64_t[]){ROWS, COLS});
  tc_tensor *index = i64(2, (int64_t[]){ROWS, COLS}, idx);
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = "many", .fullgraph = true};
  tc_compiled *f = tc_compile(TC_FN(m_gather), 2, &o);
  cr_assert(f, "%s", tc_last_error());
  const char *msg = failing_call(f, (tc_tensor *[]){x, index});
  long long value = -1;
  const char *at = strstr(msg, "index value ");
  cr_assert(at && sscanf(at, "index value %lld", &value) == 1, "%s", msg);
  cr_assert(value >= 1000 && (value - 1000) % 3 == 0, "not one of the bad values: %lld (%s)", value, msg);
  assert_contains(msg, "out of range for dim 1 of x of size 64");
  free(idx);
  tc_compiled_free(f);
}

Test(index_errors, debug_eager_each_op) { each_op("debug-eager"); }
Test(index_errors, inductor_cpu_each_op) { each_op("inductor-cpu"); }
Test(index_errors, vulkan_each_op) { each_op("vulkan"); }
Test(index_errors, debug_eager_cross_entropy) { cross_entropy_targets("debug-eager"); }
Test(index_errors, inductor_cpu_cross_entropy) { cross_entropy_targets("inductor-cpu"); }
Test(index_errors, vulkan_cross_entropy) { cross_entropy_targets("vulkan"); }
Test(index_errors, inductor_cpu_one_error_of_many) { one_error_of_many("inductor-cpu"); }
Test(index_errors, vulkan_one_error_of_many) { one_error_of_many("vulkan"); }

/* ---------------------------------------------------------------- a device: errors at waits */
Test(index_errors, vulkan_reports_at_the_next_wait) {
  if (!test_backend_available("vulkan")) cr_skip_test("vulkan is not available here");
  const op_case *oc = &cases[2]; /* embedding */
  tc_compiled *f = compile_on("vulkan", oc);
  tc_tensor *in[2] = {0};
  inputs_of(oc, in, index_input(oc, oc->too_large, true));
  tc_tensor *good = index_input(oc, 0, false);
  /* The call is asynchronous: it returns a result; tc_synchronize delivers the error. */
  tc_tensor *y = tc_call(f, in);
  cr_assert(y, "%s", tc_last_error());
  cr_assert_eq(tc_synchronize("vulkan"), TC_ERR_INVALID_ARGUMENT, "%s", tc_last_error());
  assert_contains(tc_last_error(), oc->large_text);
  assert_contains(tc_last_error(), "call ");
  cr_assert_eq(tc_synchronize("vulkan"), TC_OK, "reported once: %s", tc_last_error());
  tc_release(y);
  /* Two calls before a wait, one bad: the wait names both calls. */
  tc_tensor *y1 = tc_call(f, in);
  tc_tensor *y2 = tc_call(f, (tc_tensor *[]){in[0], good});
  cr_assert(y1 && y2, "%s", tc_last_error());
  float got[10];
  cr_assert_neq(tc_to_host(y2, got, sizeof got), TC_OK, "the bad call before it went unreported");
  assert_contains(tc_last_error(), "one of calls ");
  assert_contains(tc_last_error(), oc->large_text);
  read_f32(y2, got, 10); /* read again: the error was delivered, the values are right */
  cr_assert_eq(got[0], 20.0f);
  tc_release(y1);
  tc_release(y2);
  /* Freed before anything waited: the error is not lost. */
  y = tc_call(f, in);
  cr_assert(y, "%s", tc_last_error());
  tc_compiled_free(f);
  cr_assert_neq(tc_to_host(y, got, sizeof got), TC_OK, "the error of a freed function's call was lost");
  assert_contains(tc_last_error(), oc->large_text);
  cr_assert_eq(tc_synchronize("vulkan"), TC_OK, "%s", tc_last_error());
  tc_release(y);
}

/* ---------------------------------------------------------------- the kernel list */
/* A build-tree plugin registered in process under another name: its compile sees the kernel
 * list (counting index checks), and its table may claim an older minor version. */
static tc_plugin_query_fn wrapped_query;
static tc_error *(*wrapped_compile)(tc_compile_args *);
static uint32_t claimed_minor;
static const char *wrapped_name;
static int n_checks, n_lists;
static char list_problem[256];

static tc_error *counting_compile(tc_compile_args *a) {
  if (a->kernels) {
    n_lists++;
    for (int32_t k = 0; k < a->kernels->n_kernels; k++) {
      const tc_kernel_desc *kd = tck_list_kernel(a->kernels, k);
      for (int32_t i = 0; i < kd->n_ops; i++) {
        const tc_kop *op = tck_kernel_op(kd, i);
        if (op->kind != TC_KOP_INDEX_CHECK) continue;
        n_checks++;
        const tc_kbuffer *b = tck_kernel_buffer(kd, op->buffer);
        if (strcmp(b->name, "index_error") || b->dtype != TC_I64 || b->role != TC_BUF_OUTPUT)
          snprintf(list_problem, sizeof list_problem, "kernel %s: record buffer %s, dtype %d, role %d", kd->name,
                   b->name, (int)b->dtype, (int)b->role);
      }
    }
  }
  return wrapped_compile(a);
}

static tc_error *wrapper_query(tc_query_args *q) {
  tc_error *err = wrapped_query(q);
  if (err) return err;
  q->table->name = wrapped_name;
  q->table->option_prefix = wrapped_name;
  q->table->n_options = 0;
  q->table->abi_minor = claimed_minor;
  wrapped_compile = q->table->compile;
  q->table->compile = counting_compile;
  return NULL;
}

static void wrap(const char *file, const char *name, uint32_t minor) {
  char why[1200];
  if (!test_plugin_entry(file, &wrapped_query, why, sizeof why)) cr_skip_test("%s", why);
  cr_assert_not_null(wrapped_query);
  wrapped_name = name;
  claimed_minor = minor;
  cr_assert_eq(tc_backend_register(wrapper_query), TC_OK, "%s", tc_last_error());
}

Test(index_errors, kernel_lists_carry_checks_and_their_record) {
  wrap("tc-inductor-cpu.so", "cpu-now", TC_ABI_MINOR);
  each_op("cpu-now");
  cr_assert_gt(n_lists, 0);
  cr_assert_geq(n_checks, (int)(sizeof cases / sizeof cases[0]), "%d index checks in %d lists", n_checks, n_lists);
  cr_assert_eq(list_problem[0], 0, "%s", list_problem);
}

/* Older plugins never write a record: no checks in their kernels, no error, the prims' rule. */
static void old_plugin_reads_zero(const char *file) {
  wrap(file, "old-minor", 2);
  const op_case *oc = &cases[0]; /* gather along dim 1, rows 0..3 pick 0, 5 (bad), 2, 3 */
  tc_compiled *f = compile_on("old-minor", oc);
  tc_tensor *in[2] = {0};
  inputs_of(oc, in, index_input(oc, oc->too_large, true));
  float got[4];
  read_f32(tc_call(f, in), got, 4);
  cr_assert(got[0] == 0 && got[1] == 0 && got[2] == 22 && got[3] == 33, "%g %g %g %g", got[0], got[1], got[2], got[3]);
  cr_assert_eq(n_checks, 0, "a 2.2 plugin was handed %d index checks", n_checks);
  tc_compiled_free(f);
}

Test(index_errors, abi_2_2_kernel_plugin_is_not_checked) { old_plugin_reads_zero("tc-inductor-cpu.so"); }
Test(index_errors, abi_2_2_graph_plugin_is_not_checked) { old_plugin_reads_zero("tc-debug-eager.so"); }
