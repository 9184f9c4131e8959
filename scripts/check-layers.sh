#!/usr/bin/env bash
# Checks that the core's stages include downward only. The order is core/LAYERS; every
# `#include "..."` in core/ and registry/ is resolved the way the build does (the including
# file's folder, then core/include, core/, registry/, plugin-api/) and its stage compared with
# the includer's. Exits 1 naming file:line, the include and both stages on an upward include or
# on an include that resolves to no file.
#   scripts/check-layers.sh [--root DIR]   check the tree at DIR (default: this repository)
#   scripts/check-layers.sh --self-test    check the checker on fixtures in a temp dir
set -u
exec python3 - "$(cd "$(dirname "$0")/.." && pwd)" "$0" "$@" <<'PY'
import os, re, subprocess, sys, tempfile

PUBLIC = ["core/include", "plugin-api"]       # below every stage
SEARCH = ["core/include", "core", "registry", "plugin-api"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

def read_layers(root):
    order, dirs = [], []                      # dirs: (folder, stage), longest first
    with open(os.path.join(root, "core/LAYERS")) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            order.append(words[0])
            dirs += [(d.rstrip("/"), words[0]) for d in words[1:]]
    dirs += [(d, "public") for d in PUBLIC]
    dirs.sort(key=lambda x: -len(x[0]))
    return order, dirs

def stage_of(rel, dirs):
    for d, stage in dirs:
        if rel == d or rel.startswith(d + "/"):
            return stage
    return None

def check(root):
    order, dirs = read_layers(root)
    rank = {s: i for i, s in enumerate(order)}
    rank["public"] = -1
    errors, n = [], 0
    for top in ("core", "registry"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                src = stage_of(rel, dirs)
                with open(path, errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        n += 1
                        inc = m.group(1)
                        where = f"{rel}:{lineno}: #include \"{inc}\""
                        cands = [os.path.join(dirpath, inc)] + [os.path.join(root, d, inc) for d in SEARCH]
                        hit = next((c for c in cands if os.path.isfile(c)), None)
                        if hit is None:
                            errors.append(f"{where}: header not found")
                            continue
                        dst = stage_of(os.path.relpath(os.path.realpath(hit), os.path.realpath(root)), dirs)
                        if src is None or dst is None:
                            errors.append(f"{where}: outside every stage of core/LAYERS "
                                          f"(from {src or '?'} to {dst or '?'})")
                        elif rank[dst] > rank[src]:
                            errors.append(f"{where}: upward include, from stage {src} to stage {dst}")
    for e in errors:
        print(e)
    print(f"check-layers: {n} includes, {len(errors)} violations ({' < '.join(order)})")
    return 1 if errors else 0

def self_test(script):
    def tree(files):
        d = tempfile.mkdtemp(prefix="check-layers-")
        files = dict(files, **{"core/LAYERS": "low core/low registry\nhigh core/high\n",
                               "core/include/tc/tc.h": "/* public */\n",
                               "core/low/low.h": '#include "tc/tc.h"\n',
                               "core/high/high.h": '#include "low/low.h"\n',
                               "registry/reg.c": '#include "low/low.h"\n'})
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        return d
    cases = [("clean tree", {"core/high/high.c": '#include "high/high.h"\n#include "low/low.h"\n'}, 0, None),
             ("upward include", {"core/low/low.c": '#include "low/low.h"\n#include "high/high.h"\n'}, 1,
              'core/low/low.c:2: #include "high/high.h": upward include, from stage low to stage high'),
             ("registry above its level", {"registry/bad.c": '#include "high/high.h"\n'}, 1,
              "upward include, from stage low to stage high"),
             ("missing header", {"core/high/high.c": '#include "nowhere.h"\n'}, 1, "header not found")]
    bad = 0
    for label, files, want_rc, want_text in cases:
        root = tree(files)
        r = subprocess.run(["bash", script, "--root", root], capture_output=True, text=True)
        ok = r.returncode == want_rc and (want_text is None or want_text in r.stdout)
        print(f"{'ok ' if ok else 'FAIL'} {label}: exit {r.returncode} (want {want_rc})")
        if not ok:
            print("    " + r.stdout.replace("\n", "\n    "))
        bad += not ok
        subprocess.run(["rm", "-rf", root])
    print(f"check-layers self-test: {len(cases) - bad} passed, {bad} failed")
    return 1 if bad else 0

repo, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
if args == ["--self-test"]:
    sys.exit(self_test(script))
if len(args) == 2 and args[0] == "--root":
    sys.exit(check(args[1]))
if not args:
    sys.exit(check(repo))
print("usage: check-layers.sh [--root DIR | --self-test]", file=sys.stderr)
sys.exit(2)
PY
