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
  n_listed = tc_list_backends(listed, 64);
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

Test(registry, text_file_named_so_is_listed_with_dlerror_text) {
  const char *dir = dir_new("p");
  text_file_add(dir, "broken.so", "this is not an ELF file\n");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);

  /* What dlopen itself says about this file must reach the reason. */
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/broken.so", dir);
  cr_assert_null(dlopen(path, RTLD_NOW | RTLD_LOCAL));
  char err[512];
  snprintf(err, sizeof err, "%s", dlerror());

  const tc_backend_info *b = listed_expect("broken");
  cr_assert_not(b->available);
  cr_assert_str_eq(b->path, path);
  assert_contains(b->reason, "dlopen failed");
  assert_contains(b->reason, err);
  /* The host carried on: the good plugin next to it works. */
  cr_assert(listed_expect("old_minor")->available);
  cr_assert_not_null(backend_find("old_minor"), "%s", tc_last_error());
}

Test(registry, shared_object_without_entry_symbol) {
  const char *dir = dir_new("p");
  plugin_add(dir, "nosym");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("nosym");
  cr_assert_not(b->available);
  assert_contains(b->reason, "no symbol tc_plugin_query");
  cr_assert_null(backend_find("nosym"));
  assert_contains(tc_last_error(), "no symbol tc_plugin_query");
}

Test(registry, non_plugin_files_are_skipped) {
  const char *dir = dir_new("p");
  text_file_add(dir, "README.txt", "not a candidate\n");
  text_file_add(dir, ".hidden.so", "not a candidate either\n");
  char sub[PATH_MAX + 16];
  snprintf(sub, sizeof sub, "%s/subdir.so", dir);
  cr_assert_eq(mkdir(sub, 0755), 0); /* not a regular file */
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  list_refresh();
  cr_assert_eq(n_listed, 1, "only old_minor.so is a candidate, got %d entries", n_listed);
  cr_assert_str_eq(listed[0].name, "old_minor");
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
  snprintf(want, sizeof want, "built for ABI 2.x, the host offers %d.%d", TC_ABI_MAJOR, TC_ABI_MINOR);
  assert_contains(b->reason, want); /* the plugin's own words */
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
  cr_assert_null(backend_find("other_major"));
}

Test(registry, table_too_small_for_required_entries) {
  const char *dir = dir_new("p");
  plugin_add(dir, "small_table");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("small_table");
  cr_assert_not(b->available);
  assert_contains(b->reason, "too small");
  char need[64];
  snprintf(need, sizeof need, "need %zu bytes", TC_STRUCT_SIZE(tc_plugin_api, executable_free));
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
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_not_null(be->ctx);
  cr_assert_eq(be->api.struct_size, TC_STRUCT_SIZE(tc_plugin_api, executable_free));
  /* The plugin scribbled past its table (see old_minor.c); none of it may be taken. */
  cr_assert_null(be->api.executable_source);
  cr_assert_null(be->api.capabilities);
  cr_assert_null(be->api.record);
  cr_assert_null(be->api.replay);
  cr_assert_null(be->api.recording_free);
  cr_assert_eq(be->api.synchronize(be->ctx), TC_OK);
  cr_assert_str_eq(be->version, "0.0.1");
  cr_assert_str_eq(be->path, listed_expect("old_minor")->path);
}

Test(registry, new_minor_with_larger_table_works) {
  const char *dir = dir_new("p");
  plugin_add(dir, "new_minor");
  plugin_path_use(dir);
  tc_backend *be = backend_find("new_minor");
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_not_null(be->ctx);
  cr_assert_eq(be->api.abi_minor, TC_ABI_MINOR + 1);
  cr_assert_eq(be->api.struct_size, sizeof(tc_plugin_api), "the host keeps what it knows");
  cr_assert_not_null(be->api.executable_source);
  cr_assert_str_eq(be->api.executable_source(be->ctx, NULL), "/* new_minor */");
  cr_assert_eq(be->api.synchronize(be->ctx), TC_OK);
}

/* ---------------------------------------------------------------- probe and init */

Test(registry, probe_says_unavailable) {
  const char *dir = dir_new("p");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  const tc_backend_info *b = listed_expect("unavailable");
  cr_assert_not(b->available);
  assert_contains(b->reason, "probe: no frobnicator attached");
  cr_assert_null(backend_find("unavailable"));
  cr_assert_eq(tc_last_status(), TC_ERR_UNAVAILABLE);
  assert_contains(tc_last_error(), "no frobnicator attached");
}

