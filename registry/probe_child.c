/* probe_child.c — a plugin file's first load, query and probe happen in a child process
 * (registry/probe/tc_plugin_probe.c, spawned), so a plugin that crashes, aborts, exits or hangs
 * in its constructor, its query or its probe is listed as unavailable ("probe crashed with
 * SIGSEGV", "probe timed out after 10 s") and never reaches the host. A file that passed is
 * remembered by its identity (device, inode, size, modification time): in memory for the
 * process, and in the cache directory across processes, so the child runs once per plugin file.
 *
 * The helper is found beside libtc (<libdir>/tc/tc-plugin-probe), or at $TC_PLUGIN_PROBE;
 * TC_PLUGIN_PROBE=off, or a missing helper, probes in process as before (logged once). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kit/tc_kit.h"
#include "registry_internal.h"

extern char **environ;

static const char probe_anchor = 0;

/* The helper's path, or false when there is none (probing stays in process). */
static bool probe_helper(char *out, size_t cap) {
  const char *env = getenv("TC_PLUGIN_PROBE");
  if (env && (!env[0] || !strcmp(env, "off"))) return false;
  if (env) {
    snprintf(out, cap, "%s", env);
    return access(out, X_OK) == 0;
  }
  Dl_info info;
  if (!dladdr(&probe_anchor, &info) || !info.dli_fname) return false;
  char lib[PATH_MAX];
  if (!realpath(info.dli_fname, lib)) return false;
  char *slash = strrchr(lib, '/');
  if (!slash) return false;
  *slash = 0;
  if (snprintf(out, cap, "%.*s/tc/tc-plugin-probe", (int)(cap > 40 ? cap - 40 : 0), lib) >= (int)cap) return false;
  return access(out, X_OK) == 0;
}

/* The identity of a file, as the text of a cache key. */
static bool file_identity(const char *path, char *out, size_t cap) {
  struct stat st;
  if (stat(path, &st) != 0) return false;
  snprintf(out, cap, "tc-plugin-probe v1 %s dev %llu ino %llu size %lld mtime %lld.%09ld", path,
           (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
           (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  return true;
}

/* Files that passed in this process (identity keys). */
static pthread_mutex_t passed_lock = PTHREAD_MUTEX_INITIALIZER;
static char **passed;
static size_t n_passed;

static bool passed_here(const char *key) {
  pthread_mutex_lock(&passed_lock);
  bool hit = false;
  for (size_t i = 0; i < n_passed && !hit; i++) hit = !strcmp(passed[i], key);
  pthread_mutex_unlock(&passed_lock);
  return hit;
}

static void passed_add(const char *key) {
  pthread_mutex_lock(&passed_lock);
  char **grown = realloc(passed, (n_passed + 1) * sizeof *passed);
  char *copy = strdup(key);
  if (grown && copy) {
    passed = grown;
    passed[n_passed++] = copy;
  } else {
    if (grown) passed = grown;
    free(copy);
  }
  pthread_mutex_unlock(&passed_lock);
}

/* The cache directory for the registry's own entries, or "" (caching off). */
static void probe_cache_dir(char *out, size_t cap) {
  char base[768];
  tck_cache_base(base, sizeof base);
  out[0] = 0;
  if (base[0]) snprintf(out, cap, "%s/registry", base);
}

static double probe_timeout_s(void) {
  const char *t = getenv("TC_PLUGIN_PROBE_TIMEOUT");
  double v = t ? strtod(t, NULL) : 0;
  return v > 0 ? v : 10.0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool probe_child_vet(const char *path, char *why, size_t cap) {
  char helper[PATH_MAX], key[PATH_MAX + 200], cache[PATH_MAX], err[256];
  static bool said_in_process;
  if (!probe_helper(helper, sizeof helper)) {
    if (!said_in_process) {
      said_in_process = true;
      tc_logs("plugins", "no tc-plugin-probe helper (or TC_PLUGIN_PROBE=off): plugins are probed in process");
    }
    return true;
  }
  if (!file_identity(path, key, sizeof key)) return true; /* the file check reports it */
  if (passed_here(key)) return true;
  probe_cache_dir(cache, sizeof cache);
  if (cache[0] && tck_cache_dir_prepare(cache, err, sizeof err) == TC_OK) {
    tck_cache_hit hit;
    bool found = false;
    if (tck_cache_get(cache, "registry", key, strlen(key), "probe", &hit, &found, err, sizeof err) == TC_OK && found) {
      tck_cache_hit_free(&hit);
      passed_add(key);
      return true;
    }
  }
  int out[2];
  if (pipe(out) != 0) return true; /* cannot vet: fall back to probing in process */
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  char *args[] = {helper, (char *)path, NULL};
  /* The child's environment is ours, except that a sanitizer runtime (a sanitizer build of tc)
   * must let a crash be a crash: the verdict is read off the signal. */
  size_t n_env = 0;
  while (environ[n_env]) n_env++;
  char **env = calloc(n_env + 2, sizeof *env);
  char asan[1024];
  const char *old_asan = getenv("ASAN_OPTIONS");
  snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:"
                              "detect_leaks=0",
           old_asan ? old_asan : "", old_asan && old_asan[0] ? ":" : "");
  size_t k = 0;
  for (size_t i = 0; env && i < n_env; i++)
    if (strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0) env[k++] = environ[i];
  if (env) env[k++] = asan;
  pid_t pid;
  int rc = posix_spawn(&pid, helper, &fa, NULL, args, env ? env : environ);
  free(env);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return true;
  }
  char buf[4096];
  size_t got = 0;
  const double limit = probe_timeout_s(), t0 = now_s();
  bool timed_out = false;
  for (;;) {
    double left = limit - (now_s() - t0);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {.fd = out[0], .events = POLLIN};
    int pr = poll(&p, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t r = read(out[0], buf + got, sizeof buf - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break; /* end of output: the child is done or gone */
    got += (size_t)r;
    if (got >= sizeof buf - 1) got = 0; /* keep reading; only the tail matters */
  }
  buf[got] = 0;
  close(out[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    snprintf(why, cap, "probe timed out after %g s (in a child process; not loaded)", limit);
    return false;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *name = sigabbrev_np(sig);
    snprintf(why, cap, "probe crashed with SIG%s (in a child process; not loaded)", name ? name : "?");
    return false;
  }
  if (!strstr(buf, "tc-plugin-probe: done")) {
    snprintf(why, cap, "the plugin ended the process while loading or probing (exit status %d, in a child process; "
                       "not loaded)",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return false;
  }
  passed_add(key);
  if (cache[0]) tck_cache_put(cache, "registry", key, strlen(key), "probe", "ok", 2, NULL, err, sizeof err);
  return true;
}
