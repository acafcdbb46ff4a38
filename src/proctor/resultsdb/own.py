"""One's own result, as a row like the published ones: from a `proctor run -o DIR` folder or from a
submission package.

A run folder: its detail log (the loadgen reader, through `checks.detail_log`) gives the scenario
and the metric, recomputed by the round's conventions (`checks.metrics.result_metric`), and the
performance run is checked against the round's rules for its benchmark (`checks.performance`:
seeds, duration, queries, latency bounds, ...) and its LoadGen's origin; accuracy and audits need a
package. The benchmark is the one given, else the run's folder names it (`<benchmark>/<Scenario>/
performance/run_1`, the layout `proctor submission package` reads); the accelerators are the ones
given or read from a system description.

A package (a submission tree, a `<division>/<submitter>` folder, a training package): every result
is checked as published ones are (`inference_units`, `training_units`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.checks.detail_log import DetailLogData, load_detail_log
from proctor.checks.loadgen_origin import check_loadgen_origin
from proctor.checks.metrics import result_metric
from proctor.checks.performance import RunRules, check_performance_log
from proctor.checks.system_description import load_strict_json
from proctor.errors import ResultsError
from proctor.findings import Finding
from proctor.loadgen.logs.detail import BENCHMARK_KEY
from proctor.resultsdb.layout import INFERENCE, plan
from proctor.resultsdb.rows import (
    INVALID,
    SCENARIOS,
    VALID,
    benchmark_name,
    counts,
    finite,
    higher_is_better,
    per_accelerator,
    scenario_key,
    system_columns,
)
from proctor.rules.inference import PROCTOR_WORKLOAD, Category
from proctor.rules.inference_rounds import round_table
from proctor.rules.rounds import ROUNDS
from proctor.trees import DIR, FILE, kind, not_a_file, read_bytes, real_root, show
from proctor.typed_records import field, record

DETAIL = "mlperf_log_detail.txt"
MAX_SYSTEM_JSON = 1 << 20
MAX_ACCELERATORS = 1 << 24


@record(slots=True)
class Own:
    """One own result: its row (the results table's columns) and what was found checking it."""

    row: dict[str, Any]
    findings: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "run"  # run | package
    notes: list[str] = field(default_factory=list)


def run_log(path: Path) -> Path | None:
    """The performance detail log of a run folder (or of a `<Scenario>` folder holding
    performance/run_1), or None when `path` is not one."""
    for cand in (path / DETAIL, path / "performance" / "run_1" / DETAIL, path / "performance" / DETAIL):
        if kind(cand) == FILE:
            return cand
    return None


def _benchmark_from_path(log: Path) -> tuple[str | None, str | None]:
    """(benchmark, scenario folder) the run's folders name: <benchmark>/<Scenario>[/performance[/run_1]]."""
    parts = list(log.parent.parts)
    while parts and (parts[-1] == "performance" or parts[-1].startswith("run_")):
        parts.pop()
    if len(parts) >= 2 and scenario_key(parts[-1]) in SCENARIOS:
        return parts[-2], parts[-1]
    return None, None


def _logged_benchmark(log: DetailLogData) -> str | None:
    """The benchmark `proctor run --model` logged (proctor_benchmark), when it is one a round knows."""
    value = log.get(BENCHMARK_KEY)
    return value if isinstance(value, str) and len(value) <= 100 and known_rounds(value) else None


def _accelerators(system: Path | None, accelerators: int | None) -> dict[str, Any]:
    cols = system_columns(None)
    if system is not None:
        got = kind(system)
        if got != FILE:
            raise ResultsError(f"--system {show(system)}: {not_a_file(system, got)}")
        try:
            data = read_bytes(system, MAX_SYSTEM_JSON + 1)
        except OSError as exc:
            raise ResultsError(f"--system {show(system)}: cannot be read ({exc.strerror or exc})") from None
        if len(data) > MAX_SYSTEM_JSON:
            raise ResultsError(f"--system {show(system)}: larger than {MAX_SYSTEM_JSON} bytes: not a system description")
        try:
            desc = load_strict_json(data)
        except ValueError as exc:
            raise ResultsError(f"--system {show(system)}: not valid JSON ({exc})") from None
        if not isinstance(desc, dict):
            raise ResultsError(f"--system {show(system)}: must be a JSON object (a system description)")
        cols = system_columns(desc)
    if accelerators is not None:
        if not 0 < accelerators <= MAX_ACCELERATORS:
            raise ResultsError(f"--accelerators {accelerators}: give the run's accelerator count, 1 to {MAX_ACCELERATORS}")
        cols["accelerators"] = accelerators
    return cols


def known_rounds(name: str) -> list[str]:
    """The inference rounds whose table has a benchmark of that name, oldest first."""
    out = []
    for r in ROUNDS:
        try:
            round_table(r).table.resolve(name)
        except KeyError:
            continue
        out.append(r)
    return out


def proctor_workload(name: str, round_: str) -> bool:
    """A benchmark of proctor's own (digits): in its table, in no published round."""
    try:
        return round_table(round_).table.resolve(name).benchmark.source == PROCTOR_WORKLOAD
    except KeyError:
        return False


def read_run(
    path: Path,
    log_path: Path,
    *,
    round_: str | None,
    benchmark: str | None,
    scenario: str | None,
    pick_round: Callable[[list[str], str], str | None],
    accelerators: int | None = None,
    system: Path | None = None,
    allow_unofficial_loadgen: bool = False,
) -> Own:
    """A run folder's row; `pick_round(rounds whose table has the benchmark, its name)` chooses the
    round when none is given (the newest one with published results of it)."""
    from_path, scen_folder = _benchmark_from_path(log_path)
    log, problems = load_detail_log(log_path)
    name = benchmark or from_path or _logged_benchmark(log)
    if not name:
        raise ResultsError(
            f"{show(path)}: which benchmark does this run stand for? its log does not say and its folders are not "
            "<benchmark>/<Scenario>/performance/run_1; give --benchmark NAME (e.g. --benchmark resnet50)"
        )
    rounds = known_rounds(name)
    if not rounds:
        raise ResultsError(
            f"--benchmark {name!r} is no benchmark of any round proctor knows ({', '.join(ROUNDS)}); "
            f"{round_table(ROUNDS[-1]).table.did_you_mean(name)}"
        )
    if round_ is None:
        round_ = pick_round(rounds, name) or rounds[-1]
    elif round_ not in rounds:
        raise ResultsError(
            f"--round {round_}: its benchmark table has no {name!r} (rounds that have it: {', '.join(rounds)})"
        )
    rnd = round_table(round_)
    variant = rnd.table.resolve(name)
    bench = variant.benchmark
    found: list[Finding] = list(problems)
    logged = SCENARIOS.get(scenario_key(str(log.get("effective_scenario", ""))))
    cat = _category(scenario, scen_folder, logged, variant.interactive, log_path)
    values = finite_metric(rnd, bench, cat, log)
    if log.values:
        found += check_loadgen_origin(log, round_, allow_unofficial=allow_unofficial_loadgen)
        if logged is not None:
            rules = RunRules(
                benchmark=bench,
                category=cat,
                run_category=Category(logged),
                seeds=rnd.seeds,
                version=round_,
                closed=True,
                min_performance_samples=min(bench.qsl_size.values(), default=0),
            )
            found += check_performance_log(log, rules)
    errors, warnings = counts(found)
    metric, value, units = values
    cols = _accelerators(system, accelerators)
    row = {
        "round": round_,
        "suite": INFERENCE,
        "unit": "",
        "division": "closed",
        "category": None,
        "submitter": "(yours)",
        "system": "your run",
        **cols,
        "benchmark": benchmark_name(rnd, name),
        "benchmark_folder": name,
        "scenario": cat.value,
        "metric": metric,
        "value": value,
        "units": units,
        "higher_is_better": higher_is_better(units) if units else None,
        "per_accelerator": per_accelerator(value, units, cols["accelerators"]),
        "inferred_from": None,
        "power": None,
        "power_units": None,
        "efficiency": None,
        "verdict": VALID if not errors and value is not None else INVALID,
        "errors": errors,
        "warnings": warnings,
        "path": str(path),
        "tree": "",
    }
    notes = [
        f"the performance run is checked by the {round_} rules for {bench.name} (seeds, duration, queries, bounds); "
        "accuracy and audits are checked only in a package"
    ]
    return Own(row, [_finding(f) for f in found], "run", notes)


def _category(given: str | None, folder: str | None, logged: str | None, interactive: bool, log_path: Path) -> Category:
    """The result's scenario: the one given, else the log's (a Server run in an Interactive folder,
    or of an interactive benchmark, is an Interactive result)."""
    if given:
        value = SCENARIOS.get(scenario_key(given))
        if value is None:
            raise ResultsError(
                f"--scenario {given!r} is not a scenario; use SingleStream, MultiStream, Server, Interactive or Offline"
            )
        return Category(value)
    in_folder = SCENARIOS.get(scenario_key(folder)) if folder else None
    if logged is None:  # an unreadable log: the result is INVALID whatever its scenario; the folder's
        if in_folder is None:
            raise ResultsError(f"{show(log_path)}: the log names no scenario (effective_scenario); give --scenario")
        return Category(in_folder)
    if logged == Category.SERVER.value and (interactive or in_folder == Category.INTERACTIVE.value):
        return Category.INTERACTIVE
    return Category(logged)


def finite_metric(rnd: Any, bench: Any, cat: Category, log: DetailLogData) -> tuple[str, float | None, str]:
    """(metric, value, units) the round's checker reads from the log; no value when it cannot."""
    try:
        m = result_metric(bench, cat, log.values, None, rnd.result_field(bench, cat))
    except (KeyError, ValueError, TypeError, OverflowError, RecursionError):
        return "n/a", None, ""
    return m.name, finite(m.value), m.units


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "severity": f.severity.value,
        "rule": f.rule,
        "path": f.path,
        "line": f.line,
        "key": f.key,
        "message": f.message,
        "source": f.source,
    }


