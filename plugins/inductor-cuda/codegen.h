/* codegen.h — internals shared by the code generator's files (codegen_module.c: the module and
 * the plans; codegen_points.c: ops, POINTS kernels and matmul epilogues; codegen_rows.c: ROWS
 * kernels). Not part of icuda.h: the runtime half needs none of it. */
#ifndef ICUDA_CODEGEN_H
#define ICUDA_CODEGEN_H

#include "icuda.h"

/* Threads per block of a POINTS kernel, and the resident blocks per SM its grid aims at (ROWS
 * grids are not capped: a block per row group, the hardware's block scheduler balancing them
 * over the SMs; a capped grid-stride grid left a partial last wave whenever registers allowed
 * fewer resident blocks than the cap assumed). */
#define ICUDA_POINTS_BLOCK 256
/* MATMUL kernels of constant sizes up to this many multiply-adds compute the product in the
 * generated kernel (a thread per element, the epilogue fused) instead of calling cuBLASLt. */
#define ICUDA_INLINE_MATMUL_MAX (1 << 18)
#define ICUDA_POINTS_BLOCKS_PER_SM 8
/* ROWS: the most float4 slots one thread keeps per cached value (the row length bound for
 * keeping a row in registers is block * 4 * ICUDA_ROW_REGS elements). */
#define ICUDA_ROW_REGS 8
/* ROWS, warp per row: chosen for constant rows of N % 128 == 0 up to this length (longer rows
 * keep a block per row), and the warps (rows) per block. */
#define ICUDA_WARP_ROW_MAX 1024
#define ICUDA_WARP_ROW_WARPS 4

typedef struct icuda_gen {
  const tc_kernel_list *list;
  const tc_kernel_desc *k;
  const icuda_codegen_options *o;
  tck_exprs x;
  char fname[112];
  char bname[ICUDA_MAX_BUFS][48]; /* C names of the buffers */
  /* ROWS vector bodies: per op, its value is per float4 component (v<i>_<c>) */
  bool *percomp;
  /* per op, an expression standing for its value (a float4 component), or NULL */
  const char **value_of;
  /* per op, the storage value_of points into for a float4 load ("t5.y"): one per op, so every
   * load of a body keeps its own name while a component's ops are written */
  char (*comp_names)[24];
} icuda_gen;
/* "  const long long name = <expr id>;", or absent where id is -1 (a field the kernel lacks). */
void cg_size_def(tck_str *s, const icuda_gen *g, const char *name, int32_t id, const char *absent);

/* codegen_points.c */
/* Component c's names of the float4 loads among ops [from, to) (loads[j]: op j is one): op j's
 * value reads "t<j>.<x|y|z|w>" (g->value_of); cg_component_names_clear drops them. */
void cg_component_names(icuda_gen *g, const bool *loads, int32_t from, int32_t to, int c);
void cg_component_names_clear(icuda_gen *g, int32_t from, int32_t to);
/* Allocates g's per-op tables (percomp, value_of, comp_names); false when out of memory.
 * cg_tables_free releases them. */
bool cg_tables_alloc(icuda_gen *g);
void cg_tables_free(icuda_gen *g);
/* Writes op i at depth d. vars: the outer vars then the inner var (an expression). sfx: the
 * suffix of per-component values ("_2") or "". acc_expr: what TC_KOP_ACC reads (epilogues). */
tc_status cg_op(tck_str *s, icuda_gen *g, int32_t i, const char *const *vars, int d, const char *sfx,
                const char *acc_expr, char *err, size_t cap);
/* The name of op j's value in the copy `sfx` of a body. */
void cg_value_name(const icuda_gen *g, int32_t j, const char *sfx, char *out, size_t cap);
/* The kernel's signature and prologue: buffer pointers from the argument block, symbols. */
void cg_prologue(tck_str *s, icuda_gen *g, int block);
/* Marks every expression the kernel's ops and domain refer to. */
void cg_mark_exprs(icuda_gen *g);
/* "long long i0, i1 ... = decomposition of lin" over the outer extents n<v>. */
void cg_decompose(tck_str *s, const icuda_gen *g, const char *lin, int depth, const char *const *vars,
                  int32_t n_outer);
/* A reduction's accumulator declarations (acc v<i>, argmax: v<i>_best and v<i>) for one loop.
 * arg_none: argmax's initial index (0 serial; a sentinel for per-thread partials). */
void cg_declare_accumulators(tck_str *s, const icuda_gen *g, int32_t loop, int depth, const char *arg_none);
tc_status cg_points(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap);
tc_status cg_matmul(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap);

/* codegen_gemm.c: the MATMUL kernel's generated GEMM, plan->gemm_name (set by the caller),
 * product and epilogue in one kernel; fills plan->gemm_block and gemm_tile. */
tc_status cg_gemm(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap);

/* codegen_attention.c: TC_KERNEL_ATTENTION as a flash-attention kernel (mark its expressions
 * first, as cg_mark_exprs does for ops). */
void cg_attention_mark(icuda_gen *g);
tc_status cg_attention(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap);

/* codegen_rows.c */
/* True when the kernel should run as ROWS (inner loops long enough, reductions it can split). */
bool cg_rows_wanted(const icuda_gen *g);
tc_status cg_rows(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap);

#endif
