/* backward.c — the walk: every tensor the output depends on through the tape, in topological
 * order, then each tape node's rule from the output back, gradients of a tensor used several
 * times summed. Gradients are held by the walk (tensor_hold) and each is dropped as soon as
 * its node has run, so eager memory stays near one gradient per live edge. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"

/* ---------------------------------------------------------------- tensor -> slot map */
typedef struct walk {
  tc_tensor **keys; /* open addressing, cap a power of two */
  int32_t *slot;
  int32_t cap;
  tc_tensor **order; /* post-order: operands before the tensors made from them */
  tc_tensor **grad;  /* per slot, held */
  int32_t n, cap_order;
} walk;

static uint32_t ptr_hash(const void *p) {
  uintptr_t v = (uintptr_t)p;
  v ^= v >> 17;
  v *= 0xed5ad4bbU;
  v ^= v >> 11;
  return (uint32_t)v;
}

static int32_t walk_find(const walk *w, const tc_tensor *t) {
  for (uint32_t h = ptr_hash(t) & (uint32_t)(w->cap - 1);; h = (h + 1) & (uint32_t)(w->cap - 1)) {
    if (!w->keys[h]) return -1;
    if (w->keys[h] == t) return w->slot[h];
  }
}

static bool walk_grow(walk *w) {
  int32_t cap = w->cap ? w->cap * 2 : 64;
  tc_tensor **keys = calloc((size_t)cap, sizeof *keys);
  int32_t *slot = calloc((size_t)cap, sizeof *slot);
  if (!keys || !slot) {
    free(keys);
    free(slot);
    return false;
  }
  for (int32_t i = 0; i < w->cap; i++) {
    if (!w->keys[i]) continue;
    uint32_t h = ptr_hash(w->keys[i]) & (uint32_t)(cap - 1);
    while (keys[h])
      h = (h + 1) & (uint32_t)(cap - 1);
    keys[h] = w->keys[i];
    slot[h] = w->slot[i];
  }
  free(w->keys);
  free(w->slot);
  w->keys = keys;
  w->slot = slot;
  w->cap = cap;
  return true;
}

/* Adds t with the next slot (its place in `order` comes later); false when out of memory. */
static bool walk_insert(walk *w, tc_tensor *t, int32_t slot) {
  if ((slot + 1) * 2 > w->cap && !walk_grow(w)) return false;
  uint32_t h = ptr_hash(t) & (uint32_t)(w->cap - 1);
  while (w->keys[h])
    h = (h + 1) & (uint32_t)(w->cap - 1);
  w->keys[h] = t;
  w->slot[h] = slot;
  return true;
}

static void walk_free(walk *w) {
  for (int32_t i = 0; i < w->n; i++)
    tensor_drop(w->grad[i]);
  free(w->keys);
  free(w->slot);
  free(w->order);
  free(w->grad);
}

/* Depth-first from out over operands that need a gradient, without recursion (a tape can be
 * thousands of prims deep). Fills order in post-order, slot i = order position i. */
static tc_status walk_collect(walk *w, tc_tensor *out) {
  typedef struct frame {
    tc_tensor *t;
    int32_t next;
  } frame;
  int32_t cap_stack = 64, top = 0, seen = 0;
  /* Slots are handed out on first visit, order positions on exit; pos_of_slot maps them. */
  int32_t *pos_of_slot = NULL, cap_pos = 0;
  frame *stack = malloc((size_t)cap_stack * sizeof *stack);
  if (!stack || !walk_insert(w, out, seen++)) goto oom;
  stack[top++] = (frame){out, 0};
  while (top > 0) {
    frame *f = &stack[top - 1];
    const tape_node *nd = tape_node_of(f->t);
    if (nd && f->next < nd->n_in) {
      tc_tensor *in = nd->in[f->next++];
      if (!tape_needs_grad(in) || walk_find(w, in) >= 0) continue;
      if (!walk_insert(w, in, seen++)) goto oom;
      if (top == cap_stack) {
        frame *ns = realloc(stack, (size_t)cap_stack * 2 * sizeof *ns);
        if (!ns) goto oom;
        stack = ns;
        cap_stack *= 2;
      }
      stack[top++] = (frame){in, 0};
      continue;
    }
    if (w->n == w->cap_order) {
      int32_t c = w->cap_order ? w->cap_order * 2 : 64;
      tc_tensor **no = realloc(w->order, (size_t)c * sizeof *no);
      if (!no) goto oom;
      w->order = no;
      w->cap_order = c;
    }
    if (seen > cap_pos) {
      int32_t c = cap_pos ? cap_pos * 2 : 64;
      while (c < seen)
        c *= 2;
      int32_t *np = realloc(pos_of_slot, (size_t)c * sizeof *np);
      if (!np) goto oom;
      pos_of_slot = np;
      cap_pos = c;
    }
    pos_of_slot[walk_find(w, f->t)] = w->n;
    w->order[w->n++] = f->t;
    top--;
  }
  /* Renumber the map so a tensor's slot is its position in order. */
  for (int32_t i = 0; i < w->cap; i++)
    if (w->keys[i]) w->slot[i] = pos_of_slot[w->slot[i]];
  w->grad = calloc((size_t)(w->n ? w->n : 1), sizeof *w->grad);
  if (!w->grad) goto oom;
  free(pos_of_slot);
  free(stack);
  return TC_OK;
oom:
  free(pos_of_slot);
  free(stack);
  return core_error(TC_ERR_OUT_OF_MEMORY, "autograd: out of memory walking the tape");
}

