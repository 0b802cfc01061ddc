#!/usr/bin/env python3
"""Every relative link in every Markdown file of the repository resolves in a clone.

Checks links written [text](target) and <img src="target">: the target, relative to the file's folder
(or to the repository root when it starts with '/'), must exist inside the repository; '#anchor'
fragments must name a heading of the target file. External links (http, https, mailto) are not
fetched. Usage: doc_links.py SOURCE_DIR. Exit 0 when all resolve, 1 with the list otherwise."""
import os, re, subprocess, sys

root = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else ".")
# The files git tracks (a clone has exactly these); without git, every .md outside build folders.
try:
    files = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True, check=True).stdout.split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
             if f.endswith(".md") and "/build" not in d]
link = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)|<img[^>]*src=\"([^\"]+)\"")

def anchors(path):
    out = set()
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        out.add(slug)
    return out

bad, checked = [], 0
for rel in sorted(files):
    path = os.path.join(root, rel)
    in_code = False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for m in link.finditer(line):
            target = next(g for g in m.groups() if g)
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            checked += 1
            file_part, _, frag = target.partition("#")
            if file_part:
                base = root if file_part.startswith("/") else os.path.dirname(path)
                dest = os.path.realpath(os.path.join(base, file_part.lstrip("/")))
                if not (dest == root or dest.startswith(root + os.sep)):
                    bad.append(f"{rel}:{n}: {target}: outside the repository (dead in a clone)")
                    continue
                if not os.path.exists(dest):
                    bad.append(f"{rel}:{n}: {target}: no such file")
                    continue
            else:
                dest = path
            if frag and dest.endswith(".md") and frag.lower() not in anchors(dest):
                bad.append(f"{rel}:{n}: {target}: no heading '#{frag}' in {os.path.relpath(dest, root)}")
for b in bad:
    print("FAIL", b)
print(f"doc_links: {checked} relative links in {len(files)} Markdown files, {len(bad)} broken")
sys.exit(1 if bad else 0)
