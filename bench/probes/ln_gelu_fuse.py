"""ln_gelu_fuse.py — rewrites ln_gelu's generated inductor-cpu unit with fewer loops per block of
a row, for row_kernel_host.sh to time beside the unit as generated. The codegen splits the block
into three loops (normalize into the row, erf into tc_part, x*0.5*(1+erf) back into the row)
because on AVX2's 16 registers the erf's constants and temporaries spill when the loop holds
more (codegen_loop.c, costly_prim); AVX-512 has 32, so one loop may win there.

Usage: ln_gelu_fuse.py UNIT.c MODE OUT.c, MODE erf-combine (the erf and the combine in one loop)
or all (normalize, erf and combine in one loop)."""
import re
import sys

src = open(sys.argv[1]).read()
mode = sys.argv[2]
loop = r"        #pragma omp simd\n        for \(int64_t r = tc_rb; r < tc_re; r\+\+\) \{\n"
pair = re.search(r"        float tc_part\[256\][^\n]*\n" + loop + r"(.*?)\n        \}\n" + loop + r"(.*?)\n        \}\n", src, re.S)
if not pair:
    sys.exit("ln_gelu_fuse.py: no erf and combine loops in " + sys.argv[1])
erf, combine = pair.group(1), pair.group(2)
erf = erf.replace("          tc_part[r - tc_rb] = v25;", "").rstrip() + "\n"
combine = combine.replace("          const float v22 = row_out0[r];\n", "").replace("          const float v25 = tc_part[r - tc_rb];\n", "")
head = "        #pragma omp simd\n        for (int64_t r = tc_rb; r < tc_re; r++) {\n"
if mode == "erf-combine":
    src = src[: pair.start()] + head + erf + combine + "\n        }\n" + src[pair.end():]
elif mode == "all":
    norm = re.search(loop + r"(          const int64_t j16.*?)          row_out0\[r\] = v22;[^\n]*\n        \}\n", src, re.S)
    if not norm:
        sys.exit("ln_gelu_fuse.py: no normalize loop")
    erf = erf.replace("          const float v22 = row_out0[r];\n", "")
    src = src[: norm.start()] + head + norm.group(1) + erf + combine + "\n        }\n" + src[pair.end():]
else:
    sys.exit("ln_gelu_fuse.py: MODE is erf-combine or all, not " + mode)
open(sys.argv[3], "w").write(src)
