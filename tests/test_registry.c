/* test_registry.c — finding, loading, version-checking and listing backends. Each test builds
 * its own plugin directory (copies of the test plugins in TC_TEST_PLUGIN_DIR, plus files made
 * here), points TC_PLUGIN_PATH at it, leaves the install's directory out
 * (TC_PLUGIN_DEFAULT_DIR=off) and rescans. Criterion runs each test in its own process. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "kit/tc_kit.h" /* tck_prim_abi_minor */
#if defined(__aarch64__)
#define TC_TEST_HOST_IS_AARCH64 1
#else
#define TC_TEST_HOST_IS_AARCH64 0
#endif
#include "registry_internal.h" /* the registry's record of a plugin: cache dir, host services */

/* ---------------------------------------------------------------- fixtures */

static char test_root[256];

static void rm_rf(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char child[PATH_MAX];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        rm_rf(child);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void registry_setup(void) {
  snprintf(test_root, sizeof test_root, "/tmp/tc-test-registry-XXXXXX");
  cr_assert_not_null(mkdtemp(test_root));
  setenv("TC_PLUGIN_DEFAULT_DIR", "off", 1);
  unsetenv("TC_OPTIONS");
  setenv("TC_CACHE_DIR", "off", 1);
}

static void registry_teardown(void) {
  rm_rf(test_root);
}

TestSuite(registry, .init = registry_setup, .fini = registry_teardown, .timeout = 60);

/* A fresh directory under the test's root. */
static const char *dir_new(const char *name) {
  static char paths[8][512];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, sizeof paths[0], "%s/%.200s", test_root, name);
  cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s", p);
  return p;
}

static void file_copy(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  cr_assert_not_null(in, "test plugin %s is missing (is the build complete?)", from);
  FILE *out = fopen(to, "wb");
  cr_assert_not_null(out, "cannot write %s", to);
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
    cr_assert_eq(fwrite(buf, 1, n, out), n);
  fclose(in);
  fclose(out);
}

/* Copies test plugin `name` (built from tests/plugins/name.c) into dir as name.so. */
static void plugin_add(const char *dir, const char *name) {
  char from[PATH_MAX], to[PATH_MAX];
  snprintf(from, sizeof from, "%s/%s.so", TC_TEST_PLUGIN_DIR, name);
  snprintf(to, sizeof to, "%s/%s.so", dir, name);
  file_copy(from, to);
}

static void text_file_add(const char *dir, const char *file, const char *text) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

static void plugin_path_use(const char *path) {
  setenv("TC_PLUGIN_PATH", path, 1);
  cr_assert_eq(tc_backend_rescan(), TC_OK, "%s", tc_last_error());
}

static tc_backend_info listed[64];
static int n_listed;

static void list_refresh(void) {
  n_listed = tc_backend_list(listed, 64);
  cr_assert_leq(n_listed, 64);
}

/* The first listed entry named `name` whose path contains `path_part` (NULL: any). */
static const tc_backend_info *listed_find(const char *name, const char *path_part) {
  list_refresh();
  for (int i = 0; i < n_listed; i++)
    if (!strcmp(listed[i].name, name) && (!path_part || strstr(listed[i].path, path_part))) return &listed[i];
  return NULL;
}

static const tc_backend_info *listed_expect(const char *name) {
  const tc_backend_info *b = listed_find(name, NULL);
  cr_assert_not_null(b, "backend '%s' is not listed", name);
  return b;
}

#define assert_contains(hay, needle)                                                                                   \
  cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle), (hay))

/* ---------------------------------------------------------------- files that are not plugins */

Test(registry, text_file_named_so_is_listed_not_loaded) {
  const char *dir = dir_new("p");
  text_file_add(dir, "broken.so", "this is not an ELF file\n");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/broken.so", dir);
  const tc_backend_info *b = listed_expect("broken");
  cr_assert_not(b->available);
  cr_assert_str_eq(b->path, path);
  assert_contains(b->reason, "not loaded: not a shared object");
  /* The host carried on: the good plugin next to it works. */
  cr_assert(listed_expect("old_minor")->available);
  cr_assert_not_null(backend_find("old_minor", NULL), "%s", tc_last_error());
}

/* A plugin file cut short maps segments past its end: dlopen would fault (SIGBUS) touching
 * them. Every cut is listed with a reason instead, and the host keeps working. */
Test(registry, truncated_plugin_files_never_reach_dlopen) {
  char from[PATH_MAX];
  snprintf(from, sizeof from, "%s/old_minor.so", TC_TEST_PLUGIN_DIR);
  FILE *f = fopen(from, "rb");
  cr_assert_not_null(f);
  static unsigned char whole[1 << 20];
  size_t size = fread(whole, 1, sizeof whole, f);
  fclose(f);
  cr_assert_gt(size, 4096);
  const char *dir = dir_new("p");
  plugin_add(dir, "new_minor");
  const int cuts = 24;
  for (int i = 0; i < cuts; i++) {
    char name[64], path[PATH_MAX];
    snprintf(name, sizeof name, "cut%02d.so", i);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *o = fopen(path, "wb");
    cr_assert_not_null(o);
    size_t n = size * (size_t)i / (size_t)cuts + (i % 3) * 7; /* odd sizes too */
    fwrite(whole, 1, n, o);
    fclose(o);
  }
  plugin_path_use(dir);
  /* A cut that only loses what is not loaded (debug info, section headers) still loads, under
   * the plugin's own name; every other one is refused by the file check, before dlopen. */
  int refused = 0;
  for (int i = 0; i < cuts; i++) {
    char name[64];
    snprintf(name, sizeof name, "cut%02d", i);
    const tc_backend_info *b = listed_find(name, NULL);
    if (!b) continue;
    cr_assert_not(b->available);
    cr_assert(strstr(b->reason, "not loaded:") != NULL, "%s: refused by the file check, not by dlopen: %s", name,
              b->reason);
    refused++;
  }
  cr_assert_geq(refused, cuts / 3, "most cuts lose loaded segments (%d of %d refused)", refused, cuts);
  cr_assert(listed_expect("new_minor")->available, "the host carried on");
}

/* Plugins that crash, abort, exit or hang while loading or probing: the registry's child process
 * (tc-plugin-probe) takes it, the plugin is listed with what happened, the host carries on. */
