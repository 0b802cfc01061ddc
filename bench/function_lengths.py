#!/usr/bin/python3
"""The longest C++ functions of the tree: each function body's lines, found by a heuristic (a line that
looks like a function head and ends in '{', then braces counted to its end; lambdas inside count with
their function, a head split over several lines is missed). Prints the functions over --over lines,
longest first, and their count.

usage: /usr/bin/python3 bench/function_lengths.py [--over 100] [--rev REV]   (from the repository root;
       --rev: the tree of a commit instead of the working tree)"""
import re, subprocess, sys, argparse
ap = argparse.ArgumentParser()
ap.add_argument("--over", type=int, default=100)
ap.add_argument("--rev", default=None)
a = ap.parse_args()
files = subprocess.run(["git", "ls-files", "*.cpp", "*.hpp"] if not a.rev else ["git", "ls-tree", "-r", "--name-only", a.rev], capture_output=True, text=True).stdout.split()
files = [f for f in files if f.endswith((".cpp", ".hpp"))]
head = re.compile(r"^\s*(?:[\w:<>,~*&\s\[\]]+?)\b([~\w:]+)\s*\([^;]*\)\s*(?:const\s*)?(?:override\s*)?(?:noexcept\s*)?(?:->\s*[\w:<>]+\s*)?(?::.*)?\{\s*$")
out = []
for f in files:
    text = subprocess.run(["git", "show", f"{a.rev}:{f}"], capture_output=True, text=True).stdout if a.rev else open(f, errors="replace").read()
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = head.match(lines[i])
        if m and not re.match(r"^\s*(if|for|while|switch|catch|else|do|return)\b", lines[i]) and "=" not in lines[i].split("(")[0]:
            depth = 0; j = i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0 and j > i: break
                j += 1
            n = j - i + 1
            if n > a.over: out.append((n, f, i + 1, m.group(1)))
            i = j + 1 if n > 2 else i + 1
            continue
        i += 1
out.sort(reverse=True)
for n, f, l, name in out: print(f"{n:5d} {f}:{l} {name}")
print(f"{len(out)} functions over {a.over} lines")
