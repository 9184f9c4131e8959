#!/usr/bin/env bash
# On the GPU machine's host CPU (through the device tool; .dev/gpu-build carried): the
# inductor-cpu GEMM issue's figures, tc and PyTorch in the same call, 2 threads, CPU shapes:
#   - tc bench on inductor-cpu (cpu.blas auto: OpenBLAS) for ln_gelu, softmax, mlp, attn_block,
#     each against its ceiling (streaming copy; OpenBLAS sgemm and the cores' peak FMA rate),
#   - tc bench with cpu.blas=openblas for mlp and attn_block (auto takes the generated GEMM on
#     that AVX-512 Xeon), and attn_block with cpu.attention=fused,
#   - bench/torch_compare.py --size cpu --threads 2 (eager and torch.compile; 40-60 s of
#     compile per model) for TC_HOST_TORCH_MODELS (default mlp,attn_block).
# JSON under $OUT (cpu_tc.json, cpu_tc_openblas.json, cpu_tc_fused.json, cpu_torch.json), a
# short table last.
set -u
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache-host
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/Flags:.*\(avx512f\).*/Flags: ... avx512f .../' | head -3
models=${TC_HOST_MODELS:-ln_gelu,softmax,mlp,attn_block}
echo "=== tc bench inductor-cpu ($models, cpu.blas auto)"
timeout 200 $B/bin/tc bench --backend inductor-cpu --size cpu --threads 2 --models "$models" --no-eager --json \
  >"$OUT/cpu_tc.json" 2>/tmp/cpu_tc.log
echo "=== tc bench inductor-cpu mlp and attn_block, cpu.blas=openblas"
TC_OPTIONS=cpu.blas=openblas timeout 150 $B/bin/tc bench --backend inductor-cpu --size cpu --threads 2 \
  --models mlp,attn_block --no-eager --json >"$OUT/cpu_tc_openblas.json" 2>/tmp/cpu_tc_openblas.log
echo "=== tc bench inductor-cpu attn_block, cpu.attention=fused"
TC_OPTIONS=cpu.attention=fused timeout 120 $B/bin/tc bench --backend inductor-cpu --size cpu \
  --threads 2 --models attn_block --no-eager --json >"$OUT/cpu_tc_fused.json" 2>/tmp/cpu_tc_fused.log
echo "=== torch (cpu, 2 threads)"
PYTHONUNBUFFERED=1 timeout 260 python3 bench/torch_compare.py --size cpu --threads 2 --no-warm \
  --models "${TC_HOST_TORCH_MODELS:-mlp,attn_block}" --json >"$OUT/cpu_torch.json" 2>/tmp/cpu_torch.log
tail -4 /tmp/cpu_torch.log
cat /tmp/cpu_tc.log /tmp/cpu_tc_openblas.log /tmp/cpu_tc_fused.log /tmp/cpu_torch.log >"$OUT/cpu_log.txt"
python3 - "$OUT" <<'PY'
import json, sys
d = sys.argv[1]
def load(f):
    try: return json.load(open(f"{d}/{f}"))
    except Exception as e: print(f, "unreadable:", e); return {}
tc, obl, fus, pt = load("cpu_tc.json"), load("cpu_tc_openblas.json"), load("cpu_tc_fused.json"), load("cpu_torch.json")
torch = {m.get("name"): m for m in pt.get("models", [])} if isinstance(pt, dict) else {}
print(f"{'workload':12} {'setting':10} {'tc ms':>8} {'ratio':>6} {'to':12} {'peak':>6} {'torch eager ms':>15} {'torch.compile ms':>17} {'tc/compile':>10}")
for label, run in (("default", tc), ("openblas", obl), ("fused", fus)):
    for m in run.get("models", []):
        c, p = m.get("ceiling") or {}, m.get("peak") or {}
        t = torch.get(m["name"], {})
        e, k = (t.get("eager") or {}).get("median_s"), (t.get("compile") or {}).get("median_s")
        ms = 1e3 * (m.get("median_s") or 0)
        print(f"{m['name']:12} {label:10} {ms:8.2f} {m.get('ratio') or 0:6.3f} {str(c.get('kind'))[:12]:12} "
              f"{p.get('ratio') or 0:6.3f} {1e3 * e if e else float('nan'):15.2f} {1e3 * k if k else float('nan'):17.2f} "
              f"{ms / (1e3 * k) if k else float('nan'):10.3f}")
PY
