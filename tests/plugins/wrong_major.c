/* wrong_major.c — built for a future ABI major: it says so with an error of TC_ERR_VERSION, as
 * the header asks. */
#include "test_plugin_common.h"

#define WRONG_MAJOR_ABI (TC_ABI_MAJOR + 1)

TP_QUERY {
  if (q->abi_major != WRONG_MAJOR_ABI) {
    char msg[128];
    snprintf(msg, sizeof msg, "wrong_major: built for ABI %d.x, the host offers %u.%u", WRONG_MAJOR_ABI,
             (unsigned)q->abi_major, (unsigned)q->abi_minor);
    return q->host->error_new(q->host->host_ctx, TC_ERR_VERSION, msg);
  }
  return q->host->error_new(q->host->host_ctx, TC_ERR_INTERNAL, "wrong_major: unreachable");
}
