"""The public API: every exported name resolves, and the README's Python use runs as written."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

import proctor


def test_every_exported_name_resolves():
    for name in proctor.__all__:
        assert getattr(proctor, name) is not None, name


def test_import_is_cheap():
    """`import proctor` (what the CLI does first) must not pull in the engine or numpy."""
    code = "import sys, proctor; print('numpy' in sys.modules, 'proctor.loadgen.engine' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


class EchoSUT:
    """Completes each sample at once with its index as the response."""

    name = "echo"

    def issue_query(self, samples):
        proctor.query_samples_complete(
            [proctor.QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples]
        )

    def flush_queries(self):
        pass


def test_readme_python_use(tmp_path):
    from proctor.suts.synthetic import InMemoryQSL

    settings = proctor.TestSettings(
        scenario=proctor.Scenario.OFFLINE, mode=proctor.TestMode.PERFORMANCE_ONLY, min_duration_ms=20,
        min_query_count=1, offline_expected_qps=1000.0,
    )
    logs = proctor.LogSettings(log_output=proctor.LogOutputSettings(outdir=str(tmp_path)))
    outcome = proctor.run_test(EchoSUT(), InMemoryQSL(64, 64), settings, logs)
    assert outcome.result is not None
    assert outcome.result.sample_count >= 22  # 1.1 x 20 ms x 1000/s
    assert (tmp_path / "mlperf_log_summary.txt").is_file()


def _stated_names() -> tuple[set[str], set[str]]:
    """(names imported under TYPE_CHECKING in proctor/__init__.py, names in its _EXPORTS table)."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(proctor.__file__).read_text(encoding="utf-8"))
    typed: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                if imp.module != "typing":  # the annotations' own names, not re-exports
                    typed |= {alias.asname or alias.name for alias in imp.names}
    return typed, set(proctor._EXPORTS)


def test_type_checkers_see_the_same_names_as_the_lazy_table():
    typed, lazy = _stated_names()
    assert typed == lazy
    assert set(proctor.__all__) == lazy | {"__version__"}
    for name, target in proctor._EXPORTS.items():  # same object either way
        module, _, attr = target.partition(":")
        assert getattr(proctor, name) is getattr(importlib.import_module(module), attr), name


def test_mypy_sees_the_public_api_typed(tmp_path):
    """`reveal_type(proctor.run_test)` is the engine's signature, and a misspelt name is an error."""
    pytest.importorskip("mypy")
    snippet = tmp_path / "use_proctor.py"
    snippet.write_text(
        "import proctor\n"
        "reveal_type(proctor.run_test)\n"
        "reveal_type(proctor.check_log)\n"
        "reveal_type(proctor.RunError)\n"
        "proctor.run_tset\n",
        encoding="utf-8",
    )
    res = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(snippet)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    lines = res.stdout.splitlines()
    revealed = [ln.split("Revealed type is ", 1)[1] for ln in lines if "Revealed type is" in ln]
    assert len(revealed) == 3, res.stdout + res.stderr
    assert "Any" not in revealed[0] and "-> proctor.loadgen.engine.RunOutcome" in revealed[0]
    assert "ComplianceReport" in revealed[1]
    assert "proctor.errors.RunError" in revealed[2]
    assert any(":5: error:" in ln and "run_tset" in ln for ln in lines), res.stdout


def test_run_error_is_a_runtime_error_for_official_harnesses(tmp_path):
    """A harness written for the official binding wraps StartTest in `except RuntimeError`."""
    from proctor.suts.synthetic import InMemoryQSL

    class Broken:
        name = "broken"

        def issue_query(self, samples):
            raise OSError("the accelerator fell off")

        def flush_queries(self):
            pass

    settings = proctor.TestSettings(
        scenario=proctor.Scenario.OFFLINE, mode=proctor.TestMode.PERFORMANCE_ONLY, min_duration_ms=20,
        min_query_count=1, offline_expected_qps=1000.0,
    )
    logs = proctor.LogSettings(log_output=proctor.LogOutputSettings(outdir=str(tmp_path)))
    caught: RuntimeError | None = None
    try:
        proctor.run_test(Broken(), InMemoryQSL(64, 64), settings, logs)
    except RuntimeError as exc:
        caught = exc
    assert isinstance(caught, proctor.RunError)
    assert "fell off" in str(caught)


def test_every_error_class_is_in_the_tree_errors_draws():
    """Every exception class defined in the package is defined in proctor.errors and drawn in its docstring."""
    import ast
    from pathlib import Path

    from proctor import errors

    root = Path(proctor.__file__).parent
    outside = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "errors.py" and path.parent == root:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error") and not node.name.startswith("_"):
                outside.append(f"{path.relative_to(root)}:{node.name}")
    assert outside == []
    doc = errors.__doc__ or ""
    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)]
    for cls in classes:
        assert cls.__module__ == "proctor.errors"
        assert issubclass(cls, errors.ProctorError), cls
        drawn = doc.splitlines()[2].strip() == "ProctorError" if cls is errors.ProctorError else f"── {cls.__name__} " in doc
        assert drawn, cls
    for name in ("TruncateError", "PackageError"):  # callers catch ValueError
        assert issubclass(getattr(errors, name), ValueError)
