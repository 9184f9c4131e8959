/* eager.h — running one prim now, on real tensors (eager.c). */
#ifndef TC_EAGER_H
#define TC_EAGER_H

#include "graph.h"

/* Runs `node` (prim, attributes, out dtype/rank; in/n_in ignored) on the real tensors `in`, with
 * result shape `shape` (concrete values used). Views share storage; everything else runs on
 * the eager backend. New reference, or NULL with an error. */
tc_tensor *eager_run(const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);

#endif