Test(registry, plugins_that_crash_abort_exit_or_hang_never_reach_the_host) {
  const char *dir = dir_new("p");
  plugin_add(dir, "crash_probe");
  plugin_add(dir, "abort_ctor");
  plugin_add(dir, "exit_query");
  plugin_add(dir, "hang_probe");
  plugin_add(dir, "old_minor");
  setenv("TC_PLUGIN_PROBE_TIMEOUT", "1", 1);
  plugin_path_use(dir);
  assert_contains(listed_expect("crash_probe")->reason, "probe crashed with SIGSEGV");
  assert_contains(listed_expect("abort_ctor")->reason, "probe crashed with SIGABRT");
  assert_contains(listed_expect("exit_query")->reason, "ended the process while loading or probing (exit status 3");
  assert_contains(listed_expect("hang_probe")->reason, "probe timed out after 1 s");
  const char *bad[] = {"crash_probe", "abort_ctor", "exit_query", "hang_probe"};
  for (int i = 0; i < 4; i++) cr_assert_not(listed_expect(bad[i])->available);
  cr_assert(listed_expect("old_minor")->available, "the host carried on");
  cr_assert_not_null(backend_find("old_minor", NULL), "%s", tc_last_error());
}

/* A file that passed the child once is remembered by its identity: later scans, in this
 * process or another with the same cache, do not spawn the child again. */
Test(registry, a_good_probe_is_remembered_by_file_identity) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  char cache[512];
  snprintf(cache, sizeof cache, "%s/cache", test_root);
  setenv("TC_CACHE_DIR", cache, 1);
  plugin_path_use(dir);
  cr_assert(listed_expect("old_minor")->available);
  char entries[600];
  snprintf(entries, sizeof entries, "%s/registry", cache);
  DIR *d = opendir(entries);
  cr_assert_not_null(d, "the probe's verdict is stored under %s", entries);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".probe") != NULL;
  closedir(d);
  cr_assert_eq(n, 1);
  /* A helper that cannot run: the remembered verdict is used, the plugin still loads. */
  setenv("TC_PLUGIN_PROBE", "/bin/false", 1);
  plugin_path_use(dir);
  cr_assert(listed_expect("old_minor")->available, "%s", listed_expect("old_minor")->reason);
}

Test(registry, plugin_for_another_machine_is_named) {
  char from[PATH_MAX];
  snprintf(from, sizeof from, "%s/old_minor.so", TC_TEST_PLUGIN_DIR);
  FILE *f = fopen(from, "rb");
  cr_assert_not_null(f);
  static unsigned char whole[1 << 20];
  size_t size = fread(whole, 1, sizeof whole, f);
  fclose(f);
  whole[18] = 183, whole[19] = 0; /* e_machine: aarch64 */
  if (TC_TEST_HOST_IS_AARCH64) whole[18] = 62;
  const char *dir = dir_new("p");
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/foreign.so", dir);
  FILE *o = fopen(path, "wb");
  fwrite(whole, 1, size, o);
  fclose(o);
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("foreign");
  cr_assert_not(b->available);
  assert_contains(b->reason, "built for");
  assert_contains(b->reason, "this host is");
}

Test(registry, shared_object_without_entry_symbol) {
  const char *dir = dir_new("p");
  plugin_add(dir, "nosym");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("nosym");
  cr_assert_not(b->available);
  assert_contains(b->reason, "no symbol tc_plugin_query");
  cr_assert_null(backend_find("nosym", NULL));
  assert_contains(tc_last_error(), "no symbol tc_plugin_query");
}

Test(registry, non_plugin_files_are_listed_with_why) {
  const char *dir = dir_new("p");
  text_file_add(dir, "README.txt", "not a candidate\n");
  text_file_add(dir, ".hidden.so", "not a candidate either\n");
  char sub[PATH_MAX + 16], fifo[PATH_MAX + 16], dangling[PATH_MAX + 16];
  snprintf(sub, sizeof sub, "%s/subdir.so", dir);
  cr_assert_eq(mkdir(sub, 0755), 0);
  snprintf(fifo, sizeof fifo, "%s/pipe.so", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  snprintf(dangling, sizeof dangling, "%s/gone.so", dir);
  cr_assert_eq(symlink("/nonexistent/tc-gone.so", dangling), 0);
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  list_refresh();
  cr_assert_eq(n_listed, 4, "old_minor and the three special files, got %d entries", n_listed);
  cr_assert(listed_expect("old_minor")->available);
  assert_contains(listed_expect("subdir")->reason, "not loaded: not a regular file");
  assert_contains(listed_expect("pipe")->reason, "not loaded: not a regular file");
  assert_contains(listed_expect("gone")->reason, "not loaded: cannot open: No such file or directory");
}

/* ---------------------------------------------------------------- version negotiation */

Test(registry, wrong_major_that_says_so) {
  const char *dir = dir_new("p");
  plugin_add(dir, "wrong_major");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("wrong_major");
  cr_assert_not(b->available);
  assert_contains(b->reason, "ABI major mismatch");
  char want[96];
  snprintf(want, sizeof want, "built for ABI %d.x, the host offers %d.%d", TC_ABI_MAJOR + 1, TC_ABI_MAJOR, TC_ABI_MINOR);
  assert_contains(b->reason, want); /* the plugin's own words */
}

Test(registry, abi1_plugin_is_listed_not_called_into) {
  const char *dir = dir_new("p");
  plugin_add(dir, "abi1_plugin");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("abi1_plugin");
  cr_assert_not(b->available);
  assert_contains(b->reason, "built for ABI 1");
  char words[96];
  snprintf(words, sizeof words, "abi1_plugin: built for tc ABI 1.x, host speaks %d.%d", TC_ABI_MAJOR, TC_ABI_MINOR);
  assert_contains(b->reason, words); /* it read the host's version at ABI 1's offsets */
  cr_assert(listed_expect("old_minor")->available, "the host carried on");
}

Test(registry, wrong_major_in_the_table) {
  const char *dir = dir_new("p");
  plugin_add(dir, "other_major");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("other_major");
  cr_assert_not(b->available);
  char want[96];
  snprintf(want, sizeof want, "ABI major mismatch: plugin ABI %d.%d, host ABI %d.%d", TC_ABI_MAJOR + 7, TC_ABI_MINOR,
           TC_ABI_MAJOR, TC_ABI_MINOR);
  assert_contains(b->reason, want);
  cr_assert_null(backend_find("other_major", NULL));
}

Test(registry, table_too_small_for_required_entries) {
  const char *dir = dir_new("p");
  plugin_add(dir, "small_table");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("small_table");
  cr_assert_not(b->available);
  assert_contains(b->reason, "too small");
  char need[64];
  snprintf(need, sizeof need, "need %zu bytes", TC_STRUCT_SIZE(tc_plugin_api, buffer_read));
  assert_contains(b->reason, need);
}

Test(registry, null_required_entry) {
  const char *dir = dir_new("p");
  plugin_add(dir, "null_entry");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("null_entry");
  cr_assert_not(b->available);
  assert_contains(b->reason, "required entry 'synchronize' is NULL");
}

Test(registry, old_minor_without_optional_entries_works) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  cr_assert(listed_expect("old_minor")->available);
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_not_null(be->ctx);
  cr_assert_eq(be->api->struct_size, TC_STRUCT_SIZE(tc_plugin_api, buffer_read));
  /* The plugin scribbled past its table (see old_minor.c); none of it may be taken. */
  cr_assert_null(be->api->flush);
  cr_assert_null(be->api->executable_info);
  cr_assert_eq(backend_synchronize(be), TC_OK);
  cr_assert_str_eq(listed_expect("old_minor")->version, "0.0.1");
  cr_assert_str_eq(be->plugin->path, listed_expect("old_minor")->path);
}

