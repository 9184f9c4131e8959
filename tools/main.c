/* main.c — the `tc` command: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "tc/tc.h"
#include "tc_cli.h"

static const struct {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *help;
} commands[] = {
    {"list-backends", cmd_list_backends, "list backends, with availability and devices [--json]"},
    {"options", cmd_options, "the options a backend declares: tc options BACKEND [--json]"},
    {"models", cmd_models, "list the bundled models"},
    {"run", cmd_run, "run a bundled model: tc run MODEL [--backend NAME] [--size cpu|gpu] [--iters N]"},
    {"explain", cmd_explain, "explain compilation: tc explain MODEL [--backend NAME] [--json|--dot]"},
    {"ab", cmd_ab, "compare backends on a model: tc ab MODEL --backends A,B [--bisect] [--json] [--html FILE]"},
    {"bench", cmd_bench, "benchmark the bundled models against measured ceilings [--json]"},
    {"cache", cmd_cache, "the disk cache: tc cache [stats|list|clear] [DIR]"},
    {"conformance", cmd_conformance, "run the conformance suite: tc conformance BACKEND [--filter S] [-v]"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: tc COMMAND [ARGS]\n       tc --version\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].help);
  fprintf(f, "\n  %-14s %s\n", "--version", "print the library version and the plugin ABI it speaks");
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version")) {
    int major, minor;
    tc_abi_version(&major, &minor);
    printf("tc %s (plugin ABI %d.%d)\n", tc_version(), major, minor);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "tc: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
