/* guards.c — what a compiled graph assumed about its inputs, checked on every call: dtypes,
 * ranks, static sizes, the symbols' bindings (the first input dim carrying a symbol binds it;
 * later ones must agree; a symbol is never 0 or 1, which were specialized at trace time) and
 * the size relations the ops decided on while tracing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

void guards_free(cap_guards *g) {
  if (!g) return;
  free(g->inputs);
  free(g->rel);
  memset(g, 0, sizeof *g);
}

void guards_input_name(const cap_input_guard *ig, const cap_names *names, char *buf, size_t cap) {
  switch (ig->kind) {
  case CAP_SRC_CALL:
    if (names && ig->index < names->n && names->names && names->names[ig->index] && names->names[ig->index][0])
      snprintf(buf, cap, "input %d (%s)", (int)ig->index, names->names[ig->index]);
    else
      snprintf(buf, cap, "input %d", (int)ig->index);
    break;
  case CAP_SRC_CAPTURED: snprintf(buf, cap, "captured tensor %d", (int)ig->index); break;
  default: snprintf(buf, cap, "carried value %d", (int)ig->index); break;
  }
}

#define WHY(...) (why ? (void)snprintf(why, why_cap, __VA_ARGS__) : (void)0)
/* The input's name, written only when a guard fails (every call checks every input: naming
 * each one up front was a third of tiny_mlp_b1's host time on inductor-cpu). */
#define NAME_IT() (why ? guards_input_name(ig, names, nm, sizeof nm) : (void)0)

bool guards_check(const cap_guards *g, const tc_sxtab *sx, tc_tensor *const *inputs, int32_t n_check,
                  int64_t *syms, const cap_names *names, char *why, size_t why_cap) {
  char nm[96], nm2[96];
  /* Where each symbol was bound: input index * TC_MAX_RANK + dim. */
  int32_t bound_stack[32];
  int32_t *bound = g->n_syms <= 32 ? bound_stack : malloc((size_t)g->n_syms * sizeof *bound);
  if (!bound) {
    WHY("out of memory checking guards");
    return false;
  }
  for (int32_t k = 0; k < g->n_syms; k++) bound[k] = -1;
  bool ok = false;
  if (n_check > g->n_inputs) {
    WHY("%d inputs, got %d", (int)g->n_inputs, (int)n_check);
    goto out;
  }
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const cap_input_guard *ig = &g->inputs[i];
    /* Held inputs (captured tensors) never change; only symbols they carry need binding. */
    const bool check = i < n_check;
    const tc_tensor *x = check ? inputs[i] : NULL;
    if (check) {
      if (!x) {
        NAME_IT();
        WHY("%s is NULL", nm);
        goto out;
      }
      if (x->dtype != ig->dtype) {
        NAME_IT();
        WHY("%s dtype == %s, got %s", nm, tc_dtype_name(ig->dtype), tc_dtype_name(x->dtype));
        goto out;
      }
      if (x->rank != ig->rank) {
        NAME_IT();
        WHY("%s rank == %d, got %d", nm, (int)ig->rank, (int)x->rank);
        goto out;
      }
      if (ig->kind == CAP_SRC_CALL && tape_needs_grad(x) != ig->requires_grad) {
        NAME_IT();
        WHY("%s requires_grad == %s", nm, ig->requires_grad ? "true" : "false");
        goto out;
      }
    }
    for (int d = 0; d < ig->rank; d++) {
      const int64_t v = x ? x->sizes[d] : ig->size[d];
      const int32_t k = ig->sym[d];
      if (k < 0) {
        if (v != ig->size[d]) {
          NAME_IT();
          WHY("%s dim %d == %lld, got %lld", nm, d, (long long)ig->size[d], (long long)v);
          goto out;
        }
        continue;
      }
      if (bound[k] < 0) {
        if (v < 2) {
          NAME_IT();
          WHY("%s dim %d (s%d) >= 2, got %lld", nm, d, (int)k, (long long)v);
          goto out;
        }
        bound[k] = i * TC_MAX_RANK + d;
        syms[k] = v;
      } else if (syms[k] != v) {
        const cap_input_guard *first = &g->inputs[bound[k] / TC_MAX_RANK];
        NAME_IT();
        if (why) guards_input_name(first, names, nm2, sizeof nm2);
        WHY("%s dim %d == %s dim %d (s%d = %lld), got %lld", nm, d, nm2, (int)(bound[k] % TC_MAX_RANK), (int)k,
            (long long)syms[k], (long long)v);
        goto out;
      }
    }
  }
  for (int32_t k = 0; k < g->n_syms; k++)
    if (bound[k] < 0) syms[k] = 0; /* unbound symbols cannot appear in a well-formed trace */
  if (g->n_rel) {
    int64_t vals_stack[256];
    int64_t *vals = sx->n <= 256 ? vals_stack : malloc((size_t)sx->n * sizeof *vals);
    if (!vals) {
      WHY("out of memory checking guards");
      goto out;
    }
    sxtab_eval(sx, syms, vals);
    for (int32_t r = 0; r < g->n_rel; r++) {
      const cap_rel_guard *rg = &g->rel[r];
      if ((vals[rg->a] == vals[rg->b]) != rg->equal) {
        char ea[128], eb[128];
        WHY("%s %s %s (%lld vs %lld)", sxtab_str(sx, rg->a, ea, sizeof ea), rg->equal ? "==" : "!=",
            sxtab_str(sx, rg->b, eb, sizeof eb), (long long)vals[rg->a], (long long)vals[rg->b]);
        if (vals != vals_stack) free(vals);
        goto out;
      }
    }
    if (vals != vals_stack) free(vals);
  }
  ok = true;
