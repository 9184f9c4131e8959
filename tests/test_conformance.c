/* test_conformance.c — the conformance suite under Criterion: one test per backend, plain
 * eager mode first, then every backend tc_backend_list reports available. A failing test
 * lists the failing cases with their messages. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "tc/tc.h"

static bool backend_available(const char *name, char *why, size_t cap) {
  tc_backend_info infos[64];
  int n = tc_backend_list(infos, 64);
  for (int i = 0; i < n && i < 64; i++)
    if (!strcmp(infos[i].name, name)) {
      snprintf(why, cap, "%s", infos[i].reason ? infos[i].reason : "");
      return infos[i].available;
    }
  snprintf(why, cap, "not found");
  return false;
}

static void run_backend(const char *name) {
  char why[512];
  if (strcmp(name, "eager") && !backend_available(name, why, sizeof why))
    cr_skip_test("backend %s is not available: %s", name, why);
  char *text = NULL;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  cr_assert(log, "open_memstream failed");
  conf_result r = conf_run_all(name, NULL, false, log);
  fclose(log);
  cr_expect(r.passed > 0, "%s: no case ran (%d registered)", name, conf_case_count());
  cr_expect_eq(r.failed, 0, "conformance on %s: %d of %d cases failed:\n%s", name, r.failed, r.passed + r.failed,
               text);
  free(text);
}

Test(conformance, eager) { run_backend("eager"); }
Test(conformance, debug_eager) { run_backend("debug-eager"); }
Test(conformance, inductor_cpu) { run_backend("inductor-cpu"); }
Test(conformance, vulkan) { run_backend("vulkan"); }