Test(registry, init_failure_makes_backend_unavailable) {
  const char *dir = dir_new("p");
  plugin_add(dir, "init_fails");
  plugin_path_use(dir);
  cr_assert(listed_expect("init_fails")->available, "probe alone cannot know init will fail");
  cr_assert_null(backend_find("init_fails"));
  assert_contains(tc_last_error(), "init failed");
  assert_contains(tc_last_error(), "the device fell off the bus");
  const tc_backend_info *b = listed_expect("init_fails");
  cr_assert_not(b->available);
  assert_contains(b->reason, "the device fell off the bus");
  /* And it stays that way, with the same reason. */
  cr_assert_null(backend_find("init_fails"));
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
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be);
  cr_assert_eq(backend_find("old_minor"), be, "one context per backend");
}

Test(registry, device_option_selects_device) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  backend_set_thread_options("two_devices.device=1");
  tc_backend *be = backend_find("two_devices");
  backend_set_thread_options(NULL);
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_eq(*(const int32_t *)be->ctx, 1, "init got device 1"); /* first field of its ctx */
}

Test(registry, device_option_out_of_range_is_an_error) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  setenv("TC_OPTIONS", "two_devices.device=5", 1);
  cr_assert_null(backend_find("two_devices"));
  assert_contains(tc_last_error(), "two_devices.device=5 is out of range (2 device(s))");
  setenv("TC_OPTIONS", "two_devices.device=0", 1);
  cr_assert_not_null(backend_find("two_devices"), "a bad option does not spoil the backend: %s", tc_last_error());
}

Test(registry, auto_reports_a_bad_device_option) {
  const char *dir = dir_new("p");
  plugin_add(dir, "two_devices");
  plugin_path_use(dir);
  setenv("TC_OPTIONS", "two_devices.device=zero", 1);
  cr_assert_null(backend_find("auto"));
  assert_contains(tc_last_error(), "two_devices.device=zero is not a device index");
  cr_assert(listed_expect("two_devices")->available);
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
  tc_backend *be = backend_find("auto");
  cr_assert_not_null(be);
  cr_assert_str_eq(be->name, "new_minor");
  cr_assert_eq(backend_find(NULL), be, "NULL means auto");
}

Test(registry, auto_passes_over_a_backend_whose_init_fails) {
  const char *dir = dir_new("p");
  plugin_add(dir, "init_fails"); /* 90, but init fails */
  plugin_add(dir, "new_minor");  /* 60 */
  plugin_add(dir, "old_minor");  /* 20 */
  plugin_path_use(dir);
  tc_backend *be = backend_find("auto");
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_str_eq(be->name, "new_minor");
  cr_assert_str_eq(tc_backend_auto(), "new_minor");
  cr_assert_not(listed_expect("init_fails")->available);
}

Test(registry, auto_with_nothing_available) {
  const char *dir = dir_new("p");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  cr_assert_null(tc_backend_auto());
  assert_contains(tc_last_error(), "no backend is available");
  cr_assert_null(backend_find("auto"));
}

Test(registry, unknown_name_lists_known_names) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_add(dir, "new_minor");
  plugin_add(dir, "unavailable");
  plugin_path_use(dir);
  cr_assert_null(backend_find("no-such-backend"));
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
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be);
  assert_contains(be->path, first);
}

Test(registry, rescan_rereads_plugin_path) {
  const char *a = dir_new("a");
  const char *b = dir_new("b");
  plugin_add(a, "old_minor");
  plugin_add(b, "new_minor");
  plugin_path_use(a);
  tc_backend *old = backend_find("old_minor");
  cr_assert_not_null(old);
  plugin_path_use(b);
  cr_assert_null(listed_find("old_minor", NULL));
  cr_assert_not_null(listed_find("new_minor", NULL));
  /* A backend in use survives the rescan that forgot it. */
  cr_assert_str_eq(old->name, "old_minor");
  cr_assert_eq(old->api.synchronize(old->ctx), TC_OK);
}

/* ---------------------------------------------------------------- in-process registration */

static int inproc_inits;

static tc_status inproc_probe(const tc_host_api *host, tc_probe_info *info) {
  (void)host;
  info->available = true;
  info->score = 70;
  info->n_devices = 1;
  snprintf(info->devices[0].name, sizeof info->devices[0].name, "in-process cpu");
  info->devices[0].type = TC_DEVICE_CPU;
  return TC_OK;
}

