#!/usr/bin/env python3
"""Every kernel in gpu/*.cu may be launched early (gpu_common.cuh,
gpu::launch): each __global__ function must call gpu::wait_prior() in its
body, every launch must go through gpu::launch (no <<< >>>), and nothing
before a kernel's first wait_prior() may store to memory. Usage:
check_kernels.py GPU_DIR. Exit 1, naming each offender, when one breaks it."""
import os
import re
import sys


def body_end(s, b):
    depth = 0
    for q in range(b, len(s)):
        if s[q] == "{":
            depth += 1
        elif s[q] == "}":
            depth -= 1
            if depth == 0:
                return q
    return len(s)


def strip_comments(s):
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return re.sub(r"//[^\n]*", " ", s)


def check(path):
    s = strip_comments(open(path).read())
    bad = []
    if "<<<" in s:
        bad.append("a <<< >>> launch (use gpu::launch)")
    for m in re.finditer(r"__global__", s):
        b, semi = s.find("{", m.end()), s.find(";", m.end())
        if b < 0 or (0 <= semi < b):
            continue  # a declaration
        name = re.findall(r"(\w+)\s*\(", s[m.end():b])
        name = name[-1] if name else "?"
        body = s[b:body_end(s, b)]
        w = body.find("gpu::wait_prior()")
        if w < 0:
            bad.append(f"kernel {name}: no gpu::wait_prior()")
            continue
        # stores before the wait: an assignment through a pointer or index
        pre = body[:w]
        store = (r"(^|[;{}])\s*\*\s*\w+\s*[-+*/|&^]?=(?!=)"  # *p = v
                 r"|\w+\s*\[[^\]]*\]\s*[-+*/|&^]?=(?!=)"  # p[i] = v
                 r"|->\s*\w+\s*[-+*/|&^]?=(?!=)"  # p->f = v
                 r"|\bst[v]?\s*[<(]|atomic")  # gpu::st / stv, atomics
        if re.search(store, pre, flags=re.M):
            bad.append(f"kernel {name}: a store before gpu::wait_prior()")
    return [f"{path}: {b}" for b in bad]


def main():
    gdir = sys.argv[1]
    problems, kernels = [], 0
    for f in sorted(os.listdir(gdir)):
        if f.endswith(".cu"):
            p = os.path.join(gdir, f)
            kernels += len(re.findall(r"__global__", open(p).read()))
            problems += check(p)
    for p in problems:
        print(p)
    print(f"{kernels} kernels checked, {len(problems)} problems")
    return 1 if problems or kernels == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
