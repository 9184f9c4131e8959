/*
 * tc.h — the public API of tc: tensors, eager ops, tc_compile, backends.
 *
 * Conventions:
 *  - Functions returning a tensor return a new reference (release it with tc_release, or let an
 *    enclosing scope do it) or NULL on error; tc_last_error() then says what was wrong.
 *    Every op accepts NULL inputs and returns NULL without touching the error, so chains of ops
 *    report the first failure.
 *  - Functions returning tc_status return TC_OK or an error code with tc_last_error() set.
 *  - Errors are per thread. Nothing here aborts or exits on bad input.
 *  - Sizes are int64_t. A negative dim counts from the end, as in PyTorch.
 *  - Thread-safety: tensors are not synchronized; use one thread per tensor graph. The backend
 *    registry is thread-safe.
 */
#ifndef TC_TC_H
#define TC_TC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_common.h" /* tc_status, tc_dtype, tc_mode, tc_device_type, TC_MAX_RANK: shared with the plugin ABI */

/* TC_API marks what libtc exports; everything else in the library is hidden. On Windows, the
 * library's own build defines TC_BUILD_LIBRARY (dllexport) and a static link defines TC_STATIC. */
#ifndef TC_API
#if defined(_WIN32)
#if defined(TC_BUILD_LIBRARY)
#define TC_API __declspec(dllexport)
#elif defined(TC_STATIC)
#define TC_API
#else
#define TC_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_tensor tc_tensor;

/* ---------------------------------------------------------------- version */
/* The library's version, "MAJOR.MINOR.PATCH" (static storage). Thread-safe. */
TC_API const char *tc_version(void);
/* The plugin ABI this library speaks (tc_plugin.h's TC_ABI_MAJOR/MINOR). Thread-safe. */
TC_API void tc_abi_version(int *major, int *minor); /* out: either may be NULL */

/* ---------------------------------------------------------------- errors */
/* The message of the last failed call on this thread ("" when none). Borrowed until the next
 * failing call on this thread. */
TC_API const char *tc_last_error(void);
/* The status code of that failure (TC_OK when none): tells "bad argument" from "backend
 * unavailable" or "out of memory" without parsing the message; tc_status_name names it. */
TC_API tc_status tc_last_status(void);
TC_API void tc_error_clear(void); /* forgets this thread's last error */
TC_API const char *tc_status_name(tc_status s);
TC_API const char *tc_dtype_name(tc_dtype d);
TC_API size_t tc_dtype_size(tc_dtype d); /* bytes per element; 0 for an unknown dtype */

/* ---------------------------------------------------------------- lifetime */
/* tc_release gives back one of your tc_retain references first; with none outstanding it
 * releases the creation reference (inside a scope: gives it up early, and the scope skips the
 * tensor). So `tc_retain(t); tc_release(t)` changes nothing, and tc_retain is how a tensor
 * outlives its scope. */
TC_API tc_tensor *tc_retain(tc_tensor *t);
TC_API void tc_release(tc_tensor *t); /* NULL is fine */

/* Scopes: every tensor created while a scope is open is released when it closes, except those
 * passed to tc_scope_keep (which survive into the enclosing scope) or retained (your reference
 * survives the scope's). Scopes nest. */
typedef struct tc_scope tc_scope;
TC_API tc_scope *tc_scope_open(void);
TC_API tc_tensor *tc_scope_keep(tc_scope *s, tc_tensor *t); /* returns t */
TC_API void tc_scope_close(tc_scope *s);