Test(registry, new_minor_with_larger_table_works) {
  const char *dir = dir_new("p");
  plugin_add(dir, "new_minor");
  plugin_path_use(dir);
  tc_backend *be = backend_find("new_minor", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_not_null(be->ctx);
  cr_assert_eq(be->api->abi_minor, TC_ABI_MINOR + 1);
  cr_assert_eq(be->api->struct_size, sizeof(tc_plugin_api), "the host keeps what it knows");
  cr_assert_not_null(be->api->executable_info);
  backend_exe_info info;
  backend_executable_info(be, (tc_executable *)be, &info);
  cr_assert_str_eq(info.source, "/* new_minor */");
  cr_assert(backend_accepts(be, TC_PRIM_EXP, TC_F64, TC_KERNEL_LOOP), "an unknown extension type is skipped");
  cr_assert_eq(backend_synchronize(be), TC_OK);
}

/* ---------------------------------------------------------------- probe and init */

Test(registry, probe_says_unavailable) {
  const char *dir = dir_new("p");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("unavailable");
  cr_assert_not(b->available);
  assert_contains(b->reason, "probe: no frobnicator attached");
  cr_assert_null(backend_find("unavailable", NULL));
  cr_assert_eq(tc_last_status(), TC_ERR_UNAVAILABLE);
  assert_contains(tc_last_error(), "no frobnicator attached");
}

Test(registry, init_failure_makes_backend_unavailable) {
  const char *dir = dir_new("p");
  plugin_add(dir, "init_fails");
  plugin_path_use(dir);
  cr_assert(listed_expect("init_fails")->available, "probe alone cannot know init will fail");
  cr_assert_null(backend_find("init_fails", NULL));
  assert_contains(tc_last_error(), "init failed");
  assert_contains(tc_last_error(), "the device fell off the bus");
  const tc_backend_info *b = listed_expect("init_fails");
  cr_assert_not(b->available);
  assert_contains(b->reason, "the device fell off the bus");
  /* And it stays that way, with the same reason. */
  cr_assert_null(backend_find("init_fails", NULL));
  assert_contains(tc_last_error(), "the device fell off the bus");
}

Test(registry, probe_runs_lazily_and_init_on_first_find) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  setenv("TC_PLUGIN_PATH", dir, 1); /* no rescan: first use must scan by itself */
  const tc_backend_info *b = listed_expect("old_minor");
  cr_assert(b->available);
  cr_assert_eq(b->score, 20);
  cr_assert_eq(b->n_devices, 1);
  cr_assert_str_eq(b->devices[0].name, "test cpu");
  cr_assert_eq(b->devices[0].type, TC_DEVICE_CPU);
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be);
  cr_assert_eq(backend_find("old_minor", NULL), be, "one context per set of context options");
}

/* Options reach init: the device index and the thread count are context-scope options of
 * two_devices (tests/plugins/two_devices.c), whose context keeps what init got. */
typedef struct two_devices_ctx {
  int32_t device, threads;
} two_devices_ctx;

Test(registry, context_options_reach_init) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  tc_options *o = options_parse("two_devices.device=1,two_devices.threads=3");
  cr_assert_not_null(o, "%s", tc_last_error());
  tc_backend *be = backend_find("two_devices", o);
  cr_assert_not_null(be, "%s", tc_last_error());
  const two_devices_ctx *c = (const two_devices_ctx *)be->ctx;
  cr_assert_eq(c->device, 1, "init got device 1");
  cr_assert_eq(c->threads, 3, "init got 3 threads");
  cr_assert_str_eq(be->context_options, "two_devices.device=1,two_devices.threads=3");
  /* The same options find the same context; others get their own. */
  cr_assert_eq(backend_find("two_devices", o), be);
  tc_backend *dflt = backend_find("two_devices", NULL);
  cr_assert_not_null(dflt);
  cr_assert_neq(dflt, be, "default options, another context");
  cr_assert_eq(((const two_devices_ctx *)dflt->ctx)->device, 0);
  cr_assert_eq(((const two_devices_ctx *)dflt->ctx)->threads, 1, "the declared default");
  /* A compile-scope option does not make a new context. */
  tc_options *tile = options_parse("two_devices.tile=128");
  cr_assert_eq(backend_find("two_devices", tile), dflt);
  options_free(tile);
  options_free(o);
}

static tc_tensor *identity_fn(tc_tensor *x) { return tc_retain(x); }

/* The same through the public API: tc_compile_options.options reach the context's init. */
Test(registry, compile_options_reach_init_through_tc_compile) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  tc_compile_options co = {.struct_size = sizeof co, .backend = "two_devices",
                           .options = "two_devices.device=1,two_devices.threads=3"};
  tc_compiled *c = tc_compile(TC_FN(identity_fn), 1, &co);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_options *o = options_parse(co.options);
  tc_backend *be = backend_find("two_devices", o); /* the context tc_compile made */
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_eq(((const two_devices_ctx *)be->ctx)->device, 1);
  cr_assert_eq(((const two_devices_ctx *)be->ctx)->threads, 3);
  options_free(o);
  tc_compiled_free(c);
  co.options = "two_devices.threads=99";
  cr_assert_null(tc_compile(TC_FN(identity_fn), 1, &co));
  assert_contains(tc_last_error(), "two_devices.threads=99");
  assert_contains(tc_last_error(), "valid keys: two_devices.device, two_devices.threads, two_devices.tile");
}

