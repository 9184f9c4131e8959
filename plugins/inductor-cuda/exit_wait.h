/* exit_wait.h — waits for the plugin's threads that run before exit tears down the libraries
 * they are inside (exit_wait.c says why). Standalone: tests/exit_wait_scenario.c builds
 * exit_wait.c on its own. */
#ifndef ICUDA_EXIT_WAIT_H
#define ICUDA_EXIT_WAIT_H

/* A function that waits for some of this plugin's threads (process-wide; harmless when none run). */
typedef void (*icuda_exit_wait_fn)(void);

/* Has exit call wait before cuBLASLt's and NVRTC's own exit handlers run: as a thread-local
 * destructor of the calling thread (run first when that thread exits) and an atexit handler
 * (once per function). Call it from the thread that starts the work, before the thread starts. */
void icuda_wait_before_exit(icuda_exit_wait_fn wait);

#endif
