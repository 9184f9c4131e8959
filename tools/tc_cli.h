/* tc_cli.h — subcommands of the `tc` command, one file each (cmd_*.c). Each gets argv with
 * argv[0] = the subcommand's name and returns the process exit code. */
#ifndef TC_CLI_H
#define TC_CLI_H

#include <stdio.h>

int cmd_list_backends(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_ab(int argc, char **argv);

/* ---------------------------------------------------------------- shared by the subcommands */
/* A JSON string ("null" for NULL), escaped (cli_format.c). */
void cli_json_str(FILE *f, const char *s);
/* A JSON number; "null" for NaN and infinities, which JSON cannot spell. */
void cli_json_num(FILE *f, double v);
/* "1.234 ms", "12.00 us", "1.500 s"; "-" for NaN. Returns buf. */
const char *cli_time_str(double s, char *buf, size_t cap);

#endif