static tc_status inproc_init(const tc_host_api *host, int32_t device, tc_plugin_ctx **ctx) {
  (void)host;
  (void)device;
  inproc_inits++;
  *ctx = (tc_plugin_ctx *)&inproc_inits;
  return TC_OK;
}

static void inproc_release(tc_plugin_ctx *ctx) {
  (void)ctx;
}
static tc_status inproc_sync(tc_plugin_ctx *ctx) {
  (void)ctx;
  return TC_OK;
}
static void inproc_exe_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  (void)ctx;
  (void)exe;
}
static tc_status inproc_compile_graph(tc_plugin_ctx *ctx, const tc_graph_desc *g, tc_executable **exe) {
  (void)ctx;
  (void)g;
  (void)exe;
  return TC_ERR_UNSUPPORTED;
}
static tc_status inproc_run_graph(tc_plugin_ctx *ctx, tc_executable *exe, const int64_t *syms, const tc_tensor_ref *in,
                                  const tc_tensor_ref *out) {
  (void)ctx;
  (void)exe;
  (void)syms;
  (void)in;
  (void)out;
  return TC_ERR_UNSUPPORTED;
}

static tc_status inproc_fill(tc_plugin_api *out, const char *name, const char *version) {
  size_t room = out->struct_size;
  tc_plugin_api a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a < room ? sizeof a : room;
  a.abi_major = TC_ABI_MAJOR;
  a.abi_minor = TC_ABI_MINOR;
  a.name = name;
  a.version = version;
  a.description = "registered by test_registry.c";
  a.handoff = TC_HANDOFF_GRAPH;
  a.memory = TC_MEMORY_HOST;
  a.probe = inproc_probe;
  a.init = inproc_init;
  a.release = inproc_release;
  a.compile_graph = inproc_compile_graph;
  a.run_graph = inproc_run_graph;
  a.synchronize = inproc_sync;
  a.executable_free = inproc_exe_free;
  memcpy(out, &a, a.struct_size);
  return TC_OK;
}

static tc_status inproc_query_v1(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  return inproc_fill(out, "inproc", "1.0");
}
static tc_status inproc_query_v2(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  return inproc_fill(out, "inproc", "2.0");
}
static tc_status inproc_query_named_old_minor(const tc_host_api *host, tc_plugin_api *out) {
  (void)host;
  return inproc_fill(out, "old_minor", "9.9");
}
static tc_status inproc_query_wrong_major(const tc_host_api *host, tc_plugin_api *out) {
  host->set_error(host->host_ctx, "inproc: needs ABI 2");
  (void)out;
  return TC_ERR_VERSION;
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
  tc_backend *be = backend_find("inproc");
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_null(be->dl);
  cr_assert_eq(inproc_inits, 1);
  cr_assert_eq((void *)be->ctx, (void *)&inproc_inits);

  /* Re-registering the name replaces the entry. */
  int before = tc_list_backends(NULL, 0);
  cr_assert_eq(tc_backend_register(inproc_query_v2), TC_OK);
  cr_assert_eq(tc_list_backends(NULL, 0), before);
  cr_assert_str_eq(listed_expect("inproc")->version, "2.0");
  cr_assert_str_eq(backend_find("inproc")->version, "2.0");
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
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be);
  cr_assert_str_eq(be->path, "(in-process)");
  cr_assert_str_eq(be->version, "9.9");
}

