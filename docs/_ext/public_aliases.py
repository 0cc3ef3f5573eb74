"""Sphinx extension: a reference to another import path of a documented object resolves to it.

The API reference documents every public object once, under one name (``structreg.LapRLSC``,
``structreg.solvers.conjugate_gradient``).  Docstrings and pages also name the same objects by
the paths they are defined or re-exported at (``structreg.models.LapRLSC``,
``structreg.models.manifold.LapRLSC``, ``structreg.solvers.cg.conjugate_gradient``).  When a
Python reference to a ``structreg`` name finds no target, this extension imports the name; if
it is the very object documented under another name, the reference links there.  Anything
else -- an undocumented or private object -- stays unresolved, so the nitpicky build fails.
"""

from __future__ import annotations

import importlib

from sphinx.util.nodes import make_refnode


def _lookup(path: str):
    """The object at a dotted ``structreg...`` path, or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _documented(app) -> dict[int, tuple[str, str, str]]:
    """``id(object) -> (documented name, docname, anchor)`` of every documented structreg object."""
    env = app.env
    cache = getattr(env, "_structreg_aliases", None)
    if cache is not None:
        return cache
    cache = {}
    domain = env.get_domain("py")
    for name, _, objtype, docname, anchor, _ in domain.get_objects():
        if not name.startswith("structreg") or objtype == "module":
            continue
        obj = _lookup(name)
        if obj is None or isinstance(obj, (int, float, str, bool)):
            continue  # constants are not identified by identity
        cache.setdefault(id(obj), (name, docname, anchor))
    env._structreg_aliases = cache
    return cache


def _candidates(node) -> list[str]:
    """Full names the reference may mean: as written, in the page's current module and class,
    and in the module whose docstring holds it (``...:docstring of structreg.a.b.C``)."""
    target = node["reftarget"].lstrip("~.")
    names = [target]
    if not target.startswith("structreg"):
        module, cls = node.get("py:module"), node.get("py:class")
        if module:
            names.append(f"{module}.{target}")
            if cls:
                names.append(f"{module}.{cls}.{target}")
        source = node.source or ""
        if "docstring of structreg." in source:
            owner = source.rsplit("docstring of ", 1)[1].split(":")[0].split(".")
            names += [".".join(owner[:cut] + [target]) for cut in range(len(owner), 1, -1)]
    return [n for n in names if n.startswith("structreg")]


def _module_target(app, node, contnode):
    """A public submodule that has no entry of its own links to its nearest documented parent
    (``structreg.solvers.square`` -> ``structreg.solvers``); private modules do not."""
    target = node["reftarget"].lstrip("~.")
    parts = target.split(".")
    if parts[0] != "structreg" or any(p.startswith("_") for p in parts):
        return None
    try:
        importlib.import_module(target)
    except ImportError:
        return None
    modules = app.env.get_domain("py").modules
    for cut in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:cut])
        if parent in modules:
            entry = modules[parent]
            return make_refnode(
                app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, parent
            )
    return None


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    if node.get("reftype") == "mod":
        return _module_target(app, node, contnode)
    objects = app.env.get_domain("py").objects
    for name in _candidates(node):
        if name in objects:  # documented under this very name (e.g. a constant)
            entry = objects[name]
            return make_refnode(
                app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name
            )
        obj = _lookup(name)
        if obj is None or isinstance(obj, (int, float, str, bool)):
            continue
        hit = _documented(app).get(id(obj))
        if hit is not None:
            _, docname, anchor = hit
            return make_refnode(app.builder, node["refdoc"], docname, anchor, contnode, hit[0])
    return None


def _reset(app, env, *args):
    env.__dict__.pop("_structreg_aliases", None)


def setup(app):
    app.connect("missing-reference", _missing_reference)
    app.connect("env-updated", _reset)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
