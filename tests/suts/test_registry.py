"""The SUT registry: entry points, the three --sut forms, parameters for --list-suts."""

from __future__ import annotations

import importlib.metadata
import inspect

import pytest

from proctor import entry_points
from proctor.errors import ConfigError
from proctor.suts import registry
from proctor.suts.spec import parse_sut_spec


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("synthetic", ("name", "synthetic", ())),
        ("synthetic:service_us=200,workers=4", ("name", "synthetic", (("service_us", "200"), ("workers", "4")))),
        ("my_mod:make", ("module", "my_mod:make", ())),
        ("pkg.mod:make:a=1", ("module", "pkg.mod:make", (("a", "1"),))),
        ("dir/sut.py:make", ("file", "dir/sut.py:make", ())),
        ("dir/sut.py:make:a=1,b=x", ("file", "dir/sut.py:make", (("a", "1"), ("b", "x")))),
    ],
)
def test_the_three_forms_never_overlap(spec, parsed):
    got = parse_sut_spec(spec)
    assert (got.kind, got.target, got.params) == parsed
    assert str(got) == spec


@pytest.mark.parametrize("spec", ["synthetic:novalue", "dir/sut.py", "dir/sut.py:", "x:make:=3"])
def test_malformed_specs_are_config_errors(spec):
    with pytest.raises(ConfigError):
        registry.build(spec)


def test_registry_names_no_workload_and_finds_proctors_suts():
    assert "workloads" not in inspect.getsource(registry)
    found = registry.registered()
    assert found["synthetic"] == "proctor.suts.synthetic:from_params"
    assert found["digits"] == "proctor.workloads.digits.sut:from_params"


def test_an_installed_package_registers_its_sut_by_entry_point(monkeypatch):
    ep = importlib.metadata.EntryPoint("mine", "proctor.suts.synthetic:from_params", registry.GROUP)
    real = importlib.metadata.entry_points

    def fake(**kw):
        return [ep] if kw.get("group") == registry.GROUP else real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    assert registry.registered()["mine"] == ep.value
    sut, qsl = registry.build("mine:total=8,perf=8")
    assert qsl.total_sample_count == 8


def test_params_come_from_the_table_or_the_signature():
    def make(a, b=3, *, c="x", **rest):
        return None, None

    assert [(p.name, p.default) for p in registry.params_of(make)] == [("a", ""), ("b", "3"), ("c", "x")]
    rows = {name: params for name, _, params in registry.describe()}
    names = {p.name: p.default for p in rows["synthetic"]}
    assert names["service_us"] == "100.0" and names["total"] == "1024"


def test_installed_metadata_alone_registers_proctors_suts(monkeypatch):
    """With `pip install -e .` the entry points come from the installed metadata, not the fallback."""
    if not list(importlib.metadata.entry_points(group=registry.GROUP)):
        pytest.skip("proctor's entry points are not installed here (a source checkout on PYTHONPATH)")
    monkeypatch.setattr(entry_points, "from_pyproject", lambda group: {})
    assert {"synthetic", "digits"} <= set(registry.registered())
