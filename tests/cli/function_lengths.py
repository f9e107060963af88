#!/usr/bin/env python3
"""Lists every function body in the given folders longer than LIMIT lines.

Usage: function_lengths.py LIMIT DIR...  (exit 1 if any). A function is a top-level brace
block (not inside another function) whose head has a parameter list and is not a
namespace, type, control statement, lambda or initializer. Comments, strings and
preprocessor lines are blanked first, keeping line numbers."""
import glob
import re
import sys

HEAD_NOT_FUNCTION = re.compile(
    r"^(namespace|struct|class|enum|union|if|for|while|switch|catch|else|do|try)\b"
    r"|\[[^\]]*\]\s*(\([^)]*\))?\s*(mutable)?\s*(->[^{]*)?$|=\s*$")


def keep_lines(m):
    return "\n" * m.group(0).count("\n")


def blank(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r'R"\((.*?)\)"', lambda m: '""' + keep_lines(m), text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return re.sub(r"(?m)^\s*#.*$", "", text)


def long_functions(path, limit):
    text = blank(open(path, encoding="utf-8").read())
    stack, line, head_start, found = [], 1, 0, []
    for k, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = re.sub(r"^\s*template\s*<[^{]*?>\s*", "", text[head_start:k].strip())
            is_function = ")" in head and not HEAD_NOT_FUNCTION.search(head[:300])
            top = not any(f for f, _ in stack)
            stack.append((is_function and top, line))
            head_start = k + 1
        elif c == "}":
            if stack:
                is_function, first = stack.pop()
                if is_function and line - first + 1 > limit:
                    found.append((line - first + 1, first))
            head_start = k + 1
        elif c == ";":
            head_start = k + 1
    return found


def main():
    limit = int(sys.argv[1])
    bad = 0
    for d in sys.argv[2:]:
        for path in sorted(glob.glob(d + "/**/*.[ch]pp", recursive=True)):
            for n, first in long_functions(path, limit):
                print(f"{path}:{first}: function of {n} lines (limit {limit})")
                bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
