/* ab_bisect.c — which kernel a backend first gets wrong. The plan's kernels run in order, each
 * alone (as a graph of its own) on the reference backend and on the other, both fed the
 * reference's values of its inputs, so an error made early is not carried into later kernels:
 * the first kernel whose two outputs differ beyond the tolerance is where the backends diverge. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"

void ab_divergence_free(tc_ab_divergence *d) {
  if (!d) return;
  for (int32_t i = 0; i < d->n_inputs; i++)
    tc_release(d->inputs[i]);
  free((void *)d->inputs);
  free((char *)d->note);
  free((char *)d->ref_source);
  free((char *)d->source);
  free((char *)d->inputs_text);
  free(d);
}

/* Kernel k's sub graph compiled and run on the compiled function c's backend and options. */
static tc_status run_kernel(const tc_compiled *c, const tc_graph *sub, const int64_t *syms, tc_tensor *const *ins,
                            tc_tensor **out, char **source) {
  tc_lowered *l = NULL;
  *out = NULL;
  tc_status s = ab_kernel_lower(c, sub, &l);
  if (s != TC_OK) return s;
  s = lowered_run(l, syms, ins, out);
  if (s == TC_OK && source) {
    const char *src = lowered_source(l);
    *source = src ? strdup(src) : NULL;
  }
  lowered_free(l);
  if (s != TC_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    return core_error(s, "running kernel %s alone on %s: %s", sub->name, c->backend->name, msg);
  }
  return TC_OK;
}

/* One line per input of the diverging kernel: what it is, its shape and its first values. */
static char *inputs_text(const ab_plan *p, const int32_t *in_values, int32_t n_in, tc_tensor *const *host) {
  tck_str b = {0};
  for (int32_t i = 0; i < n_in; i++) {
    char name[96], shape[128];
    ab_plan_value_name(p, in_values[i], name, sizeof name);
    tck_str_printf(&b, "in%d = %s: %s:", (int)i, name, ab_tensor_str(host[i], shape, sizeof shape));
    int64_t n = tc_numel(host[i]), show = n < 8 ? n : 8;
    tc_scope *scope = tc_scope_open();
    int64_t all = -1;
    tc_tensor *first = tc_to_dtype(tc_slice(tc_reshape(host[i], 1, &all), 0, 0, show, 1), TC_F64);
    double v[8];
    if (first && tc_to_host(first, v, (size_t)show * sizeof *v) == TC_OK)
      for (int64_t k = 0; k < show; k++)
        tck_str_printf(&b, " %.7g", v[k]);
    tc_scope_close(scope);
    tck_str_printf(&b, "%s\n", show < n ? " ..." : "");
  }
  return tck_str_take(&b);
}

static tc_status diverged(const ab_plan *p, int32_t k, const ab_diff *d, const int32_t *in_values, int32_t n_in,
                          tc_tensor *const *ins, char *ref_src, char *src, tc_ab_divergence *out) {
  out->ref_source = ref_src;
  out->source = src;
  tc_tensor **host = calloc((size_t)n_in + 1, sizeof *host);
  if (!host) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  out->inputs = host;
  out->n_inputs = n_in;
  for (int32_t i = 0; i < n_in; i++)
    if (!(host[i] = tc_to_device(ins[i], "host"))) return tc_last_status();
  out->kernel = k;
  out->max_abs_err = d->max_abs;
  out->max_rel_err = d->max_rel;
  out->element = d->worst;
  out->ref_value = d->worst_ref;
  out->value = d->worst_out;
  out->inputs_text = inputs_text(p, in_values, n_in, host);
  char note[512];
  snprintf(note, sizeof note,
           "kernel %d of %d, %s, diverges: %lld of %lld elements outside the tolerance, %lld NaN and %lld Inf "
           "mismatches; worst element %lld: %.9g (reference) vs %.9g",
           (int)k + 1, (int)p->s->n_kernels, p->s->kernels[k].name, (long long)d->n_failed, (long long)d->n,
           (long long)d->nan_mismatches, (long long)d->inf_mismatches, (long long)d->worst, d->worst_ref, d->worst_out);
  out->note = strdup(note);
  return out->note && out->inputs_text ? TC_OK : core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
}