Test(registry, bad_option_value_names_key_backend_and_valid_keys) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  tc_options *o = options_parse("two_devices.device=5");
  cr_assert_null(backend_find("two_devices", o));
  assert_contains(tc_last_error(), "two_devices.device=5");
  assert_contains(tc_last_error(), "backend 'two_devices'");
  assert_contains(tc_last_error(), "valid keys: two_devices.device, two_devices.threads, two_devices.tile");
  options_free(o);
  o = options_parse("two_devices.device=zero");
  cr_assert_null(backend_find("auto", o));
  assert_contains(tc_last_error(), "two_devices.device=zero");
  options_free(o);
  o = options_parse("two_devices.tile=7");
  cr_assert_null(backend_find("two_devices", o));
  assert_contains(tc_last_error(), "two_devices.tile=7");
  assert_contains(tc_last_error(), "64|128");
  options_free(o);
  cr_assert_not_null(backend_find("two_devices", NULL), "a bad option does not spoil the backend: %s",
                     tc_last_error());
  cr_assert(listed_expect("two_devices")->available);
}

Test(registry, unknown_option_key_lists_valid_keys) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  tc_options *o = options_parse("two_devices.thread=2");
  cr_assert_null(backend_find("two_devices", o));
  assert_contains(tc_last_error(), "option 'two_devices.thread': backend 'two_devices' has no such option");
  assert_contains(tc_last_error(), "valid keys: two_devices.device, two_devices.threads, two_devices.tile");
  options_free(o);
  /* A prefix no backend owns, in the call's own options. */
  o = options_parse("nosuch.knob=1");
  cr_assert_null(backend_find("two_devices", o));
  assert_contains(tc_last_error(), "no backend takes options with prefix 'nosuch'");
  options_free(o);
  /* In $TC_OPTIONS it may name a backend this machine lacks. */
  setenv("TC_OPTIONS", "nosuch.knob=1", 1);
  cr_assert_not_null(backend_find("two_devices", NULL), "%s", tc_last_error());
  unsetenv("TC_OPTIONS");
  cr_assert_null(options_parse("two_devices.device"));
  assert_contains(tc_last_error(), "is not key=value");
}

Test(registry, options_last_setting_wins_call_over_environment) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  setenv("TC_OPTIONS", "two_devices.threads=4, two_devices.device = 1", 1);
  tc_options *o = options_parse("two_devices.threads=2,two_devices.threads=5");
  tc_backend *be = backend_find("two_devices", o);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_eq(((const two_devices_ctx *)be->ctx)->threads, 5, "the call's last setting wins");
  cr_assert_eq(((const two_devices_ctx *)be->ctx)->device, 1, "the environment fills the rest");
  options_free(o);
  unsetenv("TC_OPTIONS");
}

/* ---------------------------------------------------------------- lookup */

Test(registry, auto_picks_highest_score) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");   /* 20 */
  plugin_add(dir, "two_devices"); /* 30 */
  plugin_add(dir, "new_minor");   /* 60 */
  plugin_add(dir, "unavailable"); /* not available at all */
  plugin_path_use(dir);
  const char *name = tc_backend_auto();
  cr_assert_not_null(name, "%s", tc_last_error());
  cr_assert_str_eq(name, "new_minor");
  tc_backend *be = backend_find("auto", NULL);
  cr_assert_not_null(be);
  cr_assert_str_eq(be->name, "new_minor");
  cr_assert_eq(backend_find(NULL, NULL), be, "NULL means auto");
}

Test(registry, auto_passes_over_a_backend_whose_init_fails) {
  const char *dir = dir_new("p");
  plugin_add(dir, "init_fails"); /* 90, but init fails */
  plugin_add(dir, "new_minor");  /* 60 */
  plugin_add(dir, "old_minor");  /* 20 */
  plugin_path_use(dir);
  tc_backend *be = backend_find("auto", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_str_eq(be->name, "new_minor");
  cr_assert_str_eq(tc_backend_auto(), "new_minor");
  cr_assert_not(listed_expect("init_fails")->available);
}

/* tc_backend_open makes the context the later calls find; failures name the backend. */
Test(registry, backend_open_makes_the_context_once) {
  const char *dir = dir_new("p");
  plugin_add(dir, "new_minor");
  plugin_add(dir, "init_fails");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  cr_assert_eq(tc_backend_open("new_minor"), TC_OK, "%s", tc_last_error());
  tc_backend *be = backend_find("new_minor", NULL);
  cr_assert_not_null(be);
  cr_assert_eq(tc_backend_open("new_minor"), TC_OK);
  cr_assert_eq(backend_find("new_minor", NULL), be, "opening again makes no second context");
  cr_assert_eq(tc_backend_open("host"), TC_OK);
  cr_assert_eq(tc_backend_open("eager"), TC_OK);
  cr_assert_eq(tc_backend_open(NULL), TC_ERR_INVALID_ARGUMENT);
  assert_contains(tc_last_error(), "tc_backend_open: name is NULL");
  cr_assert_neq(tc_backend_open("no_such_backend"), TC_OK);
  assert_contains(tc_last_error(), "unknown backend 'no_such_backend'");
  cr_assert_neq(tc_backend_open("init_fails"), TC_OK);
  assert_contains(tc_last_error(), "init_fails");
}

Test(registry, auto_with_nothing_available) {
  const char *dir = dir_new("p");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  cr_assert_null(tc_backend_auto());
  assert_contains(tc_last_error(), "no backend is available");
  cr_assert_null(backend_find("auto", NULL));
}

Test(registry, unknown_name_lists_known_names) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_add(dir, "new_minor");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  cr_assert_null(backend_find("no-such-backend", NULL));
  const char *err = tc_last_error();
  assert_contains(err, "unknown backend 'no-such-backend'");
  assert_contains(err, "old_minor");
  assert_contains(err, "new_minor");
  assert_contains(err, "unavailable");
}

Test(registry, eager_backend_from_environment) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  setenv("TC_EAGER_BACKEND", "old_minor", 1);
  tc_backend *be = backend_eager();
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_str_eq(be->name, "old_minor");
  unsetenv("TC_EAGER_BACKEND");
  cr_assert_null(backend_eager(), "no debug-eager in this directory");
  assert_contains(tc_last_error(), "debug-eager");
}

Test(registry, same_name_twice_first_wins) {
  const char *first = dir_new("first");
  const char *second = dir_new("second");
  plugin_add(first, "old_minor");
  plugin_add(second, "old_minor");
  char path[3 * PATH_MAX + 3];
  snprintf(path, sizeof path, "%s:%s:%s", first, second, first); /* a directory twice is harmless */
  plugin_path_use(path);
  list_refresh();
  cr_assert_eq(n_listed, 2);
  const tc_backend_info *winner = listed_find("old_minor", first);
  const tc_backend_info *shadowed = listed_find("old_minor", second);
  cr_assert_not_null(winner);
  cr_assert_not_null(shadowed);
  cr_assert(winner->available);
  cr_assert_not(shadowed->available);
  assert_contains(shadowed->reason, "shadowed by");
  assert_contains(shadowed->reason, first);
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be);
  assert_contains(be->plugin->path, first);
}

