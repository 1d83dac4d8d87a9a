"""The project's own import graph, read statically, and the DVC stages that run it.

Used by the tests that hold the pipeline's code dependencies (every file a stage
imports is under one of its `deps:`) and the layering of stages/core (what may import
what). Every `import` and `from ... import` counts, also inside functions, relative
ones included; importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "stages"


def module_file(module: str, root: Path = ROOT) -> Path | None:
    """The file of a project module (``stages.core.answer.voting``), or None when it is not one."""
    base = root.joinpath(*module.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def direct_imports(path: Path, root: Path = ROOT) -> set[str]:
    """Project modules that ``path`` imports (function-level and relative imports too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(path, root)
    package = here if _is_package(path) else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import module`
    return {m for m in found if m.split(".")[0] == PACKAGE and module_file(m, root) is not None}


def with_parents(module: str) -> list[str]:
    """``a.b.c`` -> [a, a.b, a.b.c]: importing a module runs its packages' __init__ first."""
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@cache
def closure(module: str, root: Path = ROOT) -> frozenset[Path]:
    """Every project file that running ``module`` can import, transitively (relative to root)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        m = todo.pop()
        for name in with_parents(m):
            if name in seen:
                continue
            seen.add(name)
            f = module_file(name, root)
            if f is not None:
                todo.extend(direct_imports(f, root))
    return frozenset(module_file(m, root).relative_to(root) for m in seen if module_file(m, root) is not None)


def is_inert(path: Path) -> bool:
    """A file that runs nothing when imported: at most a docstring."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
               for n in body)


@dataclass(frozen=True)
class Stage:
    name: str
    module: str  # python -m <module>
    deps: tuple[str, ...]
    outs: tuple[str, ...]


def _paths(entries: list) -> list[str]:
    out = []
    for e in entries or []:
        out.extend(e.keys() if isinstance(e, dict) else [e])
    return [str(p) for p in out]


def load_stages(dvc_yaml: Path = ROOT / "dvc.yaml") -> dict[str, Stage]:
    """The stages of dvc.yaml that run a project module (``python -m stages.<x>``)."""
    spec = yaml.safe_load(dvc_yaml.read_text(encoding="utf-8"))
    stages = {}
    for name, s in spec["stages"].items():
        cmd = s["cmd"].split()
        if cmd[:2] != ["python", "-m"]:
            continue
        outs = _paths(s.get("outs")) + _paths(s.get("metrics")) + _paths(s.get("plots"))
        stages[name] = Stage(name, cmd[2], tuple(_paths(s.get("deps"))), tuple(outs))
    return stages


def covered(path: Path, deps: tuple[str, ...] | list[str]) -> bool:
    """Whether a dep (a file, or a folder above it) covers ``path``."""
    p = path.as_posix()
    return any(p == d.rstrip("/") or p.startswith(d.rstrip("/") + "/") for d in deps)


def missing_deps(stage: Stage, deps: tuple[str, ...] | None = None, root: Path = ROOT) -> list[str]:
    """Files the stage imports that none of its deps covers (package __init__ files that run
    nothing are exempt: editing one to run code makes it count)."""
    deps = stage.deps if deps is None else deps
    return sorted(p.as_posix() for p in closure(stage.module, root)
                  if not covered(p, deps) and not (_is_package(p) and is_inert(root / p)))


def unused_code_deps(stage: Stage, root: Path = ROOT) -> list[str]:
    """Code deps (under stages/) that hold no file the stage imports: they would rerun it for nothing."""
    files = closure(stage.module, root)
    return [d for d in stage.deps if d.startswith(PACKAGE + "/")
            and not any(covered(f, (d,)) for f in files)]


def upstream(stages: dict[str, Stage]) -> dict[str, set[str]]:
    """Stage -> every stage whose outputs it reads, directly or through others."""
    def produces(t: Stage, dep: str) -> bool:
        return any(dep == o or dep.startswith(o.rstrip("/") + "/") or o.startswith(dep.rstrip("/") + "/")
                   for o in t.outs)

    direct = {s.name: {t.name for t in stages.values() if t.name != s.name and any(produces(t, d) for d in s.deps)}
              for s in stages.values()}
    result: dict[str, set[str]] = {}
    for name in stages:
        seen: set[str] = set()
        todo = list(direct[name])
        while todo:
            t = todo.pop()
            if t not in seen:
                seen.add(t)
                todo.extend(direct[t])
        result[name] = seen
    return result
