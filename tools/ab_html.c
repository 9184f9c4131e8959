/* ab_html.c — `tc ab --html FILE`: one self-contained page (no scripts, fonts or anything
 * fetched): per model, latency charts (inline SVG), the error table, the fused groups of the
 * plan, what the bisector found, and each backend's generated source. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "ab_report.h"
#include "tc_cli.h"

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

static const char *verdict_color(const char *v) {
  if (!strcmp(v, "pass")) return "#2e7d32";
  if (!strcmp(v, "ref")) return "#607d8b";
  return "#c62828";
}

/* ---------------------------------------------------------------- charts */
typedef struct bar {
  const char *label, *color;
  double value, lo, hi; /* lo/hi: a whisker, NaN for none */
} bar;

/* 10^d seconds as a tick label: "1 us", "100 ms", "10 s". */
static const char *decade_str(int d, char *buf, size_t cap) {
  static const char *const units[] = {"ns", "us", "ms", "s"};
  int u = d < -9 ? 0 : d >= 0 ? 3 : (d + 9) / 3;
  snprintf(buf, cap, "%g %s", pow(10, d - 3 * (u - 3)), units[u]);
  return buf;
}

/* Horizontal bars on a log scale (times on one backend can be 1000x another's). */
static void svg_bars(FILE *f, const char *title, const bar *b, int n) {
  double vmin = INFINITY, vmax = 0;
  for (int i = 0; i < n; i++) {
    double lo = isfinite(b[i].lo) ? b[i].lo : b[i].value, hi = isfinite(b[i].hi) ? b[i].hi : b[i].value;
    if (lo > 0 && lo < vmin) vmin = lo;
    if (hi > vmax) vmax = hi;
  }
  if (!(vmax > 0) || !isfinite(vmin)) return;
  int d0 = (int)floor(log10(vmin)), d1 = (int)ceil(log10(vmax));
  if (d1 <= d0) d1 = d0 + 1;
  const double left = 140, width = 560, row = 26, top = 28;
  const double height = top + row * n + 28;
#define X(v) (left + (log10(v) - d0) / (double)(d1 - d0) * width)
  fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
          left + width + 110, height);
  fprintf(f, "<text x=\"0\" y=\"16\" class=\"title\">");
  esc(f, title);
  fprintf(f, "</text>\n");
  for (int d = d0; d <= d1; d++) {
    char t[24];
    double x = X(pow(10, d));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>", x, top - 4, x, top + row * n);
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", x, top + row * n + 16,
            decade_str(d, t, sizeof t));
  }
  for (int i = 0; i < n; i++) {
    double y = top + row * i;
    char t[24];
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", left - 8, y + 16);
    esc(f, b[i].label);
    fprintf(f, "</text>");
    if (!(b[i].value > 0)) continue;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"18\" fill=\"%s\" opacity=\"0.8\"/>", left, y + 3,
            X(b[i].value) - left, b[i].color);
    if (isfinite(b[i].lo) && isfinite(b[i].hi) && b[i].lo > 0)
      fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#222\" stroke-width=\"1.5\"/>",
              X(b[i].lo), y + 12, X(b[i].hi), y + 12);
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" class=\"val\">%s</text>\n", X(isfinite(b[i].hi) ? b[i].hi : b[i].value) + 6,
            y + 16, cli_time_str(b[i].value, t, sizeof t));
  }
#undef X
  fprintf(f, "</svg>\n");
}

static void charts(FILE *f, const tc_ab_report *r) {
  bar steady[32], first[32];
  int n = 0;
  for (int32_t i = 0; i < r->n_results && n < 32; i++) {
    const tc_ab_result *x = &r->results[i];
    if (x->status != TC_OK) continue;
    const char *color = verdict_color(ab_verdict(r, x));
    steady[n] = (bar){x->backend, color, x->median_s, x->min_s, x->max_s};
    first[n++] = (bar){x->backend, color, x->first_call_s, NAN, NAN};
  }
  fprintf(f, "<div class=\"charts\">\n");
  svg_bars(f, "steady call: median, whisker from min to max (log scale)", steady, n);
  svg_bars(f, "first call: capture + compile + run (log scale)", first, n);
  fprintf(f, "</div>\n");
}

