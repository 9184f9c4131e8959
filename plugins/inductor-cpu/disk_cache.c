/* disk_cache.c — compiled objects under the host's cache directory, keyed by a content hash of
 * (generated source, compiler identity, flags). Each object has a checksum file beside it,
 * written after the object; an entry whose checksum does not verify is deleted and rebuilt,
 * never trusted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icpu.h"

/* Two independent 64-bit FNV-1a lanes: a 128-bit key, ample against accidental collisions. */
icpu_hash hash_init(void) { return (icpu_hash){{0xcbf29ce484222325ull, 0x84222325cbf29ce4ull}}; }

icpu_hash hash_bytes(const void *data, size_t n, icpu_hash h) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h.h[0] = (h.h[0] ^ p[i]) * 0x100000001b3ull;
    h.h[1] = (h.h[1] ^ p[i] ^ (h.h[1] >> 29)) * 0x100000001b3ull;
  }
  return h;
}

void hash_hex(icpu_hash h, char out[33]) {
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.h[0], (unsigned long long)h.h[1]);
}

bool cache_path(const icpu_ctx *ctx, const char *key_hex, char *path, size_t cap) {
  const char *dir = ctx->host->cache_dir;
  if (!dir || !dir[0]) return false;
  return (size_t)snprintf(path, cap, "%s/inductor-cpu-%s.so", dir, key_hex) < cap;
}

static bool file_checksum(const char *path, char out[64]) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  icpu_hash h = hash_init();
  unsigned char buf[65536];
  size_t n, total = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    h = hash_bytes(buf, n, h);
    total += n;
  }
  bool ok = !ferror(f);
  fclose(f);
  char hex[33];
  hash_hex(h, hex);
  snprintf(out, 64, "%s %zu", hex, total);
  return ok && total > 0;
}

bool cache_verify(const icpu_ctx *ctx, const char *path) {
  char sum_path[4200], want[96] = "", have[64];
  snprintf(sum_path, sizeof sum_path, "%s.sum", path);
  if (access(path, R_OK) != 0) return false;
  FILE *f = fopen(sum_path, "r");
  if (f) {
    if (!fgets(want, sizeof want, f)) want[0] = 0;
    fclose(f);
    want[strcspn(want, "\n")] = 0;
  }
  if (want[0] && file_checksum(path, have) && strcmp(want, have) == 0) return true;
  icpu_log(ctx, "cache", "discarding a bad entry %s (checksum %s)", path, want[0] ? "mismatch" : "missing");
  unlink(path);
  unlink(sum_path);
  return false;
}

tc_status cache_seal(const icpu_ctx *ctx, const char *path) {
  char sum[64], tmp[4240], sum_path[4200];
  if (!file_checksum(path, sum)) return icpu_fail(ctx, TC_ERR_INTERNAL, "inductor-cpu: cannot read back %s", path);
  snprintf(sum_path, sizeof sum_path, "%s.sum", path);
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", sum_path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return icpu_fail(ctx, TC_ERR_INTERNAL, "inductor-cpu: cannot write %s: %s", tmp, strerror(errno));
  bool ok = fprintf(f, "%s\n", sum) > 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, sum_path) != 0) {
    unlink(tmp);
    return icpu_fail(ctx, TC_ERR_INTERNAL, "inductor-cpu: cannot write %s", sum_path);
  }
  return TC_OK;
}