out:
  if (bound != bound_stack) free(bound);
  return ok;
}

/* ---------------------------------------------------------------- text */
char *guards_to_string(const cap_guards *g, const tc_sxtab *sx, const tc_backend *be, const cap_names *names,
                       const char *indent) {
  tck_str b = {0};
  if (be) tck_str_printf(&b, "%sbackend == %s\n", indent, be->name);
  int32_t n_call = 0;
  for (int32_t i = 0; i < g->n_inputs; i++) n_call += g->inputs[i].kind == CAP_SRC_CALL;
  tck_str_printf(&b, "%s%d graph inputs (%d from the call)\n", indent, (int)g->n_inputs, (int)n_call);
  bool *seen = calloc((size_t)(g->n_syms ? g->n_syms : 1), sizeof *seen);
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const cap_input_guard *ig = &g->inputs[i];
    char nm[96];
    guards_input_name(ig, names, nm, sizeof nm);
    tck_str_printf(&b, "%s%s: %s, rank %d, sizes [", indent, nm, tc_dtype_name(ig->dtype), (int)ig->rank);
    for (int d = 0; d < ig->rank; d++) {
      if (ig->sym[d] < 0)
        tck_str_printf(&b, "%s%lld", d ? ", " : "", (long long)ig->size[d]);
      else
        tck_str_printf(&b, "%ss%d", d ? ", " : "", (int)ig->sym[d]);
    }
    tck_str_printf(&b, "]");
    if (ig->kind == CAP_SRC_CAPTURED) tck_str_printf(&b, " (held by reference)");
    if (ig->requires_grad) tck_str_printf(&b, ", requires_grad");
    tck_str_printf(&b, "\n");
    for (int d = 0; d < ig->rank; d++) {
      int32_t k = ig->sym[d];
      if (k < 0) continue;
      /* Later dims carrying k are in the sizes line: the binding is what needs saying. */
      if (seen && !seen[k]) {
        seen[k] = true;
        tck_str_printf(&b, "%ss%d := %s dim %d (>= 2; traced as %lld)\n", indent, (int)k, nm, d, (long long)ig->size[d]);
      }
    }
  }
  free(seen);
  for (int32_t r = 0; r < g->n_rel; r++) {
    char ea[128], eb[128];
    tck_str_printf(&b, "%s%s %s %s\n", indent, sxtab_str(sx, g->rel[r].a, ea, sizeof ea), g->rel[r].equal ? "==" : "!=",
         sxtab_str(sx, g->rel[r].b, eb, sizeof eb));
  }
  return tck_str_take(&b);
}
