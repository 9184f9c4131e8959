/* tensor_hooks.c — the calls the tensor stage makes upward (a host read of a proxy, pinning a
 * proxy's dynamic size), through the table the top stage installs. */
#include "tensor/tensor.h"

static tensor_hooks hooks;

void tensor_set_hooks(const tensor_hooks *h) {
  hooks = *h;
}

tc_status tensor_materialize(const char *op, const tc_tensor *proxy, tc_tensor **real) {
  *real = NULL;
  if (!hooks.materialize)
    return core_error(TC_ERR_INTERNAL,
                    "%s: reading a traced tensor needs the capture hook, and none is installed "
                    "(tensor_set_hooks not called)",
                    op);
  return hooks.materialize(op, proxy, real);
}

void tensor_pin_size(const tc_tensor *proxy, int dim) {
  if (!hooks.pin_size) {
    core_error(TC_ERR_INTERNAL, "tc_size: pinning a traced size needs the capture hook, and none is installed "
                              "(tensor_set_hooks not called)");
    return;
  }
  hooks.pin_size(proxy, dim);
}
