"""Training benchmarks outside a ruleset's official tables (e.g. proctor's `digits_train`).

A package declares one in its pyproject.toml, named after the benchmark:

    [project.entry-points."proctor.training_benchmarks"]
    digits_train = "proctor.workloads.digits_train.spec:training_benchmark"

The entry names a function `(ruleset) -> TrainingBenchmark | None`: the benchmark's record
(`rules/training/benchmarks.py`, the shape of the official ones) with its compliance tables per
division, its run count N, its RCP file and, for the harness, its target and cadence for that
ruleset (None: not in that round).
The checkers read the group at each lookup (`extra_benchmarks`) unless the caller passes the
benchmarks explicitly; nothing is registered into the imported ruleset tables, so a log gets the same
verdict in any process, whatever ran before. The checkers never import a workload: the entry point
is the only link.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from proctor import entry_points
from proctor.errors import ConfigError
from proctor.rules.training.benchmarks import TrainingBenchmark, allowed_benchmarks, declared_official_facts
from proctor.rules.training.package import DIVISIONS

GROUP = "proctor.training_benchmarks"


Declaration = Callable[[str], TrainingBenchmark | None]


def registered(ruleset: str) -> dict[str, TrainingBenchmark]:
    """The benchmarks the installed entry points declare for `ruleset`, read now, by name.

    A broken declaration is a ConfigError naming the entry point: a verdict must not quietly change
    because a plug-in failed to load.
    """
    found: dict[str, TrainingBenchmark] = {}
    for name, target in entry_points.registered(GROUP).items():
        where = f"entry point {name!r} ({target}) of group {GROUP}"
        try:
            declare: Declaration = entry_points.load(target)
            bench = declare(ruleset)
        except ConfigError:
            raise
        except Exception as exc:  # a third-party declaration: one line naming it, not a traceback
            raise ConfigError(
                f"{where} cannot be loaded: {type(exc).__name__}: {exc}; fix or uninstall the package"
            ) from exc
        if bench is None:
            continue
        if not isinstance(bench, TrainingBenchmark):
            raise ConfigError(f"{where} returned {type(bench).__name__}, not a TrainingBenchmark or None")
        if bench.name != name:
            raise ConfigError(f"{where} declares benchmark {bench.name!r}; name the entry point after it")
        found[name] = dataclasses.replace(bench, source=where)
    return resolve(ruleset, found.values())


def resolve(ruleset: str, benchmarks: Iterable[TrainingBenchmark] | None) -> dict[str, TrainingBenchmark]:
    """`benchmarks` by name (None: the registered ones), refusing a repeated or an official name."""
    if benchmarks is None:
        return registered(ruleset)
    out: dict[str, TrainingBenchmark] = {}
    official = set(allowed_benchmarks(ruleset))
    for b in benchmarks:
        where = b.source or f"benchmark {b.name!r}"
        if b.name in official:
            raise ConfigError(
                f"{where}: {b.name!r} is an official benchmark of ruleset {ruleset}; pick another name"
            )
        facts = declared_official_facts(b)
        if facts:
            raise ConfigError(
                f"{where}: {', '.join(facts)} are read from the official benchmarks' records only; "
                "leave them unset in a declaration"
            )
        if b.name in out:
            raise ConfigError(f"{where}: benchmark {b.name!r} is declared twice")
        out[b.name] = b
    return out


__all__ = ["DIVISIONS", "GROUP", "Declaration", "TrainingBenchmark", "registered", "resolve"]
