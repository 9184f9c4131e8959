/* first_call_exit.c — a program that compiles a small model on inductor-cpu, makes its first
 * call and exits at once, freeing nothing: the background -O3 build of the cold compile
 * (plugins/inductor-cpu/tiered.c) is still running then. test_inductor_cpu.c runs it and checks
 * that it exits cleanly and that the build still reached the disk cache. argv[1]: the backend
 * options ("cpu.cc=...,cpu.threads=2"). Prints "first call done" after the call. */
#include <stdio.h>
#include <stdlib.h>

#include "tc/tc.h"

static tc_tensor *model(tc_tensor *x) {
  tc_tensor *s = tc_softmax(x, 1);
  tc_tensor *y = tc_log(s);
  tc_release(s);
  return y;
}

int main(int argc, char **argv) {
  tc_tensor *x = tc_randn(3, TC_F32, 2, (int64_t[]){37, 101});
  tc_compile_options o = {.struct_size = sizeof o,
                          .backend = "inductor-cpu",
                          .name = "first_call_exit",
                          .options = argc > 1 ? argv[1] : NULL};
  tc_compiled *c = x ? tc_compile(TC_FN(model), 1, &o) : NULL;
  tc_tensor *y = c ? tc_call(c, &x) : NULL;
  if (!y) {
    fprintf(stderr, "first_call_exit: %s\n", tc_last_error());
    return 2;
  }
  printf("first call done\n");
  fflush(stdout);
  exit(0);
}