Test(registry, rescan_rereads_plugin_path) {
  const char *a = dir_new("a");
  const char *b = dir_new("b");
  plugin_add(a, "old_minor");
  plugin_add(b, "new_minor");
  plugin_path_use(a);
  tc_backend *old = backend_find("old_minor", NULL);
  cr_assert_not_null(old);
  plugin_path_use(b);
  cr_assert_null(listed_find("old_minor", NULL));
  cr_assert_not_null(listed_find("new_minor", NULL));
  /* A backend in use survives the rescan that forgot it. */
  cr_assert_str_eq(old->name, "old_minor");
  cr_assert_eq(backend_synchronize(old), TC_OK);
}

/* ---------------------------------------------------------------- in-process registration */

static int inproc_inits;

static const tc_device_desc inproc_device = {sizeof(tc_device_desc), "in-process cpu", TC_DEVICE_CPU, 0};

static tc_error *inproc_probe(tc_probe_args *a) {
  a->available = true;
  a->score = 70;
  a->n_devices = 1;
  a->devices = &inproc_device;
  a->device_size = sizeof inproc_device;
  return NULL;
}

static tc_error *inproc_init(tc_init_args *a) {
  inproc_inits++;
  a->ctx = (tc_plugin_ctx *)&inproc_inits;
  return NULL;
}

static void inproc_release(const tc_release_args *a) {
  (void)a;
}
static tc_error *inproc_sync(const tc_queue_args *a) {
  (void)a;
  return NULL;
}
static void inproc_exe_free(const tc_executable_free_args *a) {
  (void)a;
}
static const tc_host_api *inproc_host;
static tc_error *inproc_compile(tc_compile_args *a) {
  (void)a;
  return inproc_host->error_new(inproc_host->host_ctx, TC_ERR_UNSUPPORTED, "inproc: compiles nothing");
}
static tc_error *inproc_run_graph(const tc_run_graph_args *a) {
  (void)a;
  return inproc_host->error_new(inproc_host->host_ctx, TC_ERR_UNSUPPORTED, "inproc: runs nothing");
}

static tc_error *inproc_fill(tc_query_args *q, const char *name, const char *version) {
  inproc_host = q->host;
  tc_plugin_api a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a < q->table_size ? sizeof a : q->table_size;
  a.abi_major = TC_ABI_MAJOR;
  a.abi_minor = TC_ABI_MINOR;
  a.name = name;
  a.version = version;
  a.description = "registered by test_registry.c";
  a.handoff = TC_HANDOFF_GRAPH;
  a.memory = TC_MEMORY_HOST;
  a.option_prefix = "inproc";
  a.probe = inproc_probe;
  a.init = inproc_init;
  a.release = inproc_release;
  a.compile = inproc_compile;
  a.run_graph = inproc_run_graph;
  a.synchronize = inproc_sync;
  a.executable_free = inproc_exe_free;
  memcpy(q->table, &a, a.struct_size);
  return NULL;
}

static tc_error *inproc_query_v1(tc_query_args *q) {
  return inproc_fill(q, "inproc", "1.0");
}
static tc_error *inproc_query_v2(tc_query_args *q) {
  return inproc_fill(q, "inproc", "2.0");
}
static tc_error *inproc_query_named_old_minor(tc_query_args *q) {
  return inproc_fill(q, "old_minor", "9.9");
}
static tc_error *inproc_query_wrong_major(tc_query_args *q) {
  return q->host->error_new(q->host->host_ctx, TC_ERR_VERSION, "inproc: needs ABI 3");
}

Test(registry, in_process_registration) {
  const char *dir = dir_new("p");
  plugin_add(dir, "new_minor");
  plugin_path_use(dir);
  cr_assert_eq(tc_backend_register(inproc_query_v1), TC_OK, "%s", tc_last_error());
  const tc_backend_info *b = listed_expect("inproc");
  cr_assert(b->available);
  cr_assert_str_eq(b->path, "(in-process)");
  cr_assert_str_eq(b->version, "1.0");
  cr_assert_eq(b->score, 70);
  cr_assert_str_eq(tc_backend_auto(), "inproc", "70 beats new_minor's 60");
  tc_backend *be = backend_find("inproc", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_null(be->plugin->dl);
  cr_assert_eq(inproc_inits, 1);
  cr_assert_eq((void *)be->ctx, (void *)&inproc_inits);

  /* Re-registering the name replaces the entry. */
  int before = tc_backend_list(NULL, 0);
  cr_assert_eq(tc_backend_register(inproc_query_v2), TC_OK);
  cr_assert_eq(tc_backend_list(NULL, 0), before);
  cr_assert_str_eq(listed_expect("inproc")->version, "2.0");
  cr_assert_str_eq(backend_find("inproc", NULL)->plugin->version, "2.0");
  cr_assert_eq(inproc_inits, 2, "the replacement gets its own context");

  /* In-process registrations survive a rescan of the disk. */
  cr_assert_eq(tc_backend_rescan(), TC_OK);
  cr_assert_not_null(listed_find("inproc", NULL));
  cr_assert_not_null(listed_find("new_minor", NULL));
}

Test(registry, in_process_shadows_plugin_of_same_name) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  cr_assert_eq(tc_backend_register(inproc_query_named_old_minor), TC_OK, "%s", tc_last_error());
  const tc_backend_info *disk = listed_find("old_minor", dir);
  cr_assert_not_null(disk);
  cr_assert_not(disk->available);
  assert_contains(disk->reason, "shadowed by (in-process)");
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be);
  cr_assert_str_eq(be->plugin->path, "(in-process)");
  cr_assert_str_eq(be->plugin->version, "9.9");
}

