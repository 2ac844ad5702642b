#!/usr/bin/env python3
"""Compares two PTX files modulo names (the back half of scripts/compare-ptx.sh).

Usage: ptx-diff.py BASE.ptx HEAD.ptx [LABEL]

Each function (.entry kernel or .func) becomes its instruction sequence with the names taken out:
mangled names (_Z...), basic-block labels numbered by the function's position in the file, local
depots and string constants. Debug and line information (.loc, .file, comments, debug sections) is
dropped. The two files match when they hold the same multiset of functions and the same
module-level declarations; prints one line, and the unmatched functions (demangled) otherwise.
Exit status 0 when they match, 1 when not.
"""
import collections
import re
import shutil
import subprocess
import sys

MANGLED = re.compile(r"_Z[A-Za-z0-9_$]+")
BLOCK_LABEL = re.compile(r"\$L__BB\d+_")
DEPOT = re.compile(r"__local_depot\d+")
STRING = re.compile(r"\$str(\$\d+)?")


def normalize(line):
    line = MANGLED.sub("@name", line)
    line = BLOCK_LABEL.sub("$L__BB_", line)
    line = DEPOT.sub("__local_depot", line)
    return STRING.sub("$str", line)


def split(path):
    """(functions: list of (mangled name, kind, normalized text), module lines)."""
    functions, module = [], []
    lines = open(path).read().splitlines()
    i = 0
    in_debug = False
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        i += 1
        if stripped.startswith(".section") and "debug" in stripped:
            in_debug = True
        if in_debug:
            if stripped == "}":
                in_debug = False
            continue
        if not stripped or stripped.startswith("//") or stripped.startswith(".loc") \
                or stripped.startswith(".file"):
            continue
        if ".entry" in stripped or re.search(r"(^|\s)\.func(\s|$)", stripped):
            kind = "entry" if ".entry" in stripped else "func"
            match = MANGLED.search(stripped) or re.search(r"([A-Za-z_$][\w$]*)\s*\(?\s*$", stripped)
            header = [stripped]
            # The signature runs to the body's '{' or, for a declaration, to ';'.
            body, depth, declaration = [], 0, False
            while i < len(lines):
                s = lines[i].strip()
                i += 1
                if s.startswith(".loc") or s.startswith("//") or s.startswith(".file") or not s:
                    continue
                if depth == 0 and s.endswith(";") and not body and s != "{":
                    header.append(s)
                    if s.endswith(";") and (s == ";" or s.endswith(");") or s.endswith(")")):
                        declaration = s == ";" or s.endswith(");")
                        if declaration:
                            break
                    continue
                if s == "{" or s.endswith("{"):
                    depth += s.count("{")
                    body.append(s)
                    continue
                if depth == 0:
                    header.append(s)
                    continue
                depth += s.count("{") - s.count("}")
                body.append(s)
                if depth == 0:
                    break
            if declaration:
                continue  # prototypes of called functions: their definitions are compared
            name = match.group(0) if match else "?"
            text = "\n".join(normalize(x) for x in header + body)
            functions.append((name, kind, text))
            continue
        module.append(normalize(stripped))
    return functions, module


def demangle(names):
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if not tool or not names:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout
    return out.splitlines() if out else names


def main():
    base_path, head_path = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else head_path
    base_functions, base_module = split(base_path)
    head_functions, head_module = split(head_path)
    base_set = collections.Counter((k, t) for _, k, t in base_functions)
    head_set = collections.Counter((k, t) for _, k, t in head_functions)
    kernels = sum(1 for _, k, _ in head_functions if k == "entry")
    funcs = len(head_functions) - kernels
    module_same = collections.Counter(base_module) == collections.Counter(head_module)
    if base_set == head_set and module_same:
        print(f"{label}: identical modulo names ({kernels} kernels, {funcs} functions)")
        return 0
    only_base = base_set - head_set
    only_head = head_set - base_set
    print(f"{label}: DIFFERS ({kernels} kernels, {funcs} functions; "
          f"{sum(only_base.values())} only at base, {sum(only_head.values())} only in the tree"
          f"{'' if module_same else '; module-level declarations differ'})")
    for side, functions, unmatched in (("base", base_functions, only_base),
                                       ("tree", head_functions, only_head)):
        names = []
        remaining = collections.Counter(unmatched)
        for name, kind, text in functions:
            if remaining[(kind, text)] > 0:
                remaining[(kind, text)] -= 1
                names.append(name)
        for name in demangle(names):
            print(f"  only {side}: {name[:300]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
