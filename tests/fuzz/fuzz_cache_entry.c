/* fuzz_cache_entry.c — libFuzzer target for the disk cache (plugin-api/kit/disk_cache.c).
 * Odd first byte: the rest is a payload; put then get must give back exactly those bytes.
 * Even first byte: the rest is written as the entry file itself (whatever a crash, a disk or
 * another user left there); get must verify or discard it, never crash, hang or hand back
 * bytes that are not a verified payload. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_kit.h"

static char dir[64], entry[256];

static void remember_entry(const tck_cache_entry *e, void *ud) {
  snprintf(entry, sizeof entry, "%s/%s", dir, e->name);
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/tc-fuzz-cache-XXXXXX");
  if (!mkdtemp(dir)) abort();
  char err[512];
  if (tck_cache_put(dir, "fuzz", "k", 1, "so", "seed", 4, NULL, err, sizeof err) != TC_OK) abort();
  tck_cache_scan(dir, remember_entry, NULL); /* the one entry's file name */
  if (!entry[0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) setup();
  char err[512];
  tck_cache_hit hit;
  bool found = false;
  if (size && (data[0] & 1)) {
    if (tck_cache_put(dir, "fuzz", "k", 1, "so", data + 1, size - 1, NULL, err, sizeof err) != TC_OK) abort();
    if (tck_cache_get(dir, "fuzz", "k", 1, "so", &hit, &found, err, sizeof err) != TC_OK || !found) abort();
    if (hit.size != size - 1 || memcmp(hit.data, data + 1, size - 1) != 0) abort(); /* round trip */
    tck_cache_hit_free(&hit);
    return 0;
  }
  int fd = open(entry, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) abort();
  if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) abort();
  close(fd);
  if (tck_cache_get(dir, "fuzz", "k", 1, "so", &hit, &found, err, sizeof err) != TC_OK) abort();
  if (found) tck_cache_hit_free(&hit); /* only a byte-exact valid entry verifies */
  return 0;
}