/* ---------------------------------------------------------------- creation and host access */
TC_API tc_tensor *tc_from_host(const void *data, tc_dtype dtype, int rank, const int64_t *sizes);
TC_API tc_tensor *tc_from_f32(const float *data, int rank, const int64_t *sizes);
TC_API tc_tensor *tc_zeros(tc_dtype dtype, int rank, const int64_t *sizes);
TC_API tc_tensor *tc_ones(tc_dtype dtype, int rank, const int64_t *sizes);
TC_API tc_tensor *tc_full(double value, tc_dtype dtype, int rank, const int64_t *sizes);
TC_API tc_tensor *tc_scalar(double value, tc_dtype dtype); /* rank 0 */
/* Filled tensors shaped like x (its sizes stay symbolic inside a traced function). */
TC_API tc_tensor *tc_full_like(tc_tensor *x, double value, tc_dtype dtype);
TC_API tc_tensor *tc_zeros_like(tc_tensor *x); /* x's dtype */
TC_API tc_tensor *tc_ones_like(tc_tensor *x);
TC_API tc_tensor *tc_arange(double start, double end, double step, tc_dtype dtype);
/* Seeded, counter-based (Philox4x32-10): identical on every backend. */
TC_API tc_tensor *tc_rand(uint64_t seed, tc_dtype dtype, int rank, const int64_t *sizes);  /* U[0,1) */
TC_API tc_tensor *tc_randn(uint64_t seed, tc_dtype dtype, int rank, const int64_t *sizes); /* N(0,1) */

/* Copies the tensor's elements, in row-major order, to dst (bytes must equal numel*itemsize).
 * Inside a traced function this is a graph break. */
TC_API tc_status tc_to_host(const tc_tensor *t, void *dst, size_t bytes);
/* The single element of a one-element tensor, as double; NaN with tc_last_error set on error.
 * Inside a traced function this is a graph break. */
TC_API double tc_item(const tc_tensor *t);

/* ---------------------------------------------------------------- metadata */
TC_API int tc_rank(const tc_tensor *t);
/* Size of dim (negative counts from the end). Inside a traced function this pins a dynamic
 * size to its current value (a guard); use tc_flatten/tc_unflatten/-1 to keep it symbolic. */
TC_API int64_t tc_size(const tc_tensor *t, int dim);
TC_API int64_t tc_numel(const tc_tensor *t);
TC_API tc_dtype tc_dtype_of(const tc_tensor *t);
TC_API bool tc_is_contiguous(const tc_tensor *t);
/* Name of the backend holding the tensor's storage ("host" for host memory); NULL (with an
 * error) for a NULL tensor. Queries on NULL return -1 / false / NULL and set an error naming
 * the query, unless an earlier failure already said why. */
TC_API const char *tc_device_of(const tc_tensor *t);
/* A copy of t on backend `name` ("host" for host memory). Compiled functions on a device
 * backend run fastest on tensors already there. */
TC_API tc_tensor *tc_to_device(tc_tensor *t, const char *name);
/* Waits until the work queued on backend `name` is done. Calls on a device backend return
 * once their work is submitted; reading a result (tc_to_host, tc_item) waits by itself, so
 * this is for timing and for handing memory to other code ("host": nothing to wait for). */
TC_API tc_status tc_synchronize(const char *name);

/* ---------------------------------------------------------------- views (no copies) */
TC_API tc_tensor *tc_reshape(tc_tensor *x, int rank, const int64_t *sizes); /* one size may be -1 */
TC_API tc_tensor *tc_flatten(tc_tensor *x, int start_dim, int end_dim);
TC_API tc_tensor *tc_unflatten(tc_tensor *x, int dim, int n, const int64_t *sizes); /* one may be -1 */
TC_API tc_tensor *tc_permute(tc_tensor *x, const int *perm);                      /* rank entries */
TC_API tc_tensor *tc_transpose(tc_tensor *x, int dim0, int dim1);
TC_API tc_tensor *tc_slice(tc_tensor *x, int dim, int64_t start, int64_t stop, int64_t step);
TC_API tc_tensor *tc_expand(tc_tensor *x, int rank, const int64_t *sizes); /* -1 keeps a size */
TC_API tc_tensor *tc_unsqueeze(tc_tensor *x, int dim);
TC_API tc_tensor *tc_squeeze(tc_tensor *x, int dim);
TC_API tc_tensor *tc_contiguous(tc_tensor *x);
TC_API tc_tensor *tc_to_dtype(tc_tensor *x, tc_dtype dtype);
/* torch.flip: reverses the listed dims (a copy, not a view). */
TC_API tc_tensor *tc_flip(tc_tensor *x, int n_dims, const int *dims);
/* torch.nn.functional.pad (constant): n_pads values, a (before, after) pair per dim from the last. */
TC_API tc_tensor *tc_pad(tc_tensor *x, int n_pads, const int64_t *pads, double value);