/* ---------------------------------------------------------------- tables */
static void td_num(FILE *f, const char *fmt, double v) {
  fputs("<td>", f);
  fprintf(f, fmt, v);
  fputs("</td>", f);
}

static void td_time(FILE *f, double s, bool cache_hit) {
  char t[24];
  fprintf(f, "<td>%s%s</td>", cli_time_str(s, t, sizeof t), cache_hit ? " <span class=\"hit\">cache</span>" : "");
}

static void result_table(FILE *f, const tc_ab_report *r) {
  fprintf(f,
          "<table>\n<tr><th>backend</th><th>result</th><th>max abs err</th><th>max rel err</th><th>max ULP</th>"
          "<th>failed / elements</th><th>NaN / Inf mismatches</th><th>non-finite alike</th><th>cold "
          "compile</th><th>warm compile</th>"
          "<th>first call</th><th>median</th><th>min</th><th>max</th><th>calls</th><th>graphs / kernels</th></tr>\n");
  for (int32_t i = 0; i < r->n_results; i++) {
    const tc_ab_result *x = &r->results[i];
    const char *v = ab_verdict(r, x);
    fprintf(f, "<tr><td>");
    esc(f, x->backend);
    fprintf(f, "</td><td style=\"color:%s;font-weight:bold\">%s</td>", verdict_color(v), v);
    if (x->status != TC_OK) {
      fprintf(f, "<td colspan=\"14\" class=\"err\">");
      esc(f, x->error);
      fprintf(f, "</td></tr>\n");
      continue;
    }
    td_num(f, "%.3g", x->max_abs_err);
    td_num(f, "%.3g", x->max_rel_err);
    fprintf(f, "<td>%lld</td><td>%lld / %lld</td><td>%lld / %lld</td><td>%lld</td>", (long long)x->max_ulp,
            (long long)x->n_failed, (long long)x->n_elements, (long long)x->nan_mismatches,
            (long long)x->inf_mismatches, (long long)x->n_nonfinite);
    td_time(f, x->cold_compile_s, x->cold_cache_hit);
    td_time(f, x->warm_compile_s, x->warm_cache_hit);
    td_time(f, x->first_call_s, false);
    td_time(f, x->median_s, false);
    td_time(f, x->min_s, false);
    td_time(f, x->max_s, false);
    fprintf(f, "<td>%d</td><td>%d / %d</td></tr>\n", (int)x->n_calls, (int)x->n_graphs, (int)x->n_kernels);
  }
  fprintf(f, "</table>\n");
  for (int32_t i = 0; i < r->n_results; i++)
    if (r->results[i].status == TC_OK) {
      fprintf(f,
              "<p class=\"note\">pass: |out &minus; ref| &le; %g &middot; max|ref| + %g &middot; |ref| for every "
              "element, NaN and infinities in the same places. <i>cache</i>: the backend's disk cache served the "
              "compile. Times are device-synchronized.</p>\n",
              r->results[i].atol, r->results[i].rtol);
      break;
    }
}

/* ---------------------------------------------------------------- the fused groups */
/* The index of the kernel named name in r, or -1. */
static int kernel_index(const tc_ab_report *r, const char *name, size_t len) {
  for (int32_t k = 0; k < r->n_kernels; k++)
    if (strlen(r->kernels[k].name) == len && !strncmp(r->kernels[k].name, name, len)) return k;
  return -1;
}

