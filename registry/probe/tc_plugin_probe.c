/* tc_plugin_probe.c — the helper the registry runs before a plugin file first enters the host
 * process: it loads the plugin (its constructors run), negotiates the table and calls probe, in
 * a process of its own. A plugin that crashes, aborts, exits or hangs there takes down this
 * helper, not the program that uses tc: the registry sees the signal, the exit or the timeout
 * and lists the plugin as unavailable with that reason (registry/probe_child.c).
 *
 *   tc-plugin-probe PATH
 *
 * Prints "tc-plugin-probe: done" as its last line when load, query and probe all returned;
 * anything else (no such line) means the plugin ended the process. Links only the plugin kit
 * (its in-process test host gives the plugin every host service), never libtc. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kit/tc_kit.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tc-plugin-probe PATH\n");
    return 2;
  }
  tck_test_host *h = tck_test_host_new(NULL, NULL);
  if (!h) return 3;
  tc_plugin_api table;
  void *dl = NULL;
  char err[512];
  if (tck_test_plugin_open(h, argv[1], &table, &dl, err, sizeof err)) {
    tc_probe_args a = {.struct_size = sizeof a, .host = tck_test_host_api(h)};
    const char *msg = "";
    tc_status s = table.probe ? tck_test_host_take(h, table.probe(&a), &msg) : TC_OK;
    printf("probe %s %s\n", tck_status_name(s), a.available ? "available" : "unavailable");
  } else {
    /* Not a usable plugin: the registry finds out why by itself; this helper only proves that
     * trying did not end the process. */
    printf("query failed: %s\n", err);
  }
  printf("tc-plugin-probe: done\n");
  fflush(stdout);
  /* Leave the plugin mapped and its threads alone: _exit skips destructors a broken plugin may
   * have registered; the verdict is already printed. */
  _exit(0);
}
