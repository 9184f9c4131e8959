/* pytorch_ops.h — the tc op a PyTorch expectation names, applied to its inputs. */
#ifndef TC_PYTORCH_OPS_H
#define TC_PYTORCH_OPS_H

#include "pytorch_expect.h"

/* pc->op (a tc op name without tc_) on in[0..n-1] with pc's attributes: a new tensor, or NULL
 * (tc_last_error() says why; an op this file does not know leaves it empty). */
tc_tensor *pt_op_apply(const pt_case *pc, tc_tensor *const *in, int n);

#endif