/* One box per kernel, in plan order; a curve from each kernel to those that read its result. */
static void groups_picture(FILE *f, const tc_ab_report *r, int bad_kernel) {
  if (r->n_kernels == 0) {
    fprintf(f, "<p>No plan: the function has graph breaks or computes nothing.</p>\n");
    return;
  }
  const double bx = 20, bw = 620, bh = 58, gap = 18;
  const double height = 10 + (bh + gap) * r->n_kernels;
  fprintf(f, "<svg class=\"groups\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n",
          bx + bw + 220, height);
  fprintf(f, "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
             "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1565c0\"/></marker></defs>\n");
  for (int32_t k = 0; k < r->n_kernels; k++) {
    const tc_ab_kernel *kk = &r->kernels[k];
    double y = 10 + (bh + gap) * k;
    /* Curves first, so boxes draw over them. */
    int depth = 0;
    for (const char *p = kk->reads; p && *p;) {
      const char *end = strstr(p, ", ");
      size_t len = end ? (size_t)(end - p) : strlen(p);
      int j = kernel_index(r, p, len);
      if (j >= 0) {
        double y0 = 10 + (bh + gap) * j + bh / 2, y1 = y + bh / 2, xr = bx + bw, bend = 40 + 18 * (depth++ % 8);
        fprintf(f,
                "<path d=\"M%.0f,%.0f C%.0f,%.0f %.0f,%.0f %.0f,%.0f\" fill=\"none\" stroke=\"#1565c0\" "
                "stroke-width=\"1.4\" marker-end=\"url(#arrow)\"/>\n",
                xr, y0, xr + bend, y0, xr + bend, y1, xr + 2, y1);
      }
      p = end ? end + 2 : p + len;
    }
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" rx=\"6\" fill=\"%s\" stroke=\"%s\"/>\n", bx,
            y, bw, bh, k == bad_kernel ? "#ffebee" : "#e3f2fd", k == bad_kernel ? "#c62828" : "#1565c0");
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"kname\">", bx + 10, y + 18);
    esc(f, kk->name);
    fprintf(f, " &#8594; ");
    esc(f, kk->output);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"%.0f\" class=\"kprims\">", bx + 10, y + 35);
    char prims[100];
    snprintf(prims, sizeof prims, "%s", kk->prims);
    if (strlen(kk->prims) > 90) strcpy(prims + 86, " ...");
    esc(f, prims);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"%.0f\" class=\"kreads\">reads: ", bx + 10, y + 51);
    char reads[100];
    snprintf(reads, sizeof reads, "%s", kk->reads[0] ? kk->reads : "nothing");
    if (strlen(kk->reads) > 90) strcpy(reads + 86, " ...");
    esc(f, reads);
    fprintf(f, "</text>\n<title>");
    esc(f, kk->prims);
    fprintf(f, "</title>\n");
  }
  fprintf(f, "</svg>\n");
}

/* ---------------------------------------------------------------- bisect and sources */
static void source_block(FILE *f, const char *label, const char *src, bool open) {
  int lines = 0;
  for (const char *p = src; p && *p; p++)
    lines += *p == '\n';
  fprintf(f, "<details%s><summary>", open ? " open" : "");
  esc(f, label);
  if (src)
    fprintf(f, " (%d lines)</summary><pre>", lines);
  else
    fprintf(f, " (none exposed)</summary><pre>");
  esc(f, src ? src : "this backend exposes no generated source");
  fprintf(f, "</pre></details>\n");
}

static void divergences(FILE *f, const tc_ab_report *r) {
  for (int32_t i = 0; i < r->n_results; i++) {
    const tc_ab_result *x = &r->results[i];
    const tc_ab_divergence *d = x->divergence;
    if (!d) continue;
    fprintf(f, "<div class=\"bisect\"><h3>Bisect: ");
    esc(f, x->backend);
    fprintf(f, " against ");
    esc(f, r->reference);
    fprintf(f, "</h3>\n<p>");
    esc(f, d->note);
    fprintf(f, "</p>\n");
    if (d->kernel >= 0 && d->kernel < r->n_kernels) {
      const tc_ab_kernel *k = &r->kernels[d->kernel];
      fprintf(f, "<p><b>prims</b>: ");
      esc(f, k->prims);
      fprintf(f, "<br><b>reads</b>: ");
      esc(f, k->reads);
      fprintf(f, "<br><b>inputs</b> (the same on both backends):</p><pre>");
      esc(f, d->inputs_text);
      fprintf(f, "</pre>\n");
      char label[160];
      snprintf(label, sizeof label, "%s on %s (reference)", k->name, r->reference);
      source_block(f, label, d->ref_source, true);
      snprintf(label, sizeof label, "%s on %s", k->name, x->backend);
      source_block(f, label, d->source, true);
    }
    fprintf(f, "</div>\n");
  }
}

