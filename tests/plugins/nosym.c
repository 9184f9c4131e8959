/* nosym.c — a valid shared object that is not a tc plugin: it lacks tc_plugin_query. */
#include "tc_plugin.h"

TC_PLUGIN_EXPORT int nosym_answer(void);
TC_PLUGIN_EXPORT int nosym_answer(void) {
  return 42;
}
