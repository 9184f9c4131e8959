/* min_cut.c — a minimum s-t cut, from a maximum flow (Edmonds-Karp: shortest augmenting paths
 * found breadth first, no recursion), for the joint graph's partition (aot_partition.c). The
 * graphs are a few thousand nodes at most. */
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"

typedef struct mc_edge {
  int32_t to, next; /* next edge out of the same node, or -1 */
  int64_t cap;      /* residual capacity */
} mc_edge;

struct min_cut {
  int32_t n_nodes, n_edges, cap_edges;
  int32_t *head;  /* first edge out of each node, or -1 */
  mc_edge *edges; /* edge 2k and its reverse 2k + 1 */
};

min_cut *min_cut_new(int32_t n_nodes) {
  min_cut *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->n_nodes = n_nodes;
  g->head = malloc((size_t)(n_nodes ? n_nodes : 1) * sizeof *g->head);
  if (!g->head) {
    free(g);
    return NULL;
  }
  for (int32_t v = 0; v < n_nodes; v++)
    g->head[v] = -1;
  return g;
}

void min_cut_free(min_cut *g) {
  if (!g) return;
  free(g->head);
  free(g->edges);
  free(g);
}

static bool edge_push(min_cut *g, int32_t from, int32_t to, int64_t cap) {
  if (g->n_edges == g->cap_edges) {
    int32_t c = g->cap_edges ? 2 * g->cap_edges : 64;
    mc_edge *q = realloc(g->edges, (size_t)c * sizeof *q);
    if (!q) return false;
    g->edges = q;
    g->cap_edges = c;
  }
  g->edges[g->n_edges] = (mc_edge){.to = to, .next = g->head[from], .cap = cap};
  g->head[from] = g->n_edges++;
  return true;
}

bool min_cut_edge(min_cut *g, int32_t from, int32_t to, int64_t cap) {
  return edge_push(g, from, to, cap) && edge_push(g, to, from, 0);
}

/* Breadth first from s over edges with room; via[v] is the edge that reached v (-1: not reached). */
static bool residual_bfs(const min_cut *g, int32_t s, int32_t *via, int32_t *queue, bool *seen) {
  memset(seen, 0, (size_t)g->n_nodes * sizeof *seen);
  int32_t qh = 0, qt = 0;
  queue[qt++] = s;
  seen[s] = true;
  via[s] = -1;
  while (qh < qt) {
    int32_t v = queue[qh++];
    for (int32_t e = g->head[v]; e >= 0; e = g->edges[e].next) {
      int32_t u = g->edges[e].to;
      if (g->edges[e].cap <= 0 || seen[u]) continue;
      seen[u] = true;
      via[u] = e;
      queue[qt++] = u;
    }
  }
  return true;
}

bool min_cut_solve(min_cut *g, int32_t s, int32_t t, bool *source_side) {
  int32_t *via = malloc((size_t)g->n_nodes * sizeof *via), *queue = malloc((size_t)g->n_nodes * sizeof *queue);
  bool ok = via && queue;
  while (ok) {
    residual_bfs(g, s, via, queue, source_side);
    if (!source_side[t]) break; /* no augmenting path: the reached nodes are the source side */
    int64_t push = MIN_CUT_INF;
    for (int32_t v = t; v != s; v = g->edges[via[v] ^ 1].to)
      if (g->edges[via[v]].cap < push) push = g->edges[via[v]].cap;
    if (push >= MIN_CUT_INF) {
      ok = false; /* an infinite path: no finite cut separates s from t */
      break;
    }
    for (int32_t v = t; v != s; v = g->edges[via[v] ^ 1].to) {
      g->edges[via[v]].cap -= push;
      g->edges[via[v] ^ 1].cap += push;
    }
  }
  free(via);
  free(queue);
  return ok;
}
