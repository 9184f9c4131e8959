/* tc_cli.h — subcommands of the `tc` command, one file each (cmd_*.c). Each gets argv with
 * argv[0] = the subcommand's name and returns the process exit code. */
#ifndef TC_CLI_H
#define TC_CLI_H

int cmd_list_backends(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_cache(int argc, char **argv);

#endif
