/* fuzz_plugin_file.c — libFuzzer target: arbitrary bytes as a plugin file, through the check
 * that runs before dlopen (registry/file_check.c). It must say yes or give a reason, never
 * read past the file or crash. The file is rewritten in place for each input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "registry_internal.h"

static char path[64];
static int fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fd < 0) {
    snprintf(path, sizeof path, "/tmp/tc-fuzz-plugin-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) abort();
  }
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  char why[512];
  why[0] = 0;
  if (!plugin_file_check(path, why, sizeof why) && !why[0]) abort(); /* a refusal always says why */
  return 0;
}