def read_package(
    path: Path,
    *,
    round_: str | None,
    default_round: Callable[[str], str | None],
    allow_unofficial_loadgen: bool = False,
) -> list[Own]:
    """Every result of a package, checked as the published ones are."""
    from proctor.resultsdb import inference_units, training_units  # the checkers: only for a package

    p = plan(path, round_, default_round=default_round)
    out: list[Own] = []
    for unit in p.units:
        if p.suite == INFERENCE:
            rows, findings = inference_units.unit_rows(
                unit, p.round, p.root, allow_unofficial_loadgen=allow_unofficial_loadgen
            )
        else:
            rows, findings = training_units.unit_rows(unit, p.round, p.root)
        for row in rows:
            mine = [f for f in findings if f["result_path"] == row["path"] or f["system"] == row["system"]]
            out.append(Own(row, mine, "package", [f"checked as published results of {p.suite} {p.round} ({p.round_from})"]))
    return out


def read_own(
    path: str | Path,
    *,
    round_: str | None = None,
    benchmark: str | None = None,
    scenario: str | None = None,
    accelerators: int | None = None,
    system: Path | None = None,
    allow_unofficial_loadgen: bool = False,
    pick_round: Callable[[list[str], str], str | None] = lambda rounds, name: None,
    default_round: Callable[[str], str | None] = lambda suite: None,
) -> list[Own]:
    """The own results at `path` (a run folder or a package), each a row like the published ones."""
    given = Path(path)
    if kind(given) == "missing":
        raise ResultsError(f"{show(given)}: no such folder")
    root = real_root(given)
    if kind(root) != DIR:
        raise ResultsError(f"{show(given)}: not a folder; give a `proctor run -o` folder or a submission package")
    log = run_log(root)
    if log is not None:
        return [
            read_run(
                root, log, round_=round_, benchmark=benchmark, scenario=scenario, pick_round=pick_round,
                accelerators=accelerators, system=system, allow_unofficial_loadgen=allow_unofficial_loadgen,
            )
        ]
    owns = read_package(root, round_=round_, default_round=default_round, allow_unofficial_loadgen=allow_unofficial_loadgen)
    if accelerators is not None or system is not None:
        cols = _accelerators(system, accelerators)
        for o in owns:
            o.row.update({k: v for k, v in cols.items() if v is not None})
            o.row["per_accelerator"] = per_accelerator(o.row["value"], o.row["units"], o.row["accelerators"])
    keep = [
        o for o in owns
        if (benchmark is None or o.row["benchmark"] == benchmark or o.row["benchmark_folder"] == benchmark)
        and (scenario is None or scenario_key(o.row["scenario"] or "") == scenario_key(scenario))
    ]
    if not keep:
        wanted = " ".join(x for x in (benchmark, scenario) if x)
        raise ResultsError(
            f"{show(given)}: no results" + (f" of {wanted}" if wanted else "") + " in this package"
        )
    return keep


__all__ = ["Own", "known_rounds", "proctor_workload", "read_own", "read_package", "read_run", "run_log"]
