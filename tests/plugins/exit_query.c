/* exit_query.c — a plugin whose query calls exit(3), as a careless library might: it must not
 * end the host. */
#include <stdlib.h>

#include "test_plugin_common.h"

TP_QUERY {
  (void)q;
  exit(3);
}
