/* cmd_run.c — placeholder until its owner lands it. */
#include <stdio.h>
#include "tc_cli.h"
int cmd_run(int argc, char **argv) {
  (void)argc;
  fprintf(stderr, "tc %s: not built yet\n", argv[0]);
  return 1;
}
