/* cmd_conformance.c — `tc conformance BACKEND [--filter S] [--mode M] [-o OPTIONS] [-v]`: runs the conformance suite
 * on one backend ("eager" for plain eager mode), prints one line per failing case (and per
 * passing case with -v), and ends with exactly "N passed, N failed". Exits 0 only when
 * nothing failed. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "conformance.h"
#include "tc/tc.h"
#include "tc_cli.h"

static int usage(void) {
  fprintf(stderr, "usage: tc conformance BACKEND [--filter S] [--mode MODE] [-o OPTIONS] [-v]\n"
                  "  BACKEND   a name from `tc list-backends`, or \"eager\" for plain eager mode\n"
                  "  --filter  run only the cases whose \"suite.name\" contains S\n"
                  "  --mode    compile mode (default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs);\n"
                  "            outside default each case is called twice and the second result checked\n"
                  "  -o        backend options for every compile, e.g. vulkan.f32_subnormals=emulate\n"
                  "  -v        also list the cases that pass\n");
  return 2;
}

/* NULL when the backend can be used, else why not. */
static const char *backend_problem(const char *name, char *buf, size_t cap) {
  if (!strcmp(name, "eager")) return NULL;
  tc_backend_info infos[64];
  int n = tc_backend_list(infos, 64);
  for (int i = 0; i < n && i < 64; i++)
    if (!strcmp(infos[i].name, name)) {
      if (infos[i].available) return NULL;
      snprintf(buf, cap, "backend '%s' is not available: %s", name, infos[i].reason ? infos[i].reason : "?");
      return buf;
    }
  snprintf(buf, cap, "unknown backend '%s' (see `tc list-backends`)", name);
  return buf;
}

int cmd_conformance(int argc, char **argv) {
  const char *backend = NULL, *filter = NULL;
  bool verbose = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) verbose = true;
    else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
      int32_t mode;
      if (!bench_parse_mode(argv[++i], &mode)) {
        fprintf(stderr, "tc conformance: --mode %s: expected default, reduce-overhead, max-autotune or "
                        "max-autotune-no-cudagraphs\n", argv[i]);
        return 2;
      }
      conf_set_mode(mode);
    }
    else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--options")) && i + 1 < argc) conf_set_options(argv[++i]);
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(), 0;
    else if (argv[i][0] == '-' || backend) return usage();
    else backend = argv[i];
  }
  if (!backend) return usage();
  char why[768];
  if (backend_problem(backend, why, sizeof why)) {
    fprintf(stdout, "tc conformance: %s\n0 passed, 1 failed\n", why);
    return 1;
  }
  const char *opts = conf_get_options();
  fprintf(stdout, "tc conformance %s: %d cases%s%s%s%s\n", backend, conf_case_count(), filter ? ", filter " : "",
          filter ? filter : "", opts ? ", options " : "", opts ? opts : "");
  conf_result r = conf_run_all(backend, filter, verbose, stdout);
  return r.failed ? 1 : 0;
}
