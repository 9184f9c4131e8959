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

static void report_table_row(const bench_result *r) {
  char fig[32], ceil[48], ratio[16], med[32], eager[32], cold[32], warm[32];
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
  if (r->ratio > 0) snprintf(ratio, sizeof ratio, "%.2f", r->ratio);
  else snprintf(ratio, sizeof ratio, "-");
  printf("%-12s %-5s %10s %-22s %6s %10s %10s %10s %10s %4d %4d\n", r->name, r->unit, r->error[0] ? "-" : fig, ceil,
         ratio, fmt_time(r->median_s, med, sizeof med), fmt_first_call(&r->eager, r->eager.median_s, eager, sizeof eager),
         fmt_first_call(&r->cold, r->cold.seconds, cold, sizeof cold),
         fmt_first_call(&r->warm, r->warm.seconds, warm, sizeof warm), r->kernels, r->n_sets);
  if (r->error[0]) printf("%-12s error: %s\n", "", r->error);
  if (!r->eager.ok && !r->eager.timed_out && r->eager.error[0]) printf("%-12s eager: %s\n", "", r->eager.error);
  if (!r->cold.ok && r->cold.error[0]) printf("%-12s cold start: %s\n", "", r->cold.error);
  else if (!r->warm.ok && r->warm.error[0]) printf("%-12s warm start: %s\n", "", r->warm.error);
}

static void report_table(const bench_config *cfg, const bench_result *rs, int n) {
  const char *eager_backend = getenv("TC_EAGER_BACKEND");
  printf("tc bench: backend %s, size %s, %d threads; eager on %s; ceilings measured in this run (BLAS: %s)\n",
         cfg->backend, bench_size_name(cfg->size), cfg->threads,
         eager_backend && *eager_backend ? eager_backend : "debug-eager", bench_blas_name());
  printf("%-12s %-5s %10s %-22s %6s %10s %10s %10s %10s %4s %4s\n", "model", "unit", "figure", "ceiling", "ratio",
         "median", "eager", "cold 1st", "warm 1st", "krn", "sets");
  for (int i = 0; i < n; i++) report_table_row(&rs[i]);
  printf("figure: GB/s and TF/s from the median call; ms and us are the median call itself. ratio: figure/ceiling\n"
         "(time figures: ceiling time/median, the ceiling being their GEMMs alone). eager: median eager call.\n"
         "cold/warm 1st: first call (capture + compile + run) in a new process with an empty / warm cache.\n");
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
  printf("}");
}

static void report_json(const bench_config *cfg, const bench_result *rs, int n) {
  const char *eager_backend = getenv("TC_EAGER_BACKEND");
  printf("{\n  \"backend\": ");
  json_str(cfg->backend);
  printf(",\n  \"size\": ");
  json_str(bench_size_name(cfg->size));
  printf(",\n  \"threads\": %d,\n  \"eager_backend\": ", cfg->threads);
  json_str(eager_backend && *eager_backend ? eager_backend : "debug-eager");
  printf(",\n  \"blas\": ");
  json_str(bench_blas_name());
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
