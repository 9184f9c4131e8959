/* codegen_math.c — GLSL helper functions the shaders call: what GLSL lacks (erf, floor
 * division/modulo, Python-style remainder, NaN-propagating max/min, Philox4x32-10) and
 * accurate replacements for built-ins whose Vulkan precision is too loose (exp, log, sin, cos,
 * tanh, pow: drivers may use fast approximations, e.g. sin with 2^-11 absolute error).
 *
 * Accuracy (f32, measured on the host by evaluating the same formulas in float against double
 * libm over every float in the range):
 *   tc_erf_f32: max error 2.5 ulp over every float (relative 1.6e-8 + rounding for normal
 *     results): |x| < 0.921875 is x * P(x^2), P of degree 5 minimax in relative error;
 *     above, 1 - exp(L(z)) with L of degree 9 fitted to log(erfc(z)) on [0.921875, 4]
 *     (abs error 8e-9). No division and no branch: erf runs in GELU epilogues over every
 *     element, where the former erfcc form (a division, two exps' worth of work and a branch
 *     per warp) made ln_gelu compute-bound on the H200. Odd symmetry holds exactly.
 *   tc_exp_f32: Cody-Waite reduction by ln2 (two-part) and a degree-7 polynomial: ~2 ulp;
 *     identical over all 2^32 inputs to the former ldexp form.
 *   tc_log_f32: m * 2^e with m in [0.707, 1.414), 2*atanh(s) series in s = (m-1)/(m+1): ~2 ulp.
 *   tc_sin/cos_f32: reduction by pi/2 in three parts (accurate for |x| < 1e5), cephes minimax
 *     polynomials on [-pi/4, pi/4]: ~2 ulp there.
 * The f64 versions use the same reductions with longer series (~1e-15 relative). */
#include <string.h>

#include "vk_internal.h"

/* The library itself is GLSL under plugins/vulkan/glsl/, embedded at build time (vk_glsl_*). */

static bool used(const char *body, const char *name) { return body && strstr(body, name) != NULL; }

void vk_gen_math_helpers(vk_gen *g, tck_str *t, const char *body) {
  tck_str_puts(t, vk_glsl_sizes);
  if (used(body, "tc_max_") || used(body, "tc_min_")) {
    tck_str_puts(t, vk_glsl_minmax_f32);
    if (g->uses_i64) tck_str_puts(t, vk_glsl_minmax_64);
  }
  if (used(body, "tc_rem_") || used(body, "tc_fmod_")) {
    tck_str_puts(t, vk_glsl_rem_f32);
    if (g->uses_i64) tck_str_puts(t, vk_glsl_rem_64);
  }
  if (used(body, "tc_ftoi_")) {
    tck_str_puts(t, vk_glsl_ftoi_f32);
    if (g->uses_i64) tck_str_puts(t, vk_glsl_ftoi_64);
  }
  bool f32_pow = used(body, "tc_pow_f32"), f64_pow = used(body, "tc_pow_f64");
  bool f32_tanh = used(body, "tc_tanh_f32"), f64_tanh = used(body, "tc_tanh_f64");
  bool f32_erf = used(body, "tc_erf_f32"), f64_erf = used(body, "tc_erf_f64");
  if (used(body, "tc_exp_f32") || f32_pow || f32_tanh || f32_erf) tck_str_puts(t, vk_glsl_exp_f32);
  if (used(body, "tc_log_f32") || f32_pow) tck_str_puts(t, vk_glsl_log_f32);
  if (used(body, "tc_div_f32") || used(body, "tc_recip_f32")) tck_str_puts(t, vk_glsl_div_f32);
  /* f32 emulated in f64 (vulkan.f32_subnormals): its conversions and correctly rounded ops */
  bool emulated = g->f32_emulate && (used(body, "tc_f32_") || g->uses_atomic);
  if (used(body, "tc_div_f64") || emulated) tck_str_puts(t, vk_glsl_div_f64);
  if (used(body, "tc_round_f64") || emulated) tck_str_puts(t, vk_glsl_round_f64); /* f32_bits.glsl uses it */
  if (emulated) {
    tck_str_puts(t, vk_glsl_f32_bits);
    tck_str_puts(t, vk_glsl_f32_ops);
  }
  if (used(body, "tc_recip_f32")) tck_str_puts(t, vk_glsl_recip_f32);
  if (used(body, "tc_sin_f32") || used(body, "tc_cos_f32")) tck_str_puts(t, vk_glsl_trig_f32);
  if (f32_tanh) tck_str_puts(t, vk_glsl_tanh_f32);
  if (f32_erf) tck_str_puts(t, vk_glsl_erf_f32);
  if (f32_pow) tck_str_puts(t, vk_glsl_pow_f32);
  const bool f32_erf_emulated = emulated && used(body, "tc_f32_erf");
  if (used(body, "tc_exp_f64") || f64_pow || f64_tanh || f64_erf || f32_erf_emulated) tck_str_puts(t, vk_glsl_exp_f64);
  if (used(body, "tc_log_f64") || f64_pow) tck_str_puts(t, vk_glsl_log_f64);
  if (used(body, "tc_sin_f64") || used(body, "tc_cos_f64")) tck_str_puts(t, vk_glsl_trig_f64);
  if (f64_tanh) tck_str_puts(t, vk_glsl_tanh_f64);
  if (f64_erf) tck_str_puts(t, vk_glsl_erf_f64);
  if (f32_erf_emulated) tck_str_puts(t, vk_glsl_erf_f32_emulated);
  if (f64_pow) tck_str_puts(t, vk_glsl_pow_f64);
  if (used(body, "tc_philox_u01")) tck_str_puts(t, vk_glsl_philox);
  tck_str_puts(t, "\n");
}

/* A library template with every "BUF" replaced by the buffer's identifier. */
static void put_template(tck_str *t, const char *tmpl, const char *buf) {
  for (const char *p = tmpl, *hit; *p; p = hit + 3) {
    hit = strstr(p, "BUF");
    if (!hit) {
      tck_str_puts(t, p);
      return;
    }
    tck_str_putn(t, p, (size_t)(hit - p));
    tck_str_puts(t, buf);
  }
}

/* The atomic float add helpers, one per f32/f64 buffer a STORE_ADD targets. */
void vk_gen_atomic_helpers(vk_gen *g, tck_str *t) {
  const tc_kernel_desc *k = g->k;
  for (int32_t b = 0; b < k->n_buffers; b++) {
    int32_t bd = tck_kernel_buffer(k, b)->dtype;
    if (bd != TC_F32 && bd != TC_F64) continue;
    bool any = false;
    for (int32_t i = 0; i < k->n_ops && !any; i++) any = tck_kernel_op(k, i)->kind == TC_KOP_STORE_ADD && tck_kernel_op(k, i)->buffer == b;
    if (!any) continue;
    char id[64];
    vk_buffer_ident(k, b, id, sizeof id);
    const char *tmpl = bd == TC_F64         ? vk_glsl_atomic_add_f64
                       : g->f32_emulate ? vk_glsl_atomic_add_f32_emulated
                                        : vk_glsl_atomic_add_f32;
    put_template(t, tmpl, id);
  }
}
