#!/usr/bin/env python3
"""Runs a documentation page as written and checks what it says the commands print.

    python3 tests/test_docs.py COSMIC_BINARY PAGE.md     (ctest runs it on docs/tutorial.md)

In an empty temporary directory, in the page's order:
- a ```yaml file=NAME block is written to NAME;
- a ```sh block runs in bash (-e, -o pipefail) with COSMIC_BINARY's directory first on PATH;
- a ```python block runs with this interpreter;
- a ```text block is what the sh or python block right before it (blank lines between at most)
  prints on stdout: line by line, trailing spaces aside, where a line "..." stands for any
  number of lines and "..." inside a line for any text.
A block that exits with a non-zero status, or prints something else, fails the test. The model's
numbers are tested against hand-computed values elsewhere; this keeps the page true.
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w*)(.*)$")


def blocks(text):
    """(kind, attributes, body, line number) of each fenced block, and whether only blank lines
    separate it from the block before."""
    out, lines, i, gap = [], text.split("\n"), 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            gap = gap if lines[i].strip() == "" else False
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        out.append((m.group(1), m.group(2).strip(), "\n".join(body), start, gap is True))
        gap, i = True, i + 1
    return out


def matches(expected, actual):
    """Line-wise match with "..." wildcards (a whole line: any lines; inside a line: any text)."""
    exp = [l.rstrip() for l in expected.rstrip("\n").split("\n")]
    act = [l.rstrip() for l in actual.rstrip("\n").split("\n")] if actual.strip() else []

    def line_ok(e, a):
        return re.fullmatch(".*".join(re.escape(p) for p in e.split("...")), a) is not None

    def go(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and line_ok(exp[i], act[j]) and go(i + 1, j + 1)

    return go(0, 0)


def main(cosmic, page):
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(cosmic)) + os.pathsep + os.environ.get("PATH", ""))
    with open(page) as f:
        found = blocks(f.read())
    failures, ran = [], 0
    with tempfile.TemporaryDirectory() as work:
        last = None  # (line, stdout) of the last block run
        for kind, attrs, body, line, adjacent in found:
            where = f"{page}:{line}"
            if kind == "yaml" and attrs.startswith("file="):
                with open(os.path.join(work, attrs[len("file="):]), "w") as f:
                    f.write(body + "\n")
            elif kind in ("sh", "python"):
                cmd = ["bash", "-e", "-o", "pipefail", "-c", body] if kind == "sh" else [sys.executable, "-c", body]
                r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
                ran += 1
                if r.returncode != 0:
                    failures.append(f"{where}: exit status {r.returncode}\n{r.stderr}")
                last = (line, r.stdout)
                continue
            elif kind == "text":
                if not adjacent or last is None:
                    failures.append(f"{where}: an output block that follows no sh or python block")
                elif not matches(body, last[1]):
                    failures.append(f"{where}: the block at line {last[0]} printed\n{last[1]}\ninstead of\n{body}\n")
            last = None
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    print(f"{page}: {ran} blocks run, {len(failures)} failed")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
