"""Training benchmarks outside a ruleset's official tables (e.g. proctor's `digits_train`).

A package declares one in its pyproject.toml, named after the benchmark:

    [project.entry-points."proctor.training_benchmarks"]
    digits_train = "proctor.workloads.digits_train.spec:training_benchmark"

The entry names a function `(ruleset) -> TrainingBenchmark | None`: the benchmark's compliance
tables per division, its run count N and its RCP file for that ruleset (None: not in that round).
The checkers read the group at each lookup (`extra_benchmarks`) unless the caller passes the
benchmarks explicitly; nothing is registered into the imported ruleset tables, so a log gets the same
verdict in any process, whatever ran before. The checkers never import a workload: the entry point
is the only link.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from proctor import entry_points
from proctor.errors import ConfigError
from proctor.rules.training import package as layout
from proctor.rules.training.types import Config

GROUP = "proctor.training_benchmarks"
DIVISIONS = ("closed", "open")


@dataclass(frozen=True, slots=True)
class TrainingBenchmark:
    """One benchmark of one ruleset that the official tables do not hold."""

    name: str
    tables: Mapping[str, Config]  # division -> `<division>_<name>`, run after `<division>_common`
    runs_required: int  # N: result files per submission (olympic scoring drops the extremes)
    rcps: str | os.PathLike[str] | None = None  # RCP JSON in the official format
    source: str = field(default="", compare=False)  # where it was declared (the entry point)

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"benchmark name {self.name!r} must be a word such as 'digits_train'")
        for division, table in self.tables.items():
            if division not in DIVISIONS:
                raise ValueError(f"{self.name}: division {division!r} is not one of {', '.join(DIVISIONS)}")
            if table.name != f"{division}_{self.name}":
                raise ValueError(
                    f"{self.name}: the {division} table is named {table.name!r}, not '{division}_{self.name}'"
                )
        if (
            isinstance(self.runs_required, bool)
            or not isinstance(self.runs_required, int)
            or self.runs_required < 1
        ):
            raise ValueError(
                f"{self.name}: runs_required must be a positive integer, got {self.runs_required!r}"
            )


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
        found[name] = TrainingBenchmark(bench.name, bench.tables, bench.runs_required, bench.rcps, where)
    return resolve(ruleset, found.values())


def resolve(ruleset: str, benchmarks: Iterable[TrainingBenchmark] | None) -> dict[str, TrainingBenchmark]:
    """`benchmarks` by name (None: the registered ones), refusing a repeated or an official name."""
    if benchmarks is None:
        return registered(ruleset)
    out: dict[str, TrainingBenchmark] = {}
    official = set(layout.allowed_benchmarks(ruleset))
    for b in benchmarks:
        where = b.source or f"benchmark {b.name!r}"
        if b.name in official:
            raise ConfigError(
                f"{where}: {b.name!r} is an official benchmark of ruleset {ruleset}; pick another name"
            )
        if b.name in out:
            raise ConfigError(f"{where}: benchmark {b.name!r} is declared twice")
        out[b.name] = b
    return out


__all__ = ["DIVISIONS", "GROUP", "Declaration", "TrainingBenchmark", "registered", "resolve"]