/* Per kernel of the plan, each backend's source for it compiled alone (--kernel-sources). */
static void kernel_sources(FILE *f, const tc_ab_report *r) {
  bool any = false;
  for (int32_t i = 0; i < r->n_results; i++)
    any |= r->results[i].n_kernel_sources == r->n_kernels && r->n_kernels;
  if (!any) return;
  fprintf(f, "<p>Per kernel, compiled alone on each backend:</p>\n");
  for (int32_t k = 0; k < r->n_kernels; k++) {
    fprintf(f, "<details class=\"kernel\"><summary>");
    esc(f, r->kernels[k].name);
    fprintf(f, " &#8594; ");
    esc(f, r->kernels[k].output);
    fprintf(f, "</summary>\n");
    for (int32_t i = 0; i < r->n_results; i++)
      if (r->results[i].n_kernel_sources == r->n_kernels)
        source_block(f, r->results[i].backend, r->results[i].kernel_sources[k], false);
    fprintf(f, "</details>\n");
  }
}

static void section(FILE *f, const tc_ab_report *r, const ab_context *cx) {
  int bad_kernel = -1;
  for (int32_t i = 0; i < r->n_results && bad_kernel < 0; i++)
    if (r->results[i].divergence) bad_kernel = r->results[i].divergence->kernel;
  fprintf(f, "<section>\n<h2>");
  esc(f, cx->model);
  fprintf(f, "</h2>\n<p class=\"ctx\">");
  esc(f, cx->source);
  if (cx->size) fprintf(f, ", size %s", cx->size);
  fprintf(f, ", %s inputs (seed %llu); output ", cx->inputs, (unsigned long long)cx->seed);
  esc(f, r->output);
  fprintf(f, "; reference ");
  esc(f, r->reference);
  fprintf(f, "; %d kernels in the plan</p>\n", (int)r->n_kernels);
  result_table(f, r);
  charts(f, r);
  divergences(f, r);
  fprintf(f, "<h3>Fused groups (the plan every kernel-level backend compiles)</h3>\n");
  groups_picture(f, r, bad_kernel);
  fprintf(f, "<h3>Generated source</h3>\n");
  kernel_sources(f, r);
  fprintf(f, "<p>Every graph, as each backend compiled it for the whole function:</p>\n");
  for (int32_t i = 0; i < r->n_results; i++)
    if (r->results[i].status == TC_OK) source_block(f, r->results[i].backend, r->results[i].source, false);
  fprintf(f, "</section>\n");
}

static const char style[] =
    "body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:2px solid #1565c0;padding-bottom:4px;margin-top:36px}"
    "h3{font-size:15px;margin-top:22px}table{border-collapse:collapse;margin:8px 0}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}"
    "th{background:#f0f4f8}td:first-child{text-align:left}td.err{text-align:left;color:#c62828;white-space:normal}"
    ".note,.ctx{color:#555}.hit{color:#1565c0;font-size:11px}"
    "svg text{font:12px sans-serif;fill:#222}svg .title{font-weight:bold}svg .tick{fill:#777;font-size:11px}"
    "svg .kname{font-weight:bold}svg .kprims{font-family:monospace;font-size:11px}svg .kreads{fill:#555;font-size:11px}"
    ".charts svg{display:block;margin:10px 0}pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;"
    "overflow:auto;max-height:480px;font-size:12px}.bisect{border-left:4px solid #c62828;padding-left:12px}"
    "details{margin:4px 0}details.kernel>details{margin-left:20px}summary{cursor:pointer;font-family:monospace}";

bool ab_write_html(const char *path, const tc_ab_report *const *r, const ab_context *cx, int n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "tc ab: --html %s: %s\n", path, strerror(errno));
    return false;
  }
  fprintf(f,
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tc ab report</title>\n"
          "<style>%s</style></head><body>\n<h1>tc ab: backends compared</h1>\n<p class=\"ctx\">tc %s; ",
          style, tc_version());
  for (int i = 0; i < n; i++) {
    int failing = 0;
    for (int32_t k = 0; k < r[i]->n_results; k++)
      failing += r[i]->results[k].status != TC_OK || !r[i]->results[k].pass;
    fprintf(f, "%s<a href=\"#m%d\">", i ? ", " : "", i);
    esc(f, cx[i].model);
    fprintf(f, "</a>%s", failing ? " (disagreement)" : "");
  }
  fprintf(f, "</p>\n");
  for (int i = 0; i < n; i++) {
    fprintf(f, "<a id=\"m%d\"></a>\n", i);
    section(f, r[i], &cx[i]);
  }
  fprintf(f, "</body></html>\n");
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "tc ab: --html %s: writing failed: %s\n", path, strerror(errno));
  return ok;
}
