/* cmd_list_backends.c — `tc list-backends [--json]`: every backend found, available or not,
 * with its devices and, when it cannot be used, the reason. Always exits 0 once it has listed:
 * a broken plugin is information, not a failure of this command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"
#include "tc_cli.h"

static const char *device_type_name(int32_t type) {
  switch (type) {
  case TC_DEVICE_CPU: return "cpu";
  case TC_DEVICE_DISCRETE_GPU: return "discrete-gpu";
  case TC_DEVICE_INTEGRATED_GPU: return "integrated-gpu";
  case TC_DEVICE_VIRTUAL_GPU: return "virtual-gpu";
  default: return "other";
  }
}

/* "name (type), name (type)" or "-". */
static void devices_str(const tc_backend_info *b, char *out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (int32_t i = 0; i < b->n_devices && used < cap; i++) {
    const tc_device *d = &b->devices[i];
    int w = snprintf(out + used, cap - used, "%s%s (%s)", i ? ", " : "", d->name, device_type_name(d->type));
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!out[0]) snprintf(out, cap, "-");
}

/* Absent strings print as "" here (as they always have), not null. */
static void json_string(FILE *f, const char *s) { cli_json_str(f, s ? s : ""); }

static void print_json(FILE *f, const tc_backend_info *bs, int n) {
  fputs("[", f);
  for (int i = 0; i < n; i++) {
    const tc_backend_info *b = &bs[i];
    fputs(i ? ",\n  {" : "\n  {", f);
    fputs("\"name\": ", f);
    json_string(f, b->name);
    fputs(", \"version\": ", f);
    json_string(f, b->version);
    fputs(", \"description\": ", f);
    json_string(f, b->description);
    fprintf(f, ", \"available\": %s, \"score\": %d, \"devices\": [", b->available ? "true" : "false", (int)b->score);
    for (int32_t d = 0; d < b->n_devices; d++) {
      const tc_device *dev = &b->devices[d];
      fputs(d ? ", {\"name\": " : "{\"name\": ", f);
      json_string(f, dev->name);
      fputs(", \"type\": ", f);
      json_string(f, device_type_name(dev->type));
      fprintf(f, ", \"memory_bytes\": %llu}", (unsigned long long)dev->memory_bytes);
    }
    fputs("], \"path\": ", f);
    json_string(f, b->path);
    fputs(", \"reason\": ", f);
    json_string(f, b->reason);
    fputs("}", f);
  }
  fputs(n ? "\n]\n" : "]\n", f);
}

static int max_int(int a, int b) {
  return a > b ? a : b;
}

static void print_table(FILE *f, const tc_backend_info *bs, int n) {
  char dev[512];
  int w_name = 4, w_ver = 7, w_dev = 7, w_path = 4;
  for (int i = 0; i < n; i++) {
    devices_str(&bs[i], dev, sizeof dev);
    w_name = max_int(w_name, (int)strlen(bs[i].name));
    w_ver = max_int(w_ver, (int)strlen(bs[i].version));
    w_dev = max_int(w_dev, (int)strlen(dev));
    w_path = max_int(w_path, (int)strlen(bs[i].path));
  }
  fprintf(f, "%-*s  %-*s  %-9s  %5s  %-*s  %-*s  %s\n", w_name, "NAME", w_ver, "VERSION", "AVAILABLE", "SCORE", w_dev,
          "DEVICES", w_path, "PATH", "REASON");
  for (int i = 0; i < n; i++) {
    const tc_backend_info *b = &bs[i];
    devices_str(b, dev, sizeof dev);
    fprintf(f, "%-*s  %-*s  %-9s  %5d  %-*s  %-*s  %s\n", w_name, b->name, w_ver, b->version[0] ? b->version : "-",
            b->available ? "yes" : "no", (int)b->score, w_dev, dev, w_path, b->path, b->reason);
  }
  if (n == 0) fprintf(f, "(no backends found: set TC_PLUGIN_PATH, or install plugins in <libdir>/tc/plugins)\n");
}

int cmd_list_backends(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: tc %s [--json]\n\nLists every backend found on TC_PLUGIN_PATH, in the install's plugin\n"
             "directory and registered in process: availability, score, devices, path, and why a\n"
             "backend cannot be used.\n",
             argv[0]);
      return 0;
    } else {
      fprintf(stderr, "tc %s: unknown argument '%s' (usage: tc %s [--json])\n", argv[0], argv[i], argv[0]);
      return 2;
    }
  }
  int cap = tc_backend_list(NULL, 0);
  tc_backend_info *bs = calloc((size_t)(cap > 0 ? cap : 1), sizeof *bs);
  if (!bs) {
    fprintf(stderr, "tc %s: out of memory\n", argv[0]);
    return 1;
  }
  int n = tc_backend_list(bs, cap);
  if (n > cap) n = cap;
  if (json)
    print_json(stdout, bs, n);
  else
    print_table(stdout, bs, n);
  free(bs);
  return 0;
}
