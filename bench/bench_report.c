/* bench_report.c — `tc bench` output: an aligned table, or JSON (--json). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_driver.h"

static const char *fmt_time(double s, char *buf, size_t cap) {
  if (!(s > 0) || !isfinite(s)) snprintf(buf, cap, "-");
  else if (s >= 1.0) snprintf(buf, cap, "%.2f s", s);
  else if (s >= 1e-3) snprintf(buf, cap, "%.3g ms", s * 1e3);
  else snprintf(buf, cap, "%.3g us", s * 1e6);
  return buf;
}

static const char *fmt_first_call(const bench_first_call *f, double s, char *buf, size_t cap) {
  if (f->timed_out) return snprintf(buf, cap, ">%.0f s", f->process_s), buf;
  if (!f->ok) return snprintf(buf, cap, "%s", f->error[0] ? "failed" : "-"), buf;
  return fmt_time(s, buf, cap);
}

static void report_table_row(const bench_config *cfg, const bench_result *r) {
  char fig[32], ceil[48], ratio[16], iqr[24], med[32], eager[32], cold[32], warm[32];
  if (r->error[0] && !r->cold.ok) {
    printf("%-12s %-5s error: %s\n", r->name, r->unit, r->error);
    return;
  }
  if (!r->model) { /* dyn_attn: totals */
    printf("%-12s %-5s 40 calls: cold cache %s total, %d graphs compiled; warm cache %s total%s%s\n", r->name, "s",
           fmt_time(r->cold.total_s, cold, sizeof cold), r->cold.compiles,
           r->warm.ok ? fmt_time(r->warm.total_s, warm, sizeof warm) : "-",
           r->error[0] ? "; error: " : "", r->error);
    return;
  }
  snprintf(fig, sizeof fig, "%.4g", r->figure);
  if (r->ceiling.kind) snprintf(ceil, sizeof ceil, "%s %.4g", r->ceiling.kind, r->ceiling.value);
  else snprintf(ceil, sizeof ceil, "-");
  if (r->ratio > 0) {
    snprintf(ratio, sizeof ratio, "%.2f", r->ratio);
    snprintf(iqr, sizeof iqr, "%.2f-%.2f", r->ratio_q1, r->ratio_q3);
  } else {
    snprintf(ratio, sizeof ratio, "-");
    snprintf(iqr, sizeof iqr, "-");
  }
  printf("%-12s %-5s %10s %-22s %6s %-10s %10s %10s %10s %10s %4d %4d %4d %4d\n", r->name, r->unit,
         r->error[0] ? "-" : fig, ceil, ratio, iqr, fmt_time(r->median_s, med, sizeof med),
         fmt_first_call(&r->eager, r->eager.median_s, eager, sizeof eager),
         fmt_first_call(&r->cold, r->cold.seconds, cold, sizeof cold),
         fmt_first_call(&r->warm, r->warm.seconds, warm, sizeof warm), r->kernels, r->n_sets, r->rounds, r->group);
  if (r->peak_tflops > 0)
    printf("%-12s peak fp32 FMA (%s, %d thread%s, interleaved) %.4g TF/s: %s %.2f of it (iqr %.2f-%.2f)\n", "",
           r->peak_isa, cfg->threads, cfg->threads == 1 ? "" : "s", r->peak_tflops,
           strcmp(r->unit, "TF/s") ? "the GEMMs at that rate take" : "the figure is", r->peak_ratio, r->peak_q1, r->peak_q3);
  if (r->error[0]) printf("%-12s error: %s\n", "", r->error);
  if (!r->eager.ok && !r->eager.timed_out && r->eager.error[0]) printf("%-12s eager: %s\n", "", r->eager.error);
  if (!r->cold.ok && r->cold.error[0]) printf("%-12s cold start: %s\n", "", r->cold.error);
  else if (!r->warm.ok && r->warm.error[0]) printf("%-12s warm start: %s\n", "", r->warm.error);
}