Test(registry, in_process_registration_with_wrong_major_is_refused) {
  const char *dir = dir_new("p");
  plugin_path_use(dir);
  cr_assert_eq(tc_backend_register(inproc_query_wrong_major), TC_ERR_VERSION);
  assert_contains(tc_last_error(), "inproc: needs ABI 2");
  cr_assert_eq(tc_list_backends(NULL, 0), 0);
  cr_assert_eq(tc_backend_register(NULL), TC_ERR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- host services */

Test(registry, host_options_thread_first_then_environment) {
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be);
  const tc_host_api *h = &be->host;
  setenv("TC_OPTIONS", "cpu.threads=3, vulkan.device = 1 ,cpu.threads=4", 1);
  cr_assert_str_eq(h->get_option(h->host_ctx, "cpu.threads"), "4", "the last setting wins");
  cr_assert_str_eq(h->get_option(h->host_ctx, "vulkan.device"), "1");
  cr_assert_null(h->get_option(h->host_ctx, "cpu"));
  cr_assert_null(h->get_option(h->host_ctx, "threads"));
  backend_set_thread_options("cpu.threads=2");
  const char *v = h->get_option(h->host_ctx, "cpu.threads");
  cr_assert_str_eq(v, "2");
  cr_assert_str_eq(h->get_option(h->host_ctx, "vulkan.device"), "1", "falls through to TC_OPTIONS");
  backend_set_thread_options(NULL);
  cr_assert_str_eq(h->get_option(h->host_ctx, "cpu.threads"), "4");
  cr_assert_str_eq(v, "2", "returned strings outlive the options they came from");
}

Test(registry, host_errors_and_logs) {
  setenv("TC_LOGS", "output_code", 1);
  cr_redirect_stderr();
  const char *dir = dir_new("p");
  plugin_add(dir, "old_minor");
  plugin_path_use(dir);
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be);
  const tc_host_api *h = &be->host;
  cr_assert_eq(h->struct_size, sizeof(tc_host_api));
  cr_assert_eq(h->abi_major, TC_ABI_MAJOR);
  h->set_error(h->host_ctx, "old_minor: kernel 3 does not fit");
  cr_assert_str_eq(tc_last_error(), "old_minor: kernel 3 does not fit");
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
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be);
  snprintf(want, sizeof want, "%s/old_minor", base);
  cr_assert_not_null(be->host.cache_dir);
  cr_assert_str_eq(be->host.cache_dir, want);
  struct stat st;
  cr_assert(stat(want, &st) == 0 && S_ISDIR(st.st_mode), "created on demand, parents included");

  setenv("TC_CACHE_DIR", "off", 1);
  be = backend_find("new_minor");
  cr_assert_not_null(be);
  cr_assert_null(be->host.cache_dir, "TC_CACHE_DIR=off turns caching off");
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
  tc_backend *be = backend_find("old_minor");
  cr_assert_not_null(be, "%s", tc_last_error());
  snprintf(want, sizeof want, "%s/tc/old_minor", xdg);
  cr_assert_str_eq(be->host.cache_dir, want);

  unsetenv("XDG_CACHE_HOME");
  be = backend_find("new_minor");
  cr_assert_not_null(be, "%s", tc_last_error());
  snprintf(want, sizeof want, "%s/.cache/tc/new_minor", home);
  cr_assert_str_eq(be->host.cache_dir, want);

  /* A base that cannot hold a directory: no cache, and no failure. */
  char file[512];
  snprintf(file, sizeof file, "%s/plainfile", test_root);
  text_file_add(test_root, "plainfile", "x");
  setenv("TC_CACHE_DIR", file, 1);
  be = backend_find("two_devices");
  cr_assert_not_null(be, "%s", tc_last_error());
  cr_assert_null(be->host.cache_dir);
}

/* ---------------------------------------------------------------- threads */

static void *thread_find(void *arg) {
  (void)arg;
  tc_backend *be = NULL;
  for (int i = 0; i < 200; i++) {
    tc_backend_info infos[8];
    if (tc_list_backends(infos, 8) != 2) return NULL;
    be = backend_find(i % 2 ? "old_minor" : "auto");
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

Test(registry, debug_eager_from_build_tree) {
  char plugin[PATH_MAX];
  snprintf(plugin, sizeof plugin, "%s/tc-debug-eager.so", TC_BUILD_PLUGIN_DIR);
  if (access(plugin, F_OK) != 0) cr_skip("%s is not built yet", plugin);
  /* Found next to libtc, with no help from the environment. */
  unsetenv("TC_PLUGIN_PATH");
  unsetenv("TC_PLUGIN_DEFAULT_DIR");
  cr_assert_eq(tc_backend_rescan(), TC_OK);
  const tc_backend_info *b = listed_expect("debug-eager");
  char want[PATH_MAX], got[PATH_MAX];
  cr_assert_not_null(realpath(plugin, want));
  cr_assert_not_null(realpath(b->path, got));
  cr_assert_str_eq(got, want);
  cr_assert(b->available, "debug-eager unavailable: %s", b->reason);
  cr_assert_not_null(backend_eager(), "%s", tc_last_error());
}

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
  assert_contains(out, "dlopen failed");
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
