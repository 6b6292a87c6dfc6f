"""The import graph of the engine and the kernels, read from the source with ``ast``: internal
imports at module top, no cycle, no private name imported across modules, and every name
imported from an engine module listed in that module's ``__all__``
(``tests/kernels/test_imports.py`` holds the kernels' own rules)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = {"engine": "gpurank.engine", "kernels": "gpurank.kernels"}
#: Libraries a function may import where it needs them: the optional and device libraries,
#: never loaded on a path that does not use them.
LAZY = ("sklearn", "matplotlib", "dask", "distributed", "cupy", "cudf", "cuml", "numba.cuda",
        "rmm", "dask_cuda", "dask_cudf")
#: The Dask driver's pieces that still import the pipeline inside its functions, as
#: (module, imported module); the list may only shrink.
DRIVER_LOCAL = {
    ("gpurank.engine.distributed.cross", "gpurank.kernels.cpu"),
    ("gpurank.engine.distributed.cross", "gpurank.kernels.cpu.blocks"),
    ("gpurank.engine.distributed.cross", "gpurank.engine.ranking"),
    ("gpurank.engine.distributed.cross", "gpurank.engine.distributed.tasks"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.metrics"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.pipeline"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.prepare"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.results"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.robust"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.clustering"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.io"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.summary"),
    ("gpurank.engine.distributed.driver", "gpurank.engine.ranking"),
    ("gpurank.engine.distributed.tasks", "gpurank.engine.backend"),
    ("gpurank.engine.distributed.tasks", "gpurank.engine.prepare"),
    ("gpurank.engine.distributed.tasks", "gpurank.kernels.cpu"),
    ("gpurank.engine.distributed.tasks", "gpurank.engine.ranking"),
}


def _modules():
    """{module name: (path, tree)} of every module of the two packages."""
    out = {}
    for folder, pkg in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = (path, ast.parse(path.read_text()))
    return out


MODULES = _modules()


def _target(module, node):
    """The absolute module an ``ImportFrom`` reads from."""
    if node.level == 0:
        return node.module or ""
    path, _ = MODULES[module]
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports():
    """(module, line, imported module, name or None, inside a function) of every internal
    import."""
    out = []
    for module, (_path, tree) in MODULES.items():
        local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef,
                                                                  ast.AsyncFunctionDef))
                 for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(module, node)
                if target.startswith("gpurank."):
                    for alias in node.names:
                        out.append((module, node.lineno, target, alias.name, id(node) in local))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("gpurank."):
                        out.append((module, node.lineno, alias.name, None, id(node) in local))
    return out


IMPORTS = _imports()


def _edge(target, name):
    """The module an import loads: the submodule ``target.name`` when there is one."""
    sub = f"{target}.{name}" if name else None
    return sub if sub in MODULES else target


def test_internal_imports_are_at_module_top():
    local = {(m, _edge(t, name)) for m, _line, t, name, inside in IMPORTS
             if inside and m.startswith("gpurank.engine")}
    assert local - DRIVER_LOCAL == set(), "import these at the top of the module"
    assert DRIVER_LOCAL - local == set(), "imported at the top now: shorten DRIVER_LOCAL"


DEVICE_LIBRARIES = ("cupy", "cudf", "cuml", "numba.cuda", "rmm", "dask_cuda", "dask_cudf")


def test_only_the_backend_imports_a_device_library():
    """The device libraries are imported by the backend package alone, each inside the
    function that needs it (``tests/test_cpu_path_imports.py`` checks the CPU path at run
    time)."""
    bad = []
    for module, (_path, tree) in MODULES.items():
        if not module.startswith("gpurank.engine"):
            continue
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            device = any(n == lib or n.startswith(lib + ".") for n in names
                         for lib in DEVICE_LIBRARIES)
            if device and (id(node) in top or not module.startswith("gpurank.engine.backend")):
                bad.append((module, node.lineno))
    assert bad == []


def test_the_module_graph_has_no_cycle():
    graph = {m: set() for m in MODULES}
    for module, _line, target, name, _inside in IMPORTS:
        dest = _edge(target, name)
        if dest in MODULES and dest != module:
            graph[module].add(dest)
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_private_name_crosses_engine_modules():
    bad = [(m, line, t, name) for m, line, t, name, _inside in IMPORTS
           if m.startswith("gpurank.engine") and name and name.startswith("_")
           and not name.startswith("__")]
    assert bad == []


def _exported(module):
    _path, tree = MODULES[module]
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return set(ast.literal_eval(node.value))
    return None


def test_every_name_imported_from_an_engine_module_is_in_its_all():
    bad = []
    for module, line, target, name, _inside in IMPORTS:
        if not target.startswith("gpurank.engine") or not name or target == module:
            continue
        if f"{target}.{name}" in MODULES:
            continue  # a submodule
        exported = _exported(target)
        if exported is None or name not in exported:
            bad.append((module, line, target, name))
    assert bad == []


def test_every_engine_module_has_an_all():
    missing = [m for m in MODULES if m.startswith("gpurank.engine") and _exported(m) is None
               and not m.endswith("__main__")]
    assert missing == []