static void report_table(const bench_config *cfg, const bench_result *rs, int n) {
  const char *eager_backend = getenv("TC_EAGER_BACKEND");
  printf("tc bench: backend %s, size %s, %d threads, mode %s, dynamic %s; eager on %s; ceilings interleaved with the timed "
         "calls (BLAS: %s)\n",
         cfg->backend, bench_size_name(cfg->size), cfg->threads, bench_mode_name(cfg->mode), bench_dynamic_name(cfg->dynamic),
         eager_backend && *eager_backend ? eager_backend : "debug-eager", bench_blas_name());
  printf("%-12s %-5s %10s %-22s %6s %-10s %10s %10s %10s %10s %4s %4s %4s %4s\n", "model", "unit", "figure", "ceiling",
         "ratio", "ratio iqr", "median", "eager", "cold 1st", "warm 1st", "krn", "sets", "rnds", "grp");
  for (int i = 0; i < n; i++) report_table_row(cfg, &rs[i]);
  printf("figure: GB/s and TF/s from the median call; ms and us are the median call itself. Timed calls run in\n"
         "interleaved rounds with the ceiling workload (ceiling, model, ceiling, model, ..., ceiling); figure and\n"
         "ceiling are each side's median over that same window. ratio: the median over rounds of ceiling time /\n"
         "model time, the ceiling time being the mean of the two ceiling samples around the model sample (pairing\n"
         "samples milliseconds apart cancels the machine's drift; the median drops rounds a burst hit on one side),\n"
         "so it can differ a little from figure/ceiling; ratio iqr: quartiles of the per-round ratios. For time\n"
         "figures the ceiling is their GEMMs alone (sgemm: OpenBLAS, the bare-BLAS figure). peak: the cores' fp32\n"
         "FMA rate (register-only FMA loops on the bench's threads) sampled after each ceiling sample, and the\n"
         "median over rounds of the GEMMs' time at that rate / the model's time (for mlp: the figure / the peak).\n"
         "inductor-cpu's timed calls run its -O3 build (cpu.tier=full, unless TC_OPTIONS names a tier), not the\n"
         "fast build a cold start runs while the -O3 one compiles. rnds: rounds. grp: calls per sample: 1 on the\n"
         "host (each call timed alone); on a device, a group of back-to-back calls (about %.0f ms of work, at\n"
         "most %d) with one wait at the end, divided by its calls, the device ceilings likewise. eager: median\n"
         "eager call.\n"
         "cold/warm 1st: first call (capture + compile + run) in a new process with an empty / warm cache\n"
         "(warm: the median of %d processes).\n",
         cfg->timing.group_s * 1e3, BENCH_MAX_GROUP, BENCH_WARM_STARTS);
}

