/* scope.c — scopes: a per-thread stack of pools that own the creation references of the tensors
 * made while they are open.
 *
 * A claimed tensor's creation reference belongs to its scope. tc_release on a claimed tensor
 * with no tc_retain outstanding gives that reference up early (the scope then skips it), which is what lets op code release
 * its intermediates the same way inside and outside scopes. tc_scope_keep moves the claim to the
 * enclosing scope, or hands the reference to the caller when there is none. */
#include <stdlib.h>

#include "tensor/tensor.h"

struct tc_scope {
  tc_scope *parent;
  tc_tensor **items; /* claimed tensors; NULL where a claim was given up */
  int32_t n, cap;
};

static _Thread_local tc_scope *scope_top;

static bool scope_push(tc_scope *s, tc_tensor *t) {
  if (s->n == s->cap) {
    int32_t cap = s->cap ? s->cap * 2 : 16;
    tc_tensor **items = realloc(s->items, (size_t)cap * sizeof *items);
    if (!items) return false;
    s->items = items;
    s->cap = cap;
  }
  t->scope = s;
  t->scope_slot = s->n;
  s->items[s->n++] = t;
  return true;
}

void scope_claim(tc_tensor *t) {
  t->scope = NULL;
  t->scope_slot = -1;
  /* Out of memory for the claim: the caller simply owns the reference, as outside a scope. */
  if (scope_top) (void)scope_push(scope_top, t);
}

void scope_unclaim(tc_tensor *t) {
  if (!t->scope) return;
  t->scope->items[t->scope_slot] = NULL;
  t->scope = NULL;
  t->scope_slot = -1;
}

tc_scope *tc_scope_open(void) {
  tc_scope *s = calloc(1, sizeof *s);
  if (!s) return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_scope_open: out of memory");
  s->parent = scope_top;
  scope_top = s;
  return s;
}

tc_tensor *tc_scope_keep(tc_scope *s, tc_tensor *t) {
  if (!s || !t || t->scope != s) return t;
  scope_unclaim(t);
  if (s->parent) (void)scope_push(s->parent, t);
  return t;
}

static void scope_close_one(tc_scope *s) {
  /* Newest first: later tensors are more likely to depend on earlier ones. */
  for (int32_t i = s->n - 1; i >= 0; i--) {
    tc_tensor *t = s->items[i];
    if (!t) continue;
    scope_unclaim(t);
    tensor_drop(t); /* the creation reference, whatever tc_retain calls are outstanding */
  }
  free(s->items);
  free(s);
}

void tc_scope_close(tc_scope *s) {
  if (!s) return;
  /* Closing an outer scope closes the ones still open inside it. A scope not on this thread's
   * stack is left alone: closing it here would corrupt another thread's stack. */
  tc_scope *p = scope_top;
  while (p && p != s)
    p = p->parent;
  if (!p) return;
  while (scope_top != s) {
    tc_scope *inner = scope_top;
    scope_top = inner->parent;
    scope_close_one(inner);
  }
  scope_top = s->parent;
  scope_close_one(s);
}