tc_status ab_bisect(const ab_plan *p, const tc_compiled *ref, const tc_compiled *other, tc_tensor *const *inputs,
                    const tc_ab_options *o, tc_ab_divergence **out) {
  const tc_graph *g = &p->v->graph;
  const int32_t n_values = g->n_inputs + g->n_nodes;
  int64_t syms[64] = {0};
  if (g->n_syms > 64) return core_error(TC_ERR_UNSUPPORTED, "bisect: the graph has more than 64 symbols");
  if (g->n_syms > 0) {
    /* The same binding of symbols to sizes the compiled call made. */
    cap_names names = compiled_names(p->c);
    char why[256] = "";
    if (!guards_check(&p->v->guards, &g->sx, inputs, p->c->n_params, syms, &names, why, sizeof why))
      return core_error(TC_ERR_GUARD, "bisect: the inputs do not match the compiled graph: %s", why);
  }
  tc_ab_divergence *d = calloc(1, sizeof *d);
  tc_tensor **vals = calloc((size_t)n_values + 1, sizeof *vals);
  if (!d || !vals) {
    free(d);
    free(vals);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  }
  d->struct_size = sizeof *d;
  d->kernel = -1;
  for (int32_t i = 0; i < g->n_inputs; i++)
    vals[i] = tc_retain(i < p->c->n_params ? inputs[i] : p->v->held[i]);
  tc_status s = TC_OK;
  for (int32_t k = 0; k < p->s->n_kernels && s == TC_OK && d->kernel < 0; k++) {
    tc_graph sub;
    int32_t *in_values = NULL, n_in = 0;
    s = ab_plan_kernel_graph(p, k, &sub, &in_values, &n_in);
    if (s != TC_OK) break;
    tc_tensor **ins = calloc((size_t)n_in + 1, sizeof *ins);
    if (!ins) s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
    for (int32_t i = 0; s == TC_OK && i < n_in; i++)
      if (!(ins[i] = vals[in_values[i]]))
        s = core_error(TC_ERR_INTERNAL, "bisect: kernel %s reads v%d, which no kernel before it computes", sub.name,
                       (int)in_values[i]);
    tc_tensor *yr = NULL, *yo = NULL;
    char *ref_src = NULL, *src = NULL;
    if (s == TC_OK) s = run_kernel(ref, &sub, syms, ins, &yr, &ref_src);
    if (s == TC_OK) s = run_kernel(other, &sub, syms, ins, &yo, &src);
    ab_diff diff;
    if (s == TC_OK) {
      double rtol, atol;
      ab_tolerance(tc_dtype_of(yr), o, &rtol, &atol);
      s = ab_diff_tensors(yr, yo, rtol, atol, &diff);
    }
    if (s == TC_OK && !diff.pass) {
      s = diverged(p, k, &diff, in_values, n_in, ins, ref_src, src, d);
      ref_src = src = NULL; /* d owns them now */
    }
    if (s == TC_OK) vals[p->s->kernels[k].root] = tc_retain(yr);
    free(ref_src);
    free(src);
    tc_release(yr);
    tc_release(yo);
    free(ins);
    free(in_values);
    graph_free(&sub);
  }
  for (int32_t v = 0; v < n_values; v++)
    tc_release(vals[v]);
  free(vals);
  if (s == TC_OK && d->kernel < 0)
    d->note = strdup("every kernel agrees with the reference when fed the reference's inputs: the difference comes "
                     "from running them together (buffers, reuse, ordering), not from one kernel's code");
  if (s != TC_OK) {
    ab_divergence_free(d);
    return s;
  }
  *out = d;
  return TC_OK;
}