/* ---------------------------------------------------------------- JSON */
static void json_str(const char *s) {
  putchar('"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c == '\n') printf("\\n");
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void json_num(double v) {
  if (isfinite(v)) printf("%.9g", v);
  else printf("null");
}

static void json_first_call(const char *key, const bench_first_call *f) {
  printf(", ");
  json_str(key);
  printf(": {\"ok\": %s, \"first_call_s\": ", f->ok ? "true" : "false");
  json_num(f->seconds);
  printf(", \"process_s\": ");
  json_num(f->process_s);
  printf(", \"compile_s\": ");
  json_num(f->compile_s);
  printf(", \"total_s\": ");
  json_num(f->total_s);
  printf(", \"median_s\": ");
  json_num(f->median_s);
  printf(", \"calls\": %d, \"timed_out\": %s", f->calls, f->timed_out ? "true" : "false");
  printf(", \"kernels\": %d, \"graphs\": %d, \"compiles\": %d, \"entries\": %d, \"error\": ", f->kernels, f->graphs,
         f->compiles, f->entries);
  json_str(f->error);
  printf("}");
}

static void report_json_row(const bench_result *r) {
  printf("    {\"name\": ");
  json_str(r->name);
  printf(", \"unit\": ");
  json_str(r->unit);
  printf(", \"error\": ");
  json_str(r->error);
  printf(", \"figure\": ");
  json_num(r->figure);
  printf(", \"median_s\": ");
  json_num(r->median_s);
  printf(", \"timed_calls\": %d, \"input_sets\": %d, \"ratio\": ", r->n_timed, r->n_sets);
  json_num(r->ratio);
  printf(", \"ratio_q1\": ");
  json_num(r->ratio_q1);
  printf(", \"ratio_q3\": ");
  json_num(r->ratio_q3);
  printf(", \"ratio_of_medians\": ");
  json_num(r->ratio_of_medians);
  printf(", \"rounds\": %d, \"group_calls\": %d", r->rounds, r->group);
  printf(", \"peak\": {\"kind\": ");
  if (r->peak_tflops > 0) json_str(r->peak_isa);
  else printf("null");
  printf(", \"tflops\": ");
  json_num(r->peak_tflops > 0 ? r->peak_tflops : NAN);
  printf(", \"ratio\": ");
  json_num(r->peak_tflops > 0 ? r->peak_ratio : NAN);
  printf(", \"ratio_q1\": ");
  json_num(r->peak_tflops > 0 ? r->peak_q1 : NAN);
  printf(", \"ratio_q3\": ");
  json_num(r->peak_tflops > 0 ? r->peak_q3 : NAN);
  printf("}");
  printf(", \"ceiling\": {\"kind\": ");
  if (r->ceiling.kind) json_str(r->ceiling.kind);
  else printf("null");
  printf(", \"value\": ");
  json_num(r->ceiling.value);
  printf(", \"seconds\": ");
  json_num(r->ceiling.seconds);
  printf(", \"note\": ");
  json_str(r->ceiling.note);
  printf("}");
  json_first_call("eager", &r->eager);
  printf(", \"first_call_s\": ");
  json_num(r->first_call_s);
  printf(", \"kernels\": %d, \"graphs\": %d, \"checksum\": {\"sum\": ", r->kernels, r->graphs);
  json_num(r->sum);
  printf(", \"abs_sum\": ");
  json_num(r->abs_sum);
  printf("}");
  json_first_call("cold", &r->cold);
  json_first_call("warm", &r->warm);
  printf(", \"warm_starts_s\": [");
  for (int i = 0; i < r->n_warm; i++) {
    if (i) printf(", ");
    json_num(r->warm_s[i]);
  }
  printf("]}");
}

static void report_json(const bench_config *cfg, const bench_result *rs, int n) {
  const char *eager_backend = getenv("TC_EAGER_BACKEND");
  printf("{\n  \"backend\": ");
  json_str(cfg->backend);
  printf(",\n  \"size\": ");
  json_str(bench_size_name(cfg->size));
  printf(",\n  \"threads\": %d,\n  \"dynamic\": \"%s\",\n  \"mode\": \"%s\",\n  \"eager_backend\": ", cfg->threads,
         bench_dynamic_name(cfg->dynamic), bench_mode_name(cfg->mode));
  json_str(eager_backend && *eager_backend ? eager_backend : "debug-eager");
  printf(",\n  \"blas\": ");
  json_str(bench_blas_name());
  printf(",\n  \"timing\": {\"ratio\": ");
  json_str("median over interleaved rounds (ceiling, model, ceiling, ...) of ceiling seconds (mean of the two "
           "samples around the model sample) / model seconds; figure and ceiling.value: each side's median over the "
           "same window");
  printf(", \"device_group_s\": ");
  json_num(cfg->timing.group_s);
  printf(", \"device_max_group\": %d, \"iters\": %d, \"budget_s\": ", BENCH_MAX_GROUP, cfg->timing.iters);
  json_num(cfg->timing.budget_s);
  printf("}");
  printf(",\n  \"models\": [\n");
  for (int i = 0; i < n; i++) {
    report_json_row(&rs[i]);
    printf(i + 1 < n ? ",\n" : "\n");
  }
  printf("  ]\n}\n");
}

void bench_report(const bench_config *cfg, const bench_result *rs, int n) {
  if (cfg->json) report_json(cfg, rs, n);
  else report_table(cfg, rs, n);
  fflush(stdout);
}
