/* digits_data.c — the UCI digits data set (examples/data/digits.csv.gz), for the digits and
 * train_digits models. The file is gzip'd CSV; zlib is opened at run time (libz.so.1), so the
 * build needs nothing. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models_internal.h"

/* The data file: $TC_DATA_DIR, else examples/data next to this source file. */
static void digits_path(char *buf, size_t cap) {
  const char *dir = getenv("TC_DATA_DIR");
  if (dir && *dir) {
    snprintf(buf, cap, "%s/digits.csv.gz", dir);
    return;
  }
  const char *src = __FILE__, *slash = strrchr(src, '/');
  int n = slash ? (int)(slash - src) : 1;
  snprintf(buf, cap, "%.*s/../data/digits.csv.gz", n, slash ? src : ".");
}

typedef void *(*gzopen_fn)(const char *, const char *);
typedef int (*gzread_fn)(void *, void *, unsigned);
typedef int (*gzclose_fn)(void *);

/* Reads the whole decompressed file; NULL (with the reason on stderr) on failure. */
static char *digits_read(size_t *len) {
  char path[4096];
  digits_path(path, sizeof path);
  void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!z) {
    fprintf(stderr, "digits: cannot load zlib (libz.so.1): %s\n", dlerror());
    return NULL;
  }
  /* POSIX's way to turn dlsym's object pointer into a function pointer under -Wpedantic. */
  gzopen_fn zopen;
  gzread_fn zread;
  gzclose_fn zclose;
  *(void **)&zopen = dlsym(z, "gzopen");
  *(void **)&zread = dlsym(z, "gzread");
  *(void **)&zclose = dlsym(z, "gzclose");
  void *f = zopen && zread && zclose ? zopen(path, "rb") : NULL;
  if (!f) {
    fprintf(stderr, "digits: cannot open %s (set TC_DATA_DIR to the folder holding digits.csv.gz)\n", path);
    dlclose(z);
    return NULL;
  }
  size_t cap = 1 << 19, n = 0;
  char *buf = malloc(cap + 1);
  int got;
  while (buf && (got = zread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)got;
    if (n == cap) {
      char *bigger = realloc(buf, 2 * cap + 1);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  zclose(f);
  dlclose(z);
  if (!buf) fprintf(stderr, "digits: out of memory reading %s\n", path);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

/* Parses rows of 64 pixels and a label; false (with the reason on stderr) on a malformed file. */
static bool digits_parse(const char *text, float *pixels, int64_t *labels) {
  const char *p = text;
  for (int r = 0; r < DIGITS_ROWS; r++) {
    for (int c = 0; c <= DIGITS_PIXELS; c++) {
      char *end;
      long v = strtol(p, &end, 10);
      if (end == p || v < 0 || v > 16 || (c == DIGITS_PIXELS && v > 9)) {
        fprintf(stderr, "digits: malformed data at row %d, column %d\n", r + 1, c + 1);
        return false;
      }
      if (c < DIGITS_PIXELS)
        pixels[r * DIGITS_PIXELS + c] = (float)v / 16.0f;
      else
        labels[r] = v;
      p = end + (*end == ','); /* strtol skips the line breaks */
    }
  }
  return true;
}

bool digits_load(float *pixels, int64_t *labels) {
  size_t len;
  char *text = digits_read(&len);
  bool ok = text && digits_parse(text, pixels, labels);
  free(text);
  return ok;
}
