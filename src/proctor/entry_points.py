"""Plug-ins by entry point, read when they are looked up (never cached, never registered by an import).

A package adds a plug-in to proctor in its pyproject.toml, e.g.

    [project.entry-points."proctor.suts"]
    mysut = "my_package.sut:from_params"

and whoever needs the group reads it at the moment of use, so what a lookup finds depends on what is
installed, not on what ran earlier in the process. A source checkout that was never installed
(`PYTHONPATH=src`) has no entry-point metadata: then proctor's own entries are read from the
pyproject.toml beside the sources, so tests and `python -m proctor` see the same plug-ins.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from pathlib import Path
from typing import Any

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def from_pyproject(group: str) -> dict[str, str]:
    """proctor's own entries of `group` in the pyproject.toml beside the sources ({} when installed)."""
    import tomllib

    try:
        data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    project = data.get("project", {})
    if project.get("name") != "proctor":
        return {}
    entries = project.get("entry-points", {}).get(group, {})
    return {str(k): str(v) for k, v in entries.items()}


def registered(group: str) -> dict[str, str]:
    """name -> "module:attr" of every entry of `group`: installed metadata first, then the fallback."""
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=group)}
    for name, target in from_pyproject(group).items():
        found.setdefault(name, target)
    return dict(sorted(found.items()))


def load(target: str) -> Any:
    """The object a "module:attr" entry names (ImportError or AttributeError when it is not there)."""
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for part in attr.strip().split(".") if attr.strip() else ():
        obj = getattr(obj, part)
    return obj


__all__ = ["PYPROJECT", "from_pyproject", "load", "registered"]
