"""No block of code is written twice in the engine or the kernels.

The scan reads every module of ``engine/`` and ``kernels/`` as tokens, one logical line at a
time, leaving out comments, docstrings, imports, signatures, declared fields and constants
and blank lines, and looks for 6 or more
consecutive lines that appear twice: the same lines, or the same shape (every name, number
and text replaced by a placeholder, so ``a = f(x)`` and ``b = g(y)`` match). A repeated block
is allowed only where each copy is marked: it lies in the paragraph (the lines up to the
next blank one) that opens with a comment ``# duplicate-code: <why>``. Boilerplate and an
intended write-out, such as a compiled loop written out for speed, say so and say why.

Run it as a script to list what it finds: ``python tests/test_duplicate_code.py``. And no
module of the engine is over 700 lines.
"""

from __future__ import annotations

import ast
import io
import keyword
import pathlib
import sys
import tokenize
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parents[1]
MIN_LINES = 6
MARK = "# duplicate-code:"
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
         tokenize.ENCODING, tokenize.ENDMARKER}


def _docstring_lines(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.update(range(body[0].lineno, body[0].end_lineno + 1))
    return out


def _signature_lines(tree):
    """The decorators and headers of functions and classes (as pylint's ignore-signatures)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.update(range(first, node.body[0].lineno))
    return out


def _import_lines(tree):
    return {line for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for line in range(node.lineno, node.end_lineno + 1)}


def _is_literal(node):
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _declaration_lines(tree):
    """Lines that declare data rather than compute: the fields of a class
    (``name: type = default``) and the constants of a module or class (``NAME = literal``),
    like a signature."""
    out = set()
    for scope in [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        for stmt in scope.body:
            value = getattr(stmt, "value", None)
            if isinstance(stmt, ast.AnnAssign) and isinstance(scope, ast.ClassDef) or \
                    isinstance(stmt, (ast.Assign, ast.AnnAssign)) and value is not None \
                    and _is_literal(value):
                out.update(range(stmt.lineno, stmt.end_lineno + 1))
    return out


def logical_lines(text):
    """(first line number, exact text, shape) of each logical line of code. The shape
    keeps the keywords, the operators, the functions called and the attributes read, and
    writes every other name, number and text as a placeholder."""
    tree = ast.parse(text)
    skip = (_docstring_lines(tree) | _import_lines(tree) | _declaration_lines(tree)
            | _signature_lines(tree))
    out, exact, shape, first = [], [], [], None
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in _SKIP or t.type == tokenize.NEWLINE]
    for k, tok in enumerate(tokens):
        if tok.type == tokenize.NEWLINE:
            if exact and first not in skip:
                out.append((first, " ".join(exact), " ".join(shape)))
            exact, shape, first = [], [], None
            continue
        if first is None:
            first = tok.start[0]
        exact.append(tok.string)
        after = tokens[k + 1].string if k + 1 < len(tokens) else ""
        before = tokens[k - 1].string if k else ""
        if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) \
                and after != "(" and before != ".":
            shape.append("N")
        elif tok.type == tokenize.NUMBER:
            shape.append("0")
        elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_START", -1):
            shape.append("S")
        else:
            shape.append(tok.string)
    return out


def marked_regions(text):
    """Line ranges marked ``# duplicate-code: ...``: from the comment to the next blank
    line (one paragraph of code)."""
    lines = text.splitlines()
    regions = []
    for i, line in enumerate(lines):
        if line.strip().startswith(MARK):
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].strip()),
                       len(lines))
            regions.append((i + 1, end))
    return regions


def scan(paths=None):
    """Blocks of ``MIN_LINES`` or more logical lines found twice: a list of
    ``(kind, [(path, first line, last line, marked), ...])``."""
    paths = paths or sorted(p for d in ("engine", "kernels") for p in (ROOT / d).rglob("*.py"))
    files = {}
    for path in paths:
        text = path.read_text()
        files[path] = (logical_lines(text), marked_regions(text))
    found, exact_places = [], set()
    for kind, key in (("same lines", 1), ("same shape", 2)):
        windows = defaultdict(list)
        for path, (lines, _) in files.items():
            for i in range(len(lines) - MIN_LINES + 1):
                windows[tuple(x[key] for x in lines[i:i + MIN_LINES])].append((path, i))
        seen = exact_places  # a same-shape window of a same-lines one is reported once
        for places in windows.values():
            if len(places) < 2 or len({p for p, _ in places}) == 1 and _overlap(places):
                continue
            block = []
            for path, i in places:
                lines, regions = files[path]
                a, b = lines[i][0], lines[i + MIN_LINES - 1][0]
                marked = any(lo <= a and b <= hi for lo, hi in regions)
                name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                block.append((name.as_posix(), a, b, marked))
            ident = tuple(sorted((p, a) for p, a, _b, _m in block))
            if ident not in seen:
                seen.add(ident)
                found.append((kind, block))
    return _merged(found)


def _overlap(places):
    starts = sorted(i for _, i in places)
    return all(b - a < MIN_LINES for a, b in zip(starts, starts[1:]))


def _merged(found):
    """Consecutive windows of the same copies reported as one block."""
    out = []
    for kind, block in sorted(found, key=lambda f: (f[0], [(p, a) for p, a, _, _ in f[1]])):
        if out and out[-1][0] == kind and len(out[-1][1]) == len(block) and all(
                p0 == p1 and a1 <= b0 + 1 + 40 and a1 >= a0
                for (p0, a0, b0, _), (p1, a1, _b1, _m1) in zip(out[-1][1], block)):
            out[-1] = (kind, [(p0, a0, max(b0, b1), m0 and m1) for (p0, a0, b0, m0),
                              (_p1, _a1, b1, m1) in zip(out[-1][1], block)])
        else:
            out.append((kind, block))
    return out


def unmarked(found):
    return [(kind, block) for kind, block in found if not all(m for *_, m in block)]


def test_no_block_is_written_twice_unless_marked():
    found = scan()
    bad = unmarked(found)
    assert bad == [], "\n".join(f"{kind}: " + ", ".join(f"{p}:{a}-{b}" for p, a, b, _ in blk)
                                for kind, blk in bad)


def test_no_engine_module_is_over_700_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / "engine").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 700}
    assert long == {}


def test_the_scan_finds_a_copy(tmp_path):
    body = "\n".join(f"    v{i} = w({i})" + " + x" * (i + 1) for i in range(7))
    a = tmp_path / "a.py"
    b = tmp_path / "b.py"
    a.write_text(f"def f(w, x):\n{body}\n    return v0\n")
    b.write_text(f"def g(w, x):\n{body.replace('v', 'u')}\n    return u0\n")
    assert [k for k, _ in scan([a, b])] == ["same shape"]
    b.write_text(f"def g(w, x):\n    {MARK} written out twice on purpose\n{body}\n"
                 "    return v0\n")
    found = scan([a, b])
    assert [k for k, _ in found] == ["same lines"]
    assert len(unmarked(found)) == 1  # one copy marked is not enough
    a.write_text(f"def f(w, x):\n    {MARK} written out twice on purpose\n\n{body}\n"
                 "    return v0\n")
    assert len(unmarked(scan([a, b]))) == 1  # a mark ends at the blank line
    a.write_text(f"def f(w, x):\n    {MARK} written out twice on purpose\n{body}\n"
                 "    return v0\n")
    assert unmarked(scan([a, b])) == []


if __name__ == "__main__":
    for kind, block in scan():
        flag = "" if all(m for *_, m in block) else "UNMARKED "
        print(f"{flag}{kind}: " + ", ".join(f"{p}:{a}-{b}" for p, a, b, _ in block))
    sys.exit(0)