Test(registry, in_process_registration_with_wrong_major_is_refused) {
  const char *dir = dir_new("p");
  plugin_path_use(dir);
  cr_assert_eq(tc_backend_register(inproc_query_wrong_major), TC_ERR_VERSION);
  assert_contains(tc_last_error(), "inproc: needs ABI 3");
  cr_assert_eq(tc_backend_list(NULL, 0), 0);
  cr_assert_eq(tc_backend_register(NULL), TC_ERR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- host services */

Test(registry, host_errors_and_logs) {
  setenv("TC_LOGS", "output_code", 1);
  cr_redirect_stderr();
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be);
  const tc_host_api *h = &be->plugin->host;
  cr_assert_eq(h->struct_size, sizeof(tc_host_api));
  cr_assert_eq(h->abi_major, TC_ABI_MAJOR);
  tc_error *e = h->error_new(h->host_ctx, TC_ERR_COMPILE, "old_minor: kernel 3 does not fit");
  cr_assert_eq(h->error_code(h->host_ctx, e), TC_ERR_COMPILE);
  cr_assert_str_eq(h->error_message(h->host_ctx, e), "old_minor: kernel 3 does not fit");
  cr_assert_eq(host_error_take(e, "old_minor"), TC_ERR_COMPILE);
  cr_assert_str_eq(tc_last_error(), "old_minor: kernel 3 does not fit", "named once, not twice");
  e = h->error_new(h->host_ctx, TC_ERR_INVALID_ARGUMENT, "no such kernel");
  cr_assert_eq(host_error_take(e, "old_minor"), TC_ERR_INVALID_ARGUMENT);
  cr_assert_str_eq(tc_last_error(), "old_minor: no such kernel");
  h->error_free(h->host_ctx, h->error_new(h->host_ctx, TC_ERR_INTERNAL, "dropped"));
  cr_assert(h->log_enabled(h->host_ctx, "output_code"));
  cr_assert_not(h->log_enabled(h->host_ctx, "graph"));
  h->log(h->host_ctx, TC_LOG_INFO, "graph", "not shown");
  h->log(h->host_ctx, TC_LOG_INFO, "output_code", "kernel fused_0\nvoid fused_0(void) {}\n");
  h->log(h->host_ctx, TC_LOG_WARN, "output_code", "slow path");
  fflush(stderr);
  cr_assert_stderr_eq_str("[tc:output_code] old_minor: kernel fused_0\nvoid fused_0(void) {}\n"
                          "[tc:output_code] old_minor: warning: slow path\n");
}

Test(registry, cache_dir_per_plugin) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_add(dir, "new_minor");
  plugin_path_use(dir);
  char base[512], want[1024];
  snprintf(base, sizeof base, "%s/cache/deep", test_root);
  setenv("TC_CACHE_DIR", base, 1);
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be);
  snprintf(want, sizeof want, "%s/old_minor", base);
  cr_assert_str_eq(be->plugin->cache_dir, want);
  struct stat st;
  cr_assert(stat(want, &st) == 0 && S_ISDIR(st.st_mode), "created on demand, parents included");

  setenv("TC_CACHE_DIR", "off", 1);
  be = backend_find("new_minor", NULL);
  cr_assert_not_null(be);
  cr_assert_str_eq(be->plugin->cache_dir, "", "TC_CACHE_DIR=off turns caching off");
}

Test(registry, cache_dir_falls_back_to_xdg_then_home) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_add(dir, "new_minor");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  char xdg[512], home[512], want[1024];
  snprintf(xdg, sizeof xdg, "%s/xdg", test_root);
  snprintf(home, sizeof home, "%s/home", test_root);
  unsetenv("TC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", xdg, 1);
  setenv("HOME", home, 1);
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  snprintf(want, sizeof want, "%s/tc/old_minor", xdg);
  cr_assert_str_eq(be->plugin->cache_dir, want);

  unsetenv("XDG_CACHE_HOME");
  be = backend_find("new_minor", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  snprintf(want, sizeof want, "%s/.cache/tc/new_minor", home);
  cr_assert_str_eq(be->plugin->cache_dir, want);

  /* A base that cannot hold a directory: no cache, and no failure. */
  char file[512];
  snprintf(file, sizeof file, "%s/plainfile", test_root);
  text_file_add(test_root, "plainfile", "x");
  setenv("TC_CACHE_DIR", file, 1);
  be = backend_find("two_devices", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_str_eq(be->plugin->cache_dir, "");
}

/* ---------------------------------------------------------------- threads */

static void *thread_find(void *arg) {
  (void)arg;
  tc_backend *be = NULL;
  for (int i = 0; i < 200; i++) {
    tc_backend_info infos[8];
    if (tc_backend_list(infos, 8) != 2) return NULL;
    be = backend_find(i % 2 ? "old_minor" : "auto", NULL);
    if (!be) return NULL;
  }
  return be;
}

Test(registry, concurrent_first_use) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_add(dir, "new_minor");
  setenv("TC_PLUGIN_PATH", dir, 1); /* no rescan: the threads race to the first scan */
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    cr_assert_eq(pthread_create(&t[i], NULL, thread_find, NULL), 0);
  void *got[4];
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], &got[i]);
  for (int i = 0; i < 4; i++) {
    cr_assert_not_null(got[i], "thread %d failed", i);
    cr_assert_eq(got[i], got[0], "every thread sees the same backend");
  }
  cr_assert_str_eq(((tc_backend *)got[0])->name, "old_minor");
}

/* ---------------------------------------------------------------- the build tree */

/* ---------------------------------------------------------------- tc list-backends */

/* A small JSON checker: true when s is exactly one valid JSON value. */
static const char *json_value(const char *s);
static const char *json_ws(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
    s++;
  return s;
}
static const char *json_string_end(const char *s) {
  if (*s++ != '"') return NULL;
  for (; *s && *s != '"'; s++) {
    if ((unsigned char)*s < 0x20) return NULL;
    if (*s == '\\') {
      s++;
      if (*s == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i]) return NULL;
        s += 4;
      } else if (!*s || !strchr("\"\\/bfnrt", *s)) {
        return NULL;
      }
    }
  }
  return *s == '"' ? s + 1 : NULL;
}
static const char *json_value(const char *s) {
  s = json_ws(s);
  if (*s == '"') return json_string_end(s);
  if (*s == '{' || *s == '[') {
    char close = *s == '{' ? '}' : ']';
    s = json_ws(s + 1);
    if (*s == close) return s + 1;
    for (;;) {
      if (close == '}') {
        s = json_string_end(json_ws(s));
        if (!s) return NULL;
        s = json_ws(s);
        if (*s++ != ':') return NULL;
      }
      s = json_value(s);
      if (!s) return NULL;
      s = json_ws(s);
      if (*s == close) return s + 1;
      if (*s++ != ',') return NULL;
    }
  }
  if (!strncmp(s, "true", 4)) return s + 4;
  if (!strncmp(s, "false", 5)) return s + 5;
  if (!strncmp(s, "null", 4)) return s + 4;
  char *end;
  strtod(s, &end);
  return end > s ? end : NULL;
}
static bool json_valid(const char *s) {
  const char *end = json_value(s);
  return end && !*json_ws(end);
}

