#!/usr/bin/env bash
# On the GPU machine's host CPU (through the device tool; .dev/gpu-build carried): the
# inductor-cpu GEMM issue's figures, tc and PyTorch in the same call, 2 threads, CPU shapes.
# The host is a VM whose cores run at different speeds and change speed between runs minutes
# apart (session 12: the same kernels 1.3x apart by core, the peak sampled around mlp 0.21-0.34
# TF/s), so tc and PyTorch run on the same two cores, the fastest ones bench/probes/core_speed.c
# finds (TC_HOST_CORES=a,b chooses them, TC_HOST_CORES=none leaves the threads unpinned), in two
# rounds, tc then PyTorch then tc then PyTorch:
#   - tc bench on inductor-cpu for ln_gelu, softmax, mlp, attn_block (cpu.blas auto: the
#     generated GEMM on that AVX-512 Xeon), each against its ceiling (streaming copy; OpenBLAS
#     sgemm and the cores' peak FMA rate); round 2: mlp and attn_block,
#   - bench/torch_compare.py --size cpu --threads 2 (eager and torch.compile; 40-60 s of compile
#     per model) for TC_HOST_TORCH_MODELS (default mlp,attn_block), each round,
#   - with TC_HOST_VARIANTS=1, tc bench with cpu.blas=openblas for mlp and attn_block and
#     attn_block with cpu.attention=fused.
# JSON under $OUT (cpu_tc.json, cpu_tc2.json, cpu_torch.json, cpu_torch2.json, cpu_tc_openblas.json,
# cpu_tc_fused.json), a short table last, one row per round.
set -u
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
B=.dev/gpu-build
export LD_LIBRARY_PATH=$PWD/$B/lib:${LD_LIBRARY_PATH:-}
export TC_CACHE_DIR=/tmp/tc-cache-host
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/Flags:.*\(avx512f\).*/Flags: ... avx512f .../' | head -3
cores=${TC_HOST_CORES:-}
if [ -z "$cores" ]; then
  cc -O2 -fopenmp -Ibench -Ibench/probes -Icore/include -Iplugin-api -Iexamples/include bench/probes/core_speed.c \
    bench/probes/probe_bench_stubs.c bench/bench_peak.c -o /tmp/core_speed -lm && /tmp/core_speed 2 >/tmp/core_speed.txt
  tr '\n' ';' </tmp/core_speed.txt | sed 's/;/; /g'; echo
  cores=$(sed -n 's/^fastest: //p' /tmp/core_speed.txt)
fi
pin=()
[ -n "$cores" ] && [ "$cores" != none ] && pin=(taskset -c "$cores")
echo "=== tc and PyTorch on cores ${cores:-unpinned}"
models=${TC_HOST_MODELS:-ln_gelu,softmax,mlp,attn_block}
torch_models=${TC_HOST_TORCH_MODELS:-mlp,attn_block}
: >/tmp/cpu_all.log
for round in 1 2; do
  sfx=; [ $round = 2 ] && sfx=2 && models=mlp,attn_block
  echo "=== round $round: tc bench inductor-cpu ($models, cpu.blas auto)"
  "${pin[@]}" timeout 200 $B/bin/tc bench --backend inductor-cpu --size cpu --threads 2 --models "$models" --no-eager \
    --json >"$OUT/cpu_tc$sfx.json" 2>>/tmp/cpu_all.log
  echo "=== round $round: torch (cpu, 2 threads: $torch_models)"
  PYTHONUNBUFFERED=1 "${pin[@]}" timeout 200 python3 bench/torch_compare.py --size cpu --threads 2 --no-warm \
    --models "$torch_models" --json >"$OUT/cpu_torch$sfx.json" 2>>/tmp/cpu_all.log
done
if [ -n "${TC_HOST_VARIANTS:-}" ]; then
  echo "=== tc bench inductor-cpu mlp and attn_block, cpu.blas=openblas"
  TC_OPTIONS=cpu.blas=openblas "${pin[@]}" timeout 150 $B/bin/tc bench --backend inductor-cpu --size cpu --threads 2 \
    --models mlp,attn_block --no-eager --json >"$OUT/cpu_tc_openblas.json" 2>>/tmp/cpu_all.log
  echo "=== tc bench inductor-cpu attn_block, cpu.attention=fused"
  TC_OPTIONS=cpu.attention=fused "${pin[@]}" timeout 120 $B/bin/tc bench --backend inductor-cpu --size cpu \
    --threads 2 --models attn_block --no-eager --json >"$OUT/cpu_tc_fused.json" 2>>/tmp/cpu_all.log
fi
cp /tmp/cpu_all.log "$OUT/cpu_log.txt"
python3 - "$OUT" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(f):
    try: return json.load(open(f"{d}/{f}"))
    except Exception as e: print(f, "unreadable:", e); return {}
runs = [("1", load("cpu_tc.json"), load("cpu_torch.json")), ("2", load("cpu_tc2.json"), load("cpu_torch2.json"))]
for label, f in (("openblas", "cpu_tc_openblas.json"), ("fused", "cpu_tc_fused.json")):
    if os.path.exists(f"{d}/{f}"): runs.append((label, load(f), runs[0][2]))
print(f"{'workload':12} {'round':8} {'tc ms':>8} {'ratio':>6} {'to':12} {'peak':>6} {'torch eager ms':>15} {'torch.compile ms':>17} {'tc/compile':>10}")
for label, run, pt in runs:
    torch = {m.get("name"): m for m in pt.get("models", [])} if isinstance(pt, dict) else {}
    for m in run.get("models", []):
        c, p = m.get("ceiling") or {}, m.get("peak") or {}
        t = torch.get(m["name"], {})
        e, k = (t.get("eager") or {}).get("median_s"), (t.get("compile") or {}).get("median_s")
        ms = 1e3 * (m.get("median_s") or 0)
        print(f"{m['name']:12} {label:8} {ms:8.2f} {m.get('ratio') or 0:6.3f} {str(c.get('kind'))[:12]:12} "
              f"{p.get('ratio') or 0:6.3f} {1e3 * e if e else float('nan'):15.2f} {1e3 * k if k else float('nan'):17.2f} "
              f"{ms / (1e3 * k) if k else float('nan'):10.3f}")
PY