/* ---------------------------------------------------------------- elementwise
 * Binary ops broadcast and promote types as PyTorch does. */
TC_API tc_tensor *tc_add(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_sub(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_mul(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_div(tc_tensor *a, tc_tensor *b); /* true division: integers promote to f32 */
TC_API tc_tensor *tc_div_trunc(tc_tensor *a, tc_tensor *b); /* rounds toward zero (torch rounding_mode="trunc") */
TC_API tc_tensor *tc_remainder(tc_tensor *a, tc_tensor *b); /* the divisor's sign, as torch.remainder */
TC_API tc_tensor *tc_fmod(tc_tensor *a, tc_tensor *b);      /* the dividend's sign, as torch.fmod */
TC_API tc_tensor *tc_pow(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_maximum(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_minimum(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_add_scalar(tc_tensor *a, double s);
TC_API tc_tensor *tc_mul_scalar(tc_tensor *a, double s);
TC_API tc_tensor *tc_pow_scalar(tc_tensor *a, double s);
TC_API tc_tensor *tc_eq(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_ne(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_lt(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_le(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_gt(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_ge(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_logical_and(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_logical_or(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_bitwise_and(tc_tensor *a, tc_tensor *b); /* integers or bool */
TC_API tc_tensor *tc_bitwise_or(tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_logical_not(tc_tensor *a);
TC_API tc_tensor *tc_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b);
TC_API tc_tensor *tc_masked_fill(tc_tensor *x, tc_tensor *mask, double value);
TC_API tc_tensor *tc_neg(tc_tensor *x);
TC_API tc_tensor *tc_abs(tc_tensor *x);
TC_API tc_tensor *tc_exp(tc_tensor *x);
TC_API tc_tensor *tc_log(tc_tensor *x);
TC_API tc_tensor *tc_sqrt(tc_tensor *x);
TC_API tc_tensor *tc_rsqrt(tc_tensor *x);
TC_API tc_tensor *tc_sin(tc_tensor *x);
TC_API tc_tensor *tc_cos(tc_tensor *x);
TC_API tc_tensor *tc_tanh(tc_tensor *x);
TC_API tc_tensor *tc_erf(tc_tensor *x);
TC_API tc_tensor *tc_floor(tc_tensor *x);
TC_API tc_tensor *tc_ceil(tc_tensor *x);
TC_API tc_tensor *tc_round(tc_tensor *x);
TC_API tc_tensor *tc_sign(tc_tensor *x);
TC_API tc_tensor *tc_reciprocal(tc_tensor *x);
TC_API tc_tensor *tc_isnan(tc_tensor *x);
TC_API tc_tensor *tc_sigmoid(tc_tensor *x);
TC_API tc_tensor *tc_relu(tc_tensor *x);
TC_API tc_tensor *tc_gelu(tc_tensor *x);      /* exact: x * Phi(x), with erf */
TC_API tc_tensor *tc_gelu_tanh(tc_tensor *x); /* the tanh approximation */
TC_API tc_tensor *tc_silu(tc_tensor *x);

/* ---------------------------------------------------------------- reductions
 * dims: n_dims entries (n_dims == 0 reduces over all dims). max, min, argmax and argmin over
 * a dim of size 0 are an error, as in PyTorch (they have no identity). */
TC_API tc_tensor *tc_sum(tc_tensor *x, int n_dims, const int *dims, bool keepdim);
TC_API tc_tensor *tc_mean(tc_tensor *x, int n_dims, const int *dims, bool keepdim);
TC_API tc_tensor *tc_max(tc_tensor *x, int n_dims, const int *dims, bool keepdim);
TC_API tc_tensor *tc_min(tc_tensor *x, int n_dims, const int *dims, bool keepdim);
TC_API tc_tensor *tc_prod(tc_tensor *x, int n_dims, const int *dims, bool keepdim);
/* Variance with Bessel's correction `correction` (1: unbiased, 0: population). */
TC_API tc_tensor *tc_var(tc_tensor *x, int n_dims, const int *dims, int correction, bool keepdim);
TC_API tc_tensor *tc_argmax(tc_tensor *x, int dim, bool keepdim); /* i64 */
TC_API tc_tensor *tc_argmin(tc_tensor *x, int dim, bool keepdim);

/* ---------------------------------------------------------------- neural network */
TC_API tc_tensor *tc_softmax(tc_tensor *x, int dim);
TC_API tc_tensor *tc_log_softmax(tc_tensor *x, int dim);
/* Normalizes over the last n_norm dims; weight/bias may be NULL. */
TC_API tc_tensor *tc_layer_norm(tc_tensor *x, int n_norm, tc_tensor *weight, tc_tensor *bias, double eps);
TC_API tc_tensor *tc_rms_norm(tc_tensor *x, int n_norm, tc_tensor *weight, double eps);
/* Batched, broadcasting matmul (torch.matmul semantics, incl. 1-D operands). */
TC_API tc_tensor *tc_matmul(tc_tensor *a, tc_tensor *b);
/* x @ w^T + b, w is (out_features, in_features) as in PyTorch; b may be NULL. */
TC_API tc_tensor *tc_linear(tc_tensor *x, tc_tensor *w, tc_tensor *b);
TC_API tc_tensor *tc_cat(int n, tc_tensor *const *xs, int dim);
/* Index values follow PyTorch: no wrapping, and a value outside [0, size) is an error naming
 * the op, the position and the bound. Checked in eager mode; inside tc_compile the values are
 * not known while tracing and the kernels read 0 / skip (docs/primitives.md, GATHER). */
TC_API tc_tensor *tc_gather(tc_tensor *x, int dim, tc_tensor *index);
TC_API tc_tensor *tc_index_select(tc_tensor *x, int dim, tc_tensor *index);
TC_API tc_tensor *tc_embedding(tc_tensor *weight, tc_tensor *indices);
TC_API tc_tensor *tc_scatter_add(tc_tensor *x, int dim, tc_tensor *index, tc_tensor *src);
TC_API tc_tensor *tc_tril(tc_tensor *x, int64_t diagonal);
TC_API tc_tensor *tc_triu(tc_tensor *x, int64_t diagonal);
/* Mean cross entropy of logits (N, C) against integer targets (N). As in PyTorch, a target of
 * -100 (ignore_index) leaves its row out of the sum and the count (all rows ignored: NaN);
 * another target outside [0, C) is an error in eager mode. */
TC_API tc_tensor *tc_cross_entropy(tc_tensor *logits, tc_tensor *target);
/* Inverted dropout: zeroes with probability p, scales the rest by 1/(1-p); identity when
 * !train. Seeded: the same seed gives the same mask on every backend. */
TC_API tc_tensor *tc_dropout(tc_tensor *x, double p, uint64_t seed, bool train);

/* ---------------------------------------------------------------- gradients
 * Reverse-mode autodiff on a tape (docs/autodiff.md): every op is built from prims and each
 * prim has one derivative rule, so every op is differentiable. A prim records its operands when
 * one of them requires grad (and grad mode is on); only floating results carry gradients.
 * Inside a compiled function the backward prims are traced like the forward ones, so a whole
 * training step (forward, tc_grad, update) compiles into one graph; a compiled function called
 * with inputs that require grad returns a result whose gradient runs a compiled backward graph.
 * Per thread, like tensors. */
/* Marks a floating leaf tensor as one whose gradient is wanted (or clears the mark). An error
 * for an integer or bool tensor, and for clearing the mark of a non-leaf (an op's result). */
TC_API tc_status tc_set_requires_grad(tc_tensor *t, bool requires_grad);
/* True for a marked leaf and for the result of an op on one (false with an error for NULL). */
TC_API bool tc_requires_grad(const tc_tensor *t);
/* The gradient tc_backward accumulated into leaf t: a new reference, or NULL when there is
 * none yet (tc_last_status() then stays TC_OK). */
TC_API tc_tensor *tc_grad_of(tc_tensor *t);
/* Forgets t's accumulated gradient (PyTorch's zero_grad(set_to_none=True)). */
TC_API tc_status tc_zero_grad(tc_tensor *t);
/* A tensor with x's value that requires no grad and is not recorded (a view, no copy). */
TC_API tc_tensor *tc_detach(tc_tensor *x);
/* Turns recording on or off for this thread (torch.no_grad); returns the previous setting. */
TC_API bool tc_set_grad_enabled(bool enabled);
/* Gradients of a one-element loss with respect to wrt[0..n): grads_out[k] is a new reference,
 * of wrt[k]'s shape and dtype (zeros when loss does not depend on wrt[k]). Each wrt[k] must
 * require grad. Leaves' accumulated gradients are not touched. */
TC_API tc_status tc_grad(tc_tensor *loss, tc_tensor *const *wrt, int n, tc_tensor **grads_out /* out */);
/* Same for an output of any shape, weighted by grad_output (out's shape and dtype): the
 * vector-Jacobian product grad_output^T d(out)/d(wrt). */
TC_API tc_status tc_grad_with(tc_tensor *out, tc_tensor *grad_output, tc_tensor *const *wrt, int n,
                              tc_tensor **grads_out /* out */);
/* Adds d(loss)/d(leaf) to the accumulated gradient of every leaf loss depends on that requires
 * grad (read it with tc_grad_of). loss must have one element. */
TC_API tc_status tc_backward(tc_tensor *loss);
/* Same for an output of any shape, weighted by grad_output (out's shape and dtype). */
TC_API tc_status tc_backward_with(tc_tensor *out, tc_tensor *grad_output);

/* ---------------------------------------------------------------- in-place updates and optimizers
 * A compiled function returns one tensor; state that a step changes (parameters, optimizer
 * moments) is updated in place instead, as PyTorch's optimizer.step() does. */
/* dst's elements become src's (same dtype and sizes; src may be any view). Eagerly: a copy now
 * into dst's storage (dst must be contiguous and not the result of an op that records a
 * gradient), seen by every view of it. Inside a compiled function dst must be one of the
 * function's parameters: later uses of dst in the function see the new values, and the call
 * writes them into the caller's tensor; the memory plan writes them straight into its buffer
 * when no kernel reads the old values afterwards (tc_compile_stats counts both ways). */
TC_API tc_status tc_assign(tc_tensor *dst, tc_tensor *src);

/* torch.optim.SGD's update: g = grad + weight_decay * p; with momentum, buf = momentum * buf +
 * (1 - dampening) * g (buf starts at zero, so the first step makes it g, as PyTorch does) and
 * g = nesterov ? g + momentum * buf : buf; then p -= lr * g. */
typedef struct tc_sgd_options {
  size_t struct_size;
  double lr;             /* used when lr_tensor is NULL */
  tc_tensor *lr_tensor;  /* rank 0, optional: a rate that changes between calls without retracing */
  double momentum, dampening, weight_decay;
  bool nesterov;
} tc_sgd_options;
/* torch.optim.Adam / AdamW: t += 1; Adam folds weight decay into the gradient (g += wd * p),
 * AdamW (decoupled_weight_decay) shrinks the parameter first (p *= 1 - lr * wd); then
 * m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g², and
 * p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)  (eps outside the root, as PyTorch). */
typedef struct tc_adam_options {
  size_t struct_size;
  double lr;            /* used when lr_tensor is NULL */
  tc_tensor *lr_tensor; /* rank 0, optional, as in tc_sgd_options */
  double beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay; /* AdamW */
} tc_adam_options;
/* One optimizer step over n parameters, written in tc ops, so inside a compiled training step
 * it compiles with the forward and the gradients into one graph. Updates params[k] and the
 * state with tc_assign (in place: they must be parameters of the compiled function, or real
 * contiguous tensors eagerly); grads[k] has params[k]'s shape. momentum_buf (one per parameter,
 * zeros at first) may be NULL when momentum is 0. Adam's exp_avg and exp_avg_sq start at zeros,
 * step is a rank-0 f32 tensor counting the steps taken (0 at first). Not thread-safe on the same
 * tensors. */
TC_API tc_status tc_sgd_step(int n, tc_tensor *const *params, tc_tensor *const *grads, tc_tensor *const *momentum_buf,
                             const tc_sgd_options *opts);
TC_API tc_status tc_adam_step(int n, tc_tensor *const *params, tc_tensor *const *grads, tc_tensor *const *exp_avg,
                              tc_tensor *const *exp_avg_sq, tc_tensor *step, const tc_adam_options *opts);

/* ---------------------------------------------------------------- backends */
typedef struct tc_device {
  size_t struct_size;
  const char *name;
  int32_t type; /* tc_device_type */
  uint64_t memory_bytes;
} tc_device;

typedef struct tc_backend_info {
  size_t struct_size;
  const char *name;        /* "debug-eager", "inductor-cpu", ... */
  const char *version;
  const char *description;
  const char *path;        /* the shared object, or "(in-process)" */
  bool available;
  const char *reason;      /* why unavailable, or a note */
  int32_t score;
  int32_t n_devices;
  const tc_device *devices;
} tc_backend_info;

/* Fills up to max entries; returns the number of backends known (found on TC_PLUGIN_PATH, in
 * the install's plugin directory, or registered in-process). Strings are valid until the
 * next tc_backend_register / tc_backend_rescan. Thread-safe. */
TC_API int tc_backend_list(tc_backend_info *out, int max);
/* A plugin's entry point (tc_plugin.h declares the same type with its arguments). */
typedef struct tc_query_args tc_query_args;
typedef struct tc_error tc_error;
typedef tc_error *(*tc_plugin_query_fn)(tc_query_args *args);
/* Registers a backend from a query function in this process (same table as a plugin). */
TC_API tc_status tc_backend_register(tc_plugin_query_fn query);
/* Forgets everything found on disk and looks again (TC_PLUGIN_PATH is re-read). */
TC_API tc_status tc_backend_rescan(void);
/* Name of the backend "auto" resolves to (highest score among the available). */
TC_API const char *tc_backend_auto(void);
/* Makes backend `name`'s context now (with $TC_OPTIONS), as the first tc_to_device, compile or
 * tc_synchronize on it would: an application that opens its device at start-up overlaps the
 * backend's own start-up with its work (inductor-cuda loads NVRTC and cuBLASLt on a thread from
 * here; torch's analogue is torch.cuda.init()). Optional; "host" and "eager" do nothing. An
 * unknown or unavailable backend is an error naming it. */
TC_API tc_status tc_backend_open(const char *name);

/* One option a backend declares (its plugin's table): what tc_compile_options.options and
 * $TC_OPTIONS may set, checked against this before the backend sees it. */
typedef struct tc_option_info {
  size_t struct_size;
  const char *name;          /* "cpu.threads" */
  const char *type;          /* "bool", "int", "float", "string" or "enum" */
  const char *scope;         /* "context" (read when the backend's context is made) or "compile" */
  const char *default_value; /* NULL when unset by default */
  int64_t min, max;          /* int: the allowed range */
  const char *values;        /* enum: the allowed values ("64|128"); else a hint, or NULL */
  const char *meaning;       /* one line */
} tc_option_info;
/* Fills up to max entries with the options backend `name` declares; returns how many it
 * declares, or -1 with an error naming the known backends. Strings are valid until the next
 * tc_backend_register / tc_backend_rescan. Thread-safe. */
TC_API int tc_backend_options(const char *name, tc_option_info *out, int max);

/* ---------------------------------------------------------------- compile */
typedef enum tc_dynamic { TC_DYNAMIC_AUTO = 0, TC_DYNAMIC_OFF = 1, TC_DYNAMIC_ON = 2 } tc_dynamic;

typedef struct tc_compile_options {
  size_t struct_size;
  const char *backend;    /* name or "auto"; NULL means "auto" */
  bool fullgraph;         /* a graph break is an error naming the op */
  int32_t dynamic;        /* tc_dynamic */
  int32_t mode;           /* tc_mode: reaches the backend's compile */
  int32_t cache_size_limit; /* compiled entries before falling back to eager; 0 means 8 */
  const char *name;       /* for logs and explain; NULL: "fn" */
  const char *options;    /* "cpu.threads=2,vulkan.device=1": backend options, checked against each backend's
                             declared table (tc options BACKEND lists them); over $TC_OPTIONS */
  const char *input_names; /* "x,w1,b1": parameter names for guards and logs; NULL: by position */
  bool disable;            /* call the function eagerly, uncompiled (also $TC_COMPILE_DISABLE=1) */
  bool compile_async;      /* the first call starts compiling in a background thread and runs the
                              function eagerly; calls stay eager until the compile is done, then
                              run compiled (a first call in the time of one eager call) */
} tc_compile_options;

typedef struct tc_compiled tc_compiled;
/* A model: a plain C function of n tensors returning a tensor. Signatures with 0..16 tensor
 * parameters are supported; fn is called through libffi with its natural signature. */
typedef void (*tc_model_fn)(void);
#define TC_FN(f) ((tc_model_fn)(f))

/* Wraps fn. Nothing is traced until the first call. opts may be NULL (defaults). */
TC_API tc_compiled *tc_compile(tc_model_fn fn, int n_inputs, const tc_compile_options *opts);
/* Calls the compiled function: checks guards, compiles on a miss, runs. */
TC_API tc_tensor *tc_call(tc_compiled *c, tc_tensor *const *inputs);
TC_API void tc_compiled_free(tc_compiled *c);

typedef struct tc_compile_stats {
  size_t struct_size;
  int32_t n_entries;     /* compiled entries (graphs with their guards) */
  int32_t n_compiles;    /* compiles so far, including recompiles */
  int32_t n_graphs;      /* graphs in the newest entry (> 1 when there were graph breaks) */
  int32_t n_kernels;     /* kernels in the newest entry */
  int32_t n_graph_breaks;
  int32_t n_eager_fallbacks;
  double compile_seconds; /* total */
  double last_compile_seconds;
  int32_t n_async_eager_calls; /* compile_async: calls run eagerly while the compile ran */
  bool compiling;              /* compile_async: the background compile is still running */
  /* tc_assign inside the function, over all calls: values the plan wrote straight into the
   * caller's tensor, and values copied into it after the graph ran (graph-level backends, an
   * input the backend had to copy, a kernel reading the old values after the new ones). */
  int64_t n_updates_in_place, n_updates_copied;
} tc_compile_stats;
TC_API tc_status tc_compiled_stats(const tc_compiled *c, tc_compile_stats *out);
/* A human-readable report (graphs, breaks with reasons, ops, kernels, guards, compile times),
 * or JSON when json is true. Caller frees with free(). */
TC_API char *tc_compiled_explain(const tc_compiled *c, bool json);
/* The compiled graphs of every entry as Graphviz text (one digraph per graph). Caller frees
 * with free(). */
TC_API char *tc_compiled_dot(const tc_compiled *c);


/* ---------------------------------------------------------------- A/B comparison
 * One function, the same inputs, several backends: every backend's output is compared with a
 * reference backend's, and each backend is timed (docs/ab.md). */
typedef struct tc_ab_options {
  size_t struct_size;
  const char *reference; /* the backend outputs are compared with; NULL: "debug-eager" */
  const char *options;   /* backend options for every compile, as tc_compile_options.options */
  const char *name;      /* for messages and the report; NULL: "fn" */
  int32_t warmup;        /* untimed calls before the steady ones; 0: 3, negative: none */
  int32_t iters;         /* steady calls to time at most; 0: 20 */
  double budget_s;       /* stop timing a backend after this many seconds (one call at least); 0: 2 */
  double rtol, atol;     /* when > 0: the tolerance for every output, over the per-dtype default */
  bool bisect;           /* a backend whose output disagrees is run kernel by kernel (divergence) */
  bool kernel_sources;   /* each kernel of the plan compiled alone on each backend, for its source */
} tc_ab_options;

/* One kernel of the plan (the fused groups the scheduler made of the reference's graph). */
typedef struct tc_ab_kernel {
  size_t struct_size;
  const char *name;   /* the scheduler's name, "k3_reduce_max" */
  const char *prims;  /* the prims it fuses, in order, space-separated */
  const char *reads;  /* what it reads: "input 0", "k2", ... comma-separated */
  const char *output; /* its result: "64x256 f32" */
} tc_ab_kernel;

/* Where a backend's result first departs from the reference's: each kernel of the plan run
 * alone on both backends, fed the reference's values of its inputs. */
typedef struct tc_ab_divergence {
  size_t struct_size;
  int32_t kernel;          /* index in tc_ab_report.kernels; -1: every kernel agrees alone (see note) */
  const char *note;        /* what was found, one line */
  double max_abs_err, max_rel_err;
  int64_t element;         /* the worst element of the kernel's output (row-major index) */
  double ref_value, value; /* its value on the reference and on this backend */
  const char *ref_source;  /* that kernel compiled alone, each backend's generated source; */
  const char *source;      /*   NULL when the backend exposes none */
  int32_t n_inputs;
  tc_tensor *const *inputs; /* the kernel's inputs (host tensors, owned by the report) */
  const char *inputs_text;  /* one line per input: what it is, its shape, its first values */
} tc_ab_divergence;

typedef struct tc_ab_result {
  size_t struct_size;
  const char *backend;
  tc_status status;   /* TC_OK; otherwise this backend gave no result and error says why */
  const char *error;  /* NULL when status is TC_OK */
  /* The output against the reference's. An element passes when |out - ref| <= atol * max|ref|
   * + rtol * |ref|, and NaN and infinities must sit in the same places with the same signs. */
  bool pass;
  double rtol, atol;  /* the tolerance applied: the output dtype's default, or the options' */
  int64_t n_elements, n_failed; /* elements compared, elements outside the tolerance */
  double max_abs_err, max_rel_err;
  int64_t max_ulp;    /* f32/f64: the largest distance in units in the last place; else 0 */
  int64_t nan_mismatches, inf_mismatches;
  int64_t n_nonfinite; /* elements NaN or infinite in both outputs, alike (--inputs special) */
  /* Times in seconds. cold: this process's first compile (cold_cache_hit: the plugin's disk
   * cache still served it); warm: a second, separate compile of the same function. */
  double cold_compile_s, warm_compile_s;
  bool cold_cache_hit, warm_cache_hit;
  double first_call_s;  /* the first call: capture, compile and run, device-synchronized */
  double median_s, min_s, max_s; /* steady calls, each device-synchronized */
  int32_t n_calls;      /* steady calls timed */
  int32_t n_graphs, n_kernels;
  const char *source;   /* its generated source, every graph; NULL when the backend exposes none */
  const tc_ab_divergence *divergence; /* with bisect, when pass is false; else NULL */
  /* With kernel_sources: per kernel of tc_ab_report.kernels, its generated source compiled alone
   * on this backend (NULL where the backend exposes none); else n_kernel_sources is 0. */
  int32_t n_kernel_sources;
  const char *const *kernel_sources;
} tc_ab_result;

typedef struct tc_ab_report {
  size_t struct_size;
  const char *name, *reference;
  const char *output;  /* the reference output's shape and dtype, "64x256 f32" */
  int32_t n_results;
  const tc_ab_result *results; /* one per backend, in the order given */
  int32_t n_kernels;
  const tc_ab_kernel *kernels; /* the plan of the reference's graph; 0 with graph breaks */
} tc_ab_report;

/* Compiles fn (n_inputs tensors, as tc_compile) on each of the n backends and on the reference,
 * calls it on copies of inputs moved to each backend's memory, compares the outputs and times
 * the calls. A backend that is unavailable or fails gets a result with its status and error;
 * an unknown backend name, bad options or a failing reference fail the whole call (the error
 * says which). *report: free with tc_ab_report_free. Not thread-safe with other calls that
 * use the same backends (timings would mix). */
TC_API tc_status tc_ab_compare(tc_model_fn fn, int n_inputs, tc_tensor *const *inputs, const char *const *backends,
                               int n, const tc_ab_options *opts, tc_ab_report **report /* out */);
TC_API void tc_ab_report_free(tc_ab_report *report); /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif /* TC_TC_H */
