/* cmd_options.c — `tc options BACKEND [--json]`: the options a backend declares, with type,
 * scope, default, what is allowed and what each means (what tc_compile_options.options and
 * $TC_OPTIONS may set for it). */
#include <stdio.h>
#include <string.h>

#include "tc/tc.h"
#include "tc_cli.h"

/* "0..1024", "64|128", or the hint. */
static void allowed(const tc_option_info *o, char *buf, size_t cap) {
  if (!strcmp(o->type, "int")) snprintf(buf, cap, "%lld..%lld", (long long)o->min, (long long)o->max);
  else if (!strcmp(o->type, "bool")) snprintf(buf, cap, "0|1");
  else snprintf(buf, cap, "%s", o->values ? o->values : "");
}

int cmd_options(int argc, char **argv) {
  const char *name = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = true;
    else if (argv[i][0] != '-' && !name) name = argv[i];
    else {
      fprintf(stderr, "usage: tc options BACKEND [--json]\n");
      return 2;
    }
  }
  if (!name) {
    fprintf(stderr, "usage: tc options BACKEND [--json]\n");
    return 2;
  }
  tc_option_info opts[64];
  int n = tc_backend_options(name, opts, 64);
  if (n < 0) {
    fprintf(stderr, "tc options: %s\n", tc_last_error());
    return 1;
  }
  if (n > 64) n = 64;
  char buf[256];
  if (json) {
    printf("[");
    for (int i = 0; i < n; i++) {
      printf("%s\n  {\"name\": ", i ? "," : "");
      cli_json_str(stdout, opts[i].name);
      printf(", \"type\": \"%s\", \"scope\": \"%s\", \"default\": ", opts[i].type, opts[i].scope);
      cli_json_str(stdout, opts[i].default_value);
      allowed(&opts[i], buf, sizeof buf);
      printf(", \"allowed\": ");
      cli_json_str(stdout, buf);
      printf(", \"meaning\": ");
      cli_json_str(stdout, opts[i].meaning);
      printf("}");
    }
    printf("%s]\n", n ? "\n" : "");
    return 0;
  }
  if (n == 0) {
    printf("%s declares no options\n", name);
    return 0;
  }
  int w = 22; /* the name column fits the longest name */
  for (int i = 0; i < n; i++)
    if (opts[i].name && (int)strlen(opts[i].name) > w) w = (int)strlen(opts[i].name);
  printf("%-*s %-7s %-8s %-10s %-16s %s\n", w, "OPTION", "TYPE", "SCOPE", "DEFAULT", "ALLOWED", "MEANING");
  for (int i = 0; i < n; i++) {
    allowed(&opts[i], buf, sizeof buf);
    printf("%-*s %-7s %-8s %-10s %-16s %s\n", w, opts[i].name, opts[i].type, opts[i].scope,
           opts[i].default_value ? opts[i].default_value : "-", buf, opts[i].meaning ? opts[i].meaning : "");
  }
  printf("\nSet them in tc_compile_options.options or $TC_OPTIONS: \"%s=VALUE,...\"; context options pick the "
         "backend's context, compile options reach every compile.\n",
         opts[0].name);
  return 0;
}
