/* cmd_models.c — `tc models`: the bundled models, one line each (or --json). */
#include <stdio.h>
#include <string.h>

#include "tc_cli.h"
#include "tc_models.h"

int cmd_models(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = true;
    else {
      fprintf(stderr, "usage: tc models [--json]\n");
      return 2;
    }
  }
  int n;
  const tc_model *all = tc_models_all(&n);
  if (json) {
    printf("[\n");
    for (int i = 0; i < n; i++) {
      printf("  {\"name\": ");
      cli_json_str(stdout, all[i].name);
      printf(", \"inputs\": %d, \"unit\": ", all[i].n_inputs);
      cli_json_str(stdout, all[i].unit);
      printf(", \"description\": ");
      cli_json_str(stdout, all[i].description);
      printf("}%s\n", i + 1 < n ? "," : "");
    }
    printf("]\n");
    return 0;
  }
  printf("%-12s %6s  %-5s  %s\n", "name", "inputs", "unit", "description");
  for (int i = 0; i < n; i++)
    printf("%-12s %6d  %-5s  %s\n", all[i].name, all[i].n_inputs, all[i].unit, all[i].description);
  printf("\ntc run MODEL [--backend NAME|eager] runs one; tc bench measures them (and dyn_attn: attn_block\n"
         "called with 40 sequence lengths).\n");
  return 0;
}