/* ---------------------------------------------------------------- accumulation */
static bool same_shape(const tc_tensor *a, const tc_tensor *b) {
  if (a->rank != b->rank || a->dtype != b->dtype) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->sizes[d] != b->sizes[d]) return false;
  return true;
}

/* grad[slot] += g (held on return). */
static tc_status accumulate(walk *w, int32_t slot, tc_tensor *g) {
  tc_tensor *old = w->grad[slot];
  tc_tensor *sum = old ? prim_binary(TC_PRIM_ADD, old, g) : g;
  if (!sum) return tc_last_status();
  tensor_hold(sum);
  w->grad[slot] = sum;
  tensor_drop(old);
  return TC_OK;
}

/* Runs t's rule with its gradient and adds the results to its operands' gradients. */
static tc_status step(walk *w, const char *op, tc_tensor *t, tc_tensor *g) {
  const tape_node *nd = tape_node_of(t);
  tc_tensor *small[8], **dx = nd->n_in <= 8 ? small : calloc((size_t)nd->n_in, sizeof *dx);
  if (!dx) return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  tc_scope *sc = tc_scope_open();
  tc_status s = grad_rule(nd, t, g, dx);
  for (int32_t i = 0; s == TC_OK && i < nd->n_in; i++) {
    if (!dx[i]) continue;
    tc_tensor *in = nd->in[i];
    if (!same_shape(dx[i], in)) {
      s = core_error(TC_ERR_INTERNAL, "%s: the rule of prim %s gave operand %d a gradient of %s %s for %s %s", op,
                     prim_name(nd->node.prim), (int)i, OPS_DTYPE(dx[i]), OPS_SHAPE(dx[i]), OPS_DTYPE(in),
                     OPS_SHAPE(in));
      break;
    }
    s = accumulate(w, walk_find(w, in), dx[i]);
  }
  tc_scope_close(sc); /* the gradients kept are held by the walk */
  if (dx != small) free(dx);
  return s;
}

/* leaf.grad += g; the new gradient is held by the leaf. */
static tc_status leaf_accumulate(tc_tensor *leaf, tc_tensor *g) {
  tc_tensor *sum = leaf->grad ? prim_binary(TC_PRIM_ADD, leaf->grad, g) : g;
  if (!sum) return tc_last_status();
  tensor_hold(sum);
  tensor_drop(leaf->grad);
  leaf->grad = sum;
  return TC_OK;
}

tc_status grad_backward(const char *op, tc_tensor *out, tc_tensor *seed, int n, tc_tensor *const *wrt,
                        tc_tensor **grads, bool accumulate_leaves) {
  walk w;
  memset(&w, 0, sizeof w);
  for (int k = 0; k < n; k++)
    grads[k] = NULL;
  tc_status s = walk_collect(&w, out);
  if (s != TC_OK) {
    walk_free(&w);
    return s;
  }
  /* A tensor asked for keeps its gradient to the end; every other one is dropped after use. */
  bool *wanted = calloc((size_t)w.n, sizeof *wanted);
  if (!wanted) {
    walk_free(&w);
    return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  for (int k = 0; k < n; k++) {
    int32_t i = walk_find(&w, wrt[k]);
    if (i >= 0) wanted[i] = true;
  }
  bool was = tape_set_enabled(false);
  tensor_hold(seed);
  w.grad[w.n - 1] = seed; /* out is the last in post-order */
  tc_scope *sc = tc_scope_open();
  for (int32_t i = w.n - 1; s == TC_OK && i >= 0; i--) {
    tc_tensor *t = w.order[i], *g = w.grad[i];
    if (!g) continue;
    if (tape_node_of(t)) {
      s = step(&w, op, t, g);
    } else if (accumulate_leaves && t->requires_grad) {
      s = leaf_accumulate(t, g);
    }
    if (!wanted[i]) {
      w.grad[i] = NULL;
      tensor_drop(g);
    }
  }
  tc_scope_close(sc);
  tape_set_enabled(was);
  for (int k = 0; s == TC_OK && k < n; k++) {
    int32_t i = walk_find(&w, wrt[k]);
    if (i >= 0 && w.grad[i]) {
      grads[k] = w.grad[i];
      tensor_hold(grads[k]);
    }
  }
  free(wanted);
  walk_free(&w);
  return s;
}