/* Runs a command, returns its exit status; its stdout goes to out. */
static int command_run(const char *cmd, char *out, size_t cap) {
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(registry, cli_list_backends_shows_broken_plugins) {
  const char *dir = dir_new("p");
  text_file_add(dir, "broken.so", "garbage\n");
  plugin_add(dir, "wrong_major");
  plugin_add(dir, "old_minor");
  setenv("TC_PLUGIN_PATH", dir, 1);
  static char out[65536];
  char cmd[PATH_MAX];
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' list-backends", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "NAME");
  assert_contains(out, "REASON");
  assert_contains(out, "broken");
  assert_contains(out, "not a shared object");
  assert_contains(out, "wrong_major");
  assert_contains(out, "ABI major mismatch");
  assert_contains(out, "old_minor");
  assert_contains(out, "test cpu (cpu)");

  snprintf(cmd, sizeof cmd, "'%s/bin/tc' list-backends --json", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  cr_assert(json_valid(out), "not valid JSON: %s", out);
  assert_contains(out, "\"name\": \"broken\"");
  assert_contains(out, "\"name\": \"wrong_major\"");
  assert_contains(out, "\"available\": false");
  assert_contains(out, "\"available\": true");
  assert_contains(out, "ABI major mismatch");

  snprintf(cmd, sizeof cmd, "'%s/bin/tc' list-backends --bogus 2>/dev/null", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 2);
}

/* TC_LOGS: a misspelt category is a warning naming the valid ones (it would otherwise show
 * nothing, silently), help lists them, and neither stops the command. */
Test(registry, tc_logs_unknown_name_and_help) {
  static char out[65536];
  char cmd[PATH_MAX + 96];
  snprintf(cmd, sizeof cmd, "TC_LOGS=grpah,recompiles '%s/bin/tc' list-backends 2>&1", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "[tc] TC_LOGS: 'grpah' is not a category tc logs under (valid: graph, guards, recompiles,");
  assert_contains(out, "perf_hints, all, help;");
  cr_assert_null(strstr(out, "'recompiles' is not"), "a known name was warned about: %s", out);
  snprintf(cmd, sizeof cmd, "TC_LOGS=help '%s/bin/tc' list-backends 2>&1", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "[tc] TC_LOGS categories (comma-separated): graph, guards, recompiles, graph_breaks, fusion,");
  cr_assert_null(strstr(out, "is not a category"), "help was warned about: %s", out);
}

/* Found next to libtc with no help from the environment: scan.c's dladdr names
 * lib/libtc.so.0 (the SONAME, a link to libtc.so.0.2.0) and the plugins are in lib/tc/plugins.
 * Asked through the CLI, which links libtc: this test executable links the core's objects, so
 * here dladdr names the executable (build_tree_env.c points the registry at the plugins). */
Test(registry, debug_eager_beside_libtc) {
  char plugin[PATH_MAX], want[PATH_MAX];
  snprintf(plugin, sizeof plugin, "%s/tc-debug-eager.so", TC_BUILD_PLUGIN_DIR);
  if (access(plugin, F_OK) != 0) cr_skip("%s is not built yet", plugin);
  cr_assert_not_null(realpath(plugin, want));
  unsetenv("TC_PLUGIN_PATH");
  unsetenv("TC_PLUGIN_DEFAULT_DIR");
  static char out[65536];
  char cmd[PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' list-backends --json", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  const char *entry = strstr(out, "{\"name\": \"debug-eager\", ");
  cr_assert_not_null(entry, "debug-eager not listed: %s", out);
  const char *end = strstr(entry, "\"reason\": ");
  cr_assert_not_null(end);
  char fields[4096];
  snprintf(fields, sizeof fields, "%.*s", (int)(end - entry), entry);
  assert_contains(fields, "\"available\": true");
  char path_field[PATH_MAX + 16];
  snprintf(path_field, sizeof path_field, "\"path\": \"%s\"", want);
  assert_contains(fields, path_field);
}

Test(registry, cli_version) {
  static char out[4096];
  char cmd[PATH_MAX], want[256];
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' --version", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  snprintf(want, sizeof want, "tc %s (plugin ABI %d.%d)\n", tc_version(), TC_ABI_MAJOR, TC_ABI_MINOR);
  cr_assert_str_eq(out, want);
}

Test(registry, json_checker_rejects_bad_json) {
  cr_assert(json_valid("[{\"a\": [1, -2.5e3, true, null, \"x\\n\\u00e9\"]}]"));
  cr_assert_not(json_valid("[{\"a\": 1,}]"));
  cr_assert_not(json_valid("[\"unterminated]"));
  cr_assert_not(json_valid("[1] 2"));
}

/* tc_synchronize: names the backend it cannot find, and is a no-op for host memory. */
Test(registry, synchronize_by_name) {
  cr_assert_eq(tc_synchronize(NULL), TC_ERR_INVALID_ARGUMENT);
  assert_contains(tc_last_error(), "tc_synchronize: name is NULL");
  cr_assert_neq(tc_synchronize("no-such-backend"), TC_OK);
  assert_contains(tc_last_error(), "unknown backend 'no-such-backend'");
  cr_assert_eq(tc_synchronize("host"), TC_OK);
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  cr_assert_eq(tc_synchronize("old_minor"), TC_OK, "%s", tc_last_error());
}

/* A cache directory others may write into could hold planted code: refused, with a warning,
 * and the backend runs uncached. */
Test(registry, cache_dir_writable_by_others_is_refused) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  char cache[512], plugin_dir[600];
  snprintf(cache, sizeof cache, "%s/shared-cache", test_root);
  cr_assert_eq(mkdir(cache, 0777), 0);
  snprintf(plugin_dir, sizeof plugin_dir, "%s/old_minor", cache);
  cr_assert_eq(mkdir(plugin_dir, 0700), 0);
  cr_assert_eq(chmod(plugin_dir, 0777), 0);
  setenv("TC_CACHE_DIR", cache, 1);
  plugin_path_use(dir);
  cr_redirect_stderr();
  tc_backend *be = backend_find("old_minor", NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_str_eq(be->plugin->cache_dir, "", "no cache in a directory others can write");
  fflush(stderr);
  FILE *f = cr_get_redirected_stderr();
  char text[1024] = "";
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  assert_contains(text, "may be written by others (mode 0777): refused");
}

/* `tc cache`: a compile fills the backend's directory; stats and list show it; clear empties it
 * and leaves what is not an entry. */
/* tc explain --svg renders the fused-group picture with Graphviz (skipped where dot is missing). */
Test(registry, cli_explain_svg) {
  if (system("command -v dot >/dev/null 2>&1") != 0) cr_skip_test("Graphviz's dot is not installed");
  const char *dir = dir_new("svg");
  unsetenv("TC_PLUGIN_DEFAULT_DIR");
  unsetenv("TC_PLUGIN_PATH");
  static char out[4096];
  char cmd[PATH_MAX + 256], path[PATH_MAX];
  snprintf(path, sizeof path, "%s/mlp.svg", dir);
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' explain mlp --backend inductor-cpu --size test --svg '%s' 2>&1", TC_BINARY_DIR, path);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "no %s: %s", path, out);
  static char svg[1 << 20];
  size_t n = fread(svg, 1, sizeof svg - 1, f);
  fclose(f);
  svg[n] = 0;
  assert_contains(svg, "<svg");
  assert_contains(svg, "kernel 0: matmul");
}

Test(registry, cli_cache_stats_list_clear) {
  const char *cache = dir_new("cache");
  setenv("TC_CACHE_DIR", cache, 1);
  unsetenv("TC_PLUGIN_DEFAULT_DIR"); /* the build's own plugins: inductor-cpu writes entries */
  unsetenv("TC_PLUGIN_PATH");
  static char out[65536];
  char cmd[PATH_MAX + 128];
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' run ln_gelu --backend inductor-cpu --iters 1 >/dev/null 2>&1", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "tc run failed");
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' cache", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "inductor-cpu");
  assert_contains(out, "registry");
  cr_assert_null(strstr(out, "inductor-cpu          0 entries"), "a compile left no entry: %s", out);
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' cache list inductor-cpu", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "inductor-cpu/");
  assert_contains(out, ".so ");
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' cache clear inductor-cpu", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  cr_assert_null(strstr(out, "removed 0 entries"), "output: %s", out);
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' cache stats inductor-cpu", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "inductor-cpu          0 entries");
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' cache stats no-such-backend 2>&1", TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 1, "output: %s", out);
  assert_contains(out, "no directory 'no-such-backend'");
  assert_contains(out, "there: ");
  unsetenv("TC_CACHE_DIR");
}

/* Four processes start at once on one empty cache directory, each compiling the same graphs
 * (inductor-cpu writes shared objects, the registry its probe records): every one must finish
 * and print the same checksum as a run with no cache at all, and the directory must then hold
 * entries a fifth process takes. Writers publish whole entries by rename, so a reader never sees
 * half of one. */
Test(registry, four_processes_on_one_empty_cache_agree, .timeout = 300) {
  const char *cache = dir_new("shared-cache");
  unsetenv("TC_PLUGIN_DEFAULT_DIR"); /* the build's own plugins */
  unsetenv("TC_PLUGIN_PATH");
  static char out[4][16384], ref[16384];
  char cmd[PATH_MAX + 256];
  snprintf(cmd, sizeof cmd,
           "TC_CACHE_DIR='%s/none' '%s/bin/tc' run mlp --backend inductor-cpu --size test --iters 1 2>&1 | grep checksum",
           test_root, TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, ref, sizeof ref), 0, "the reference run failed: %s", ref);
  cr_assert(strstr(ref, "checksum"), "no checksum: %s", ref);
  FILE *p[4];
  for (int i = 0; i < 4; i++) {
    snprintf(cmd, sizeof cmd,
             "TC_CACHE_DIR='%s' TC_LOGS=cache '%s/bin/tc' run mlp --backend inductor-cpu --size test --iters 1 2>&1", cache,
             TC_BINARY_DIR);
    p[i] = popen(cmd, "r"); /* all four running before any is read */
    cr_assert_not_null(p[i]);
  }
  for (int i = 0; i < 4; i++) {
    size_t n = fread(out[i], 1, sizeof out[i] - 1, p[i]);
    out[i][n] = 0;
    int st = pclose(p[i]);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d failed:\n%s", i, out[i]);
    const char *line = strstr(out[i], "checksum");
    cr_assert(line && !strncmp(line, strstr(ref, "checksum"), strcspn(strstr(ref, "checksum"), "\n")),
              "process %d disagrees with the uncached run:\n%s\nreference: %s", i, out[i], ref);
  }
  snprintf(cmd, sizeof cmd, "TC_CACHE_DIR='%s' TC_LOGS=cache '%s/bin/tc' run mlp --backend inductor-cpu --size test --iters 1 2>&1",
           cache, TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out[0], sizeof out[0]), 0, "output: %s", out[0]);
  assert_contains(out[0], "inductor-cpu: hit (mlp");
  const char *line = strstr(out[0], "checksum");
  cr_assert(line && !strncmp(line, strstr(ref, "checksum"), strcspn(strstr(ref, "checksum"), "\n")), "%s", out[0]);
}

/* `tc run --compile-async`: the first call runs eagerly while the compile goes on in the
 * background, and the checksum is the one of a plain compiled run. */
Test(registry, cli_run_compile_async, .timeout = 120) {
  const char *cache = dir_new("async-cache");
  unsetenv("TC_PLUGIN_DEFAULT_DIR");
  unsetenv("TC_PLUGIN_PATH");
  static char out[16384], ref[16384];
  char cmd[PATH_MAX + 256];
  snprintf(cmd, sizeof cmd, "TC_CACHE_DIR='%s/none' '%s/bin/tc' run mlp --backend inductor-cpu --size test --iters 1 2>&1",
           test_root, TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, ref, sizeof ref), 0, "the plain run failed: %s", ref);
  snprintf(cmd, sizeof cmd,
           "TC_CACHE_DIR='%s' '%s/bin/tc' run mlp --backend inductor-cpu --size test --iters 2 --compile-async 2>&1", cache,
           TC_BINARY_DIR);
  cr_assert_eq(command_run(cmd, out, sizeof out), 0, "output: %s", out);
  assert_contains(out, "(eager: the compile runs in the background)");
  assert_contains(out, "calls ran eagerly meanwhile)");
  const char *line = strstr(out, "checksum"), *want = strstr(ref, "checksum");
  cr_assert(line && want && !strncmp(line, want, strcspn(want, "\n")), "%s\nplain: %s", out, ref);
}

/* A prim added in a later minor version (FMOD, 2.1) is never handed to an older plugin: the host
 * treats it as declined (the node runs on the fallback), whatever the plugin's capabilities. */
Test(registry, prims_newer_than_the_plugin_are_declined) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_add(dir, "new_minor");
  plugin_path_use(dir);
  tc_backend *old = backend_find("old_minor", NULL), *cur = backend_find("new_minor", NULL);
  cr_assert_not_null(old, "%s", tc_last_error());
  cr_assert_not_null(cur, "%s", tc_last_error());
  cr_assert_eq(tck_prim_abi_minor(TC_PRIM_FMOD), 1u);
  cr_assert_not(backend_accepts(old, TC_PRIM_FMOD, -1, -1), "a 2.0 plugin cannot know FMOD");
  cr_assert(backend_accepts(old, TC_PRIM_REMAINDER, -1, -1));
  cr_assert(backend_accepts(cur, TC_PRIM_FMOD, -1, -1), "a newer plugin takes it");
}
