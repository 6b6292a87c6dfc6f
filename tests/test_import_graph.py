"""The import graph of the engine and the kernels, read from the source with ``ast``.

- Every import of a gpurank module sits at its module's top; a function imports only the
  libraries of :data:`LAZY`, where it needs them. The one other place is a package's
  module-level ``__getattr__`` (PEP 562), which exists to load a package's parts on first
  use (``gpurank.kernels`` loads its backends there, so that ``import gpurank.kernels``
  imports no Numba).
- The modules form no cycle.
- No name with a leading underscore is imported from another module, and a private module
  (``_launch``) is imported only from inside its own package.
- Every name imported from another module is in that module's ``__all__``, and every module
  declares one.

``tests/kernels/test_imports.py`` checks at run time what importing the kernels loads.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = {"engine": "gpurank.engine", "kernels": "gpurank.kernels"}
#: What a function may import where it needs it: the device libraries and the CUDA kernels
#: (they import numba.cuda at their top); the optional ones: Dask, mlperf-logging (the MLPerf
#: reader works without it) and rich (the progress bars on a terminal; the GPU machine of
#: benchmarks/gpu_check.py does not have it, tests/test_gpu_check.py); and the heavy ones only
#: one step uses: scikit-learn's models, matplotlib's figures, SciPy's least squares (together
#: seconds of import time that a command without that step never pays).
LAZY = ("sklearn", "scipy", "matplotlib", "dask", "distributed", "mlperf_logging", "rich",
        "cupy", "cudf", "cuml", "rmm", "dask_cuda", "dask_cudf", "numba.cuda",
        "gpurank.kernels.cuda")
DEVICE_LIBRARIES = ("cupy", "cudf", "cuml", "numba.cuda", "rmm", "dask_cuda", "dask_cudf",
                    "gpurank.kernels.cuda")


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


def _is_package(module):
    return MODULES[module][0].name == "__init__.py"


def _target(module, node):
    """The absolute module an ``ImportFrom`` reads from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _names(module, node):
    """What each name of an import statement loads: ``from numba import cuda`` loads
    ``numba.cuda``, ``from .spec import AnalysisSpec`` loads ``gpurank.engine.spec``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    target = _target(module, node)
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES
            or _within(f"{target}.{a.name}", LAZY) else target for a in node.names]


def _within(name, libraries):
    return any(name == lib or name.startswith(lib + ".") for lib in libraries)


def _function_imports():
    """(module, line, dotted names, in a package's ``__getattr__``) of every import inside a
    function, and of every ``importlib.import_module``/``__import__`` call (its argument:
    a text, or the texts of the literal tuple a loop draws it from; None when neither)."""
    out = []
    for module, (_path, tree) in MODULES.items():
        lazy_hook = {id(f) for f in tree.body if isinstance(f, ast.FunctionDef)
                     and f.name == "__getattr__" and _is_package(module)}
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            loops = {n.target.id: n.iter for n in ast.walk(func) if isinstance(n, ast.For)
                     and isinstance(n.target, ast.Name)}
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    out.append((module, node.lineno, _names(module, node),
                                id(func) in lazy_hook))
                elif isinstance(node, ast.Call) and _is_dynamic_import(node):
                    out.append((module, node.lineno, _dynamic_names(node.args[0], loops),
                                id(func) in lazy_hook))
    return out


def _is_dynamic_import(call):
    f = call.func
    return bool(call.args) and (
        (isinstance(f, ast.Name) and f.id == "__import__")
        or (isinstance(f, ast.Attribute) and f.attr == "import_module"))


def _dynamic_names(arg, loops):
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    source = loops.get(arg.id) if isinstance(arg, ast.Name) else None
    if isinstance(source, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in source.elts):
        return [e.value for e in source.elts]
    return [None]


def _imports():
    """(module, line, imported module, name or None, inside a function) of every import of
    a gpurank module."""
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


def test_a_function_imports_only_the_lazy_libraries():
    bad = [(module, line, names) for module, line, names, hook in _function_imports()
           if not hook and not all(n is not None and _within(n, LAZY) for n in names)]
    assert bad == [], "import these at the top of the module"


def test_the_rule_sees_what_it_should():
    """The walk finds the imports it judges: the device libraries of the GPU backend, the
    lazy parts of ``gpurank.kernels`` and the dynamic imports of the environment check."""
    found = {(m, tuple(n)) for m, _line, n, _hook in _function_imports()}
    assert ("gpurank.engine.backend._gpu", ("cudf",)) in found
    assert ("gpurank.engine.backend._gpu", ("gpurank.kernels.cuda",)) in found
    assert ("gpurank.engine.backend.environment", ("cudf", "cuml")) in found
    assert any(m == "gpurank.kernels" and hook for m, _l, _n, hook in _function_imports())


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
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            device = any(_within(n, DEVICE_LIBRARIES) for n in _names(module, node))
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
    assert sum(map(len, graph.values())) > 300  # the walk saw the graph


def _private(part):
    return part.startswith("_") and not part.startswith("__")


def test_no_private_name_crosses_modules():
    bad = [(m, line, t, name) for m, line, t, name, _inside in IMPORTS
           if name and _private(name) and f"{t}.{name}" not in MODULES]
    assert bad == []


def test_a_private_module_is_imported_only_inside_its_package():
    bad = []
    for module, line, target, name, _inside in IMPORTS:
        dest = _edge(target, name)
        parts = dest.split(".")
        for i, part in enumerate(parts):
            package = ".".join(parts[:i])
            if _private(part) and not (module == package or module.startswith(package + ".")):
                bad.append((module, line, dest))
    assert bad == []


def _resolve_all(module, node):
    """The names of an ``__all__`` literal whose items are texts or ``*NAME`` of a tuple
    defined in the module or imported into it."""
    out = []
    for e in node.elts:
        if isinstance(e, ast.Constant):
            out.append(e.value)
        elif isinstance(e, ast.Starred) and isinstance(e.value, ast.Name):
            out += _tuple_named(module, e.value.id)
        else:
            raise AssertionError(f"{module}: __all__ holds {ast.dump(e)}")
    return set(out)


def _tuple_named(module, name):
    _path, tree = MODULES[module]
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return list(ast.literal_eval(node.value))
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return _tuple_named(_target(module, node), name)
    raise AssertionError(f"{module}: {name} is not defined")


def _exported(module):
    _path, tree = MODULES[module]
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return _resolve_all(module, node.value)
    return None


def test_every_imported_name_is_in_its_modules_all():
    bad = []
    for module, line, target, name, _inside in IMPORTS:
        if not name or target == module or f"{target}.{name}" in MODULES:
            continue  # a module, not a name
        exported = _exported(target) if target in MODULES else None
        if exported is None or name not in exported:
            bad.append((module, line, target, name))
    assert bad == []


def test_every_module_has_an_all():
    missing = [m for m in MODULES if _exported(m) is None and not m.endswith("__main__")]
    assert missing == []


#: The wings of ``engine/sources/`` and the wings each may import: the facts floor imports
#: none of them; the MLPerf reader and the model never import each other; a sweep draws from
#: the model. The commands, the CLI and the rest of the engine sit above all four.
WINGS = {"facts": set(), "mlperf": {"facts"}, "model": {"facts"},
         "sweep": {"facts", "model"}}
SOURCES = "gpurank.engine.sources"


def _wing(module):
    parts = module.split(".")
    return parts[3] if module.startswith(SOURCES + ".") and len(parts) > 3 else None


def test_the_source_wings_keep_their_layers():
    """Every module of ``engine/sources/`` sits in one wing, and imports only its own wing
    and the wings below it; nothing in a wing imports the engine above ``sources``' own
    utilities (the commands, the CLI, the analysis)."""
    loose = [m for m in MODULES if m.startswith(SOURCES + ".") and _wing(m) not in WINGS]
    assert loose == [], "every module of engine/sources/ belongs to one of its four wings"
    bad = []
    for module, line, target, name, _inside in IMPORTS:
        here = _wing(module)
        if here is None:
            continue
        dest = _edge(target, name)
        there = _wing(dest)
        if dest == SOURCES or dest.startswith(("gpurank.engine.commands",
                                               "gpurank.engine.cli", "gpurank.engine.api")):
            bad.append((module, line, dest))
        elif there is not None and there != here and there not in WINGS[here]:
            bad.append((module, line, dest))
    assert bad == []
    seen = {(_wing(m), _wing(_edge(t, n))) for m, _l, t, n, _i in IMPORTS if _wing(m)}
    assert {("mlperf", "facts"), ("model", "facts"), ("sweep", "model")} <= seen
