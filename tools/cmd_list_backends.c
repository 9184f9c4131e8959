/* cmd_list_backends.c — placeholder until its owner lands it. */
#include <stdio.h>
#include "tc_cli.h"
int cmd_list_backends(int argc, char **argv) {
  (void)argc;
  fprintf(stderr, "tc %s: not built yet\n", argv[0]);
  return 1;
}
