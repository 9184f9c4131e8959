/* gemm_host_unit.c — compiled by gemm_host.sh with one variant of mlp's unit pasted in (#include
 * of the unit's C text) and linked with that variant's GEMM runtime (gemm_host_runtime.c):
 * probe_attach hands the unit its runtime, as the plugin does at load (launch.c). */
#include UNIT

const void *probe_gemm_runtime(int vl, size_t ws_size);

int probe_attach(void) { return tc_gemm_attach(probe_gemm_runtime); }
