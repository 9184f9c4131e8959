/* scope.h — how tensors and scopes (scope.c) meet: a tensor created while a scope is open is
 * claimed by it; the claim is the tensor's creation reference. */
#ifndef TC_SCOPE_H
#define TC_SCOPE_H

#include "internal.h"

/* Registers t's creation reference with the innermost open scope of this thread (if any). */
void scope_claim(tc_tensor *t);
/* Forgets t's claim (t->scope becomes NULL) without releasing anything. */
void scope_unclaim(tc_tensor *t);

#endif
