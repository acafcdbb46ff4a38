"""The options `proctor run` and `proctor audit` share, declared once.

`@run_options(...)` adds them to a command's signature (after the command's own options) and hands
them to the command as one `RunOptions` (parameter `opts`), so the two commands cannot drift apart.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from proctor.app.choices import QUICK_DURATION_MS, Engine
from proctor.cli import output
from proctor.errors import ConfigError
from proctor.loadgen.scenarios import Scenario
from proctor.loadgen.sut_faults import STUCK_LIMIT_S
from proctor.typed_records import fields_of, record

if TYPE_CHECKING:
    from proctor.app.session import RunRequest
    from proctor.loadgen.results import SLOTargets

TIMEOUT_HELP = (
    "Give up on a stuck SUT after this many seconds: the longest wait for a completion, and for a "
    f"performance run its whole length. Default: {STUCK_LIMIT_S} s without a completion (or 2 x "
    "min_duration when longer), no bound on the whole run; with max_duration, max_duration + 1 s."
)
MAX_SLO_MS = 86_400_000.0  # a day: a per-request target past it is a typo
# each setting or option a run's options set -> the flag that sets it, so a refused value and the
# engine's advice ("lower --target-qps (server_target_qps, now 40)") name the flag typed
# (RunRequest.option_names, EngineOptions.labels); "debug": how a SUT's traceback is shown
SETTING_FLAGS: dict[str, str] = {
    "mode": "--mode",
    "min_duration_ms": "--duration-ms",
    "max_duration_ms": "--max-duration-ms",
    "target_qps": "--target-qps",
    "expected_latency_ms": "--expected-latency-ms",
    "min_query_count": "--min-queries",
    "model": "--model",
    "scenario": "--scenario",
    "timeout_s": "--timeout-s",
    "concurrency": "--concurrency",  # proctor sweep's closed loop
    "debug": "`proctor --debug run ...`",  # RunOptions.request names the command that ran
}
SUT_HELP = (
    "NAME[:k=v,...] for a registered SUT (see --list-suts), e.g. synthetic:service_us=200,workers=4; "
    "or your own: my_package.module:factory[:k=v,...] or path/to/file.py:factory[:k=v,...], where "
    "factory(**params) returns (sut, qsl). A value holding ',' is quoted: k=\"a,b\" (inside the "
    "quotes \\\" is a quote, \\\\ a backslash)."
)


@record(slots=True)
class RunOptions:
    """The shared options' values (the field names are the command's parameter names)."""

    scenario: Scenario | None
    model: str
    user_conf: Path | None
    output_dir: Path
    sut: str
    dataset: Path | None
    allow_pickle: bool
    list_suts_flag: bool
    duration_ms: int | None
    quick: bool
    max_duration_ms: int | None
    target_qps: float | None
    expected_latency_ms: float | None
    min_queries: int | None
    slo_ttft_ms: float | None
    slo_tpot_ms: float | None
    slo_latency_ms: float | None
    timeout_s: float | None
    drain_s: float
    full: bool
    trace: bool
    no_trace: bool
    quiet: bool
    engine: Engine
    as_json: bool

    def checked(self) -> Scenario:
        """Refuse contradictory or bad values (exit 2 with one line); --quick becomes --duration-ms.
        Returns the scenario (required)."""
        if self.scenario is None:
            output.fail("missing option --scenario (SingleStream, MultiStream, Server or Offline)")
        if self.quick and self.duration_ms is None:  # an explicit --duration-ms wins: a verdict's
            self.duration_ms = QUICK_DURATION_MS  # "--duration-ms N" can be added to the same command
        from proctor.loadgen.settings import value_problem

        for option, name, value in (("--timeout-s", "timeout_s", self.timeout_s), ("--drain-s", "drain_s", self.drain_s)):
            problem = value_problem(name, value) if value is not None else ""
            if problem:  # the one range table (loadgen/settings.py RUN_ARGUMENT_RANGES)
                output.fail(f"{option}: {problem}")
        for option, ms in self.slo_options():
            if not math.isfinite(ms) or not 0 < ms <= MAX_SLO_MS:
                output.fail(f"{option} must be a number of milliseconds in (0, {MAX_SLO_MS:g}], got {ms!r}")
        check_output_dir(self.output_dir)
        return self.scenario

    def slo_options(self) -> list[tuple[str, float]]:
        """The --slo-*-ms options given, with their values."""
        given = (("--slo-ttft-ms", self.slo_ttft_ms), ("--slo-tpot-ms", self.slo_tpot_ms),
                 ("--slo-latency-ms", self.slo_latency_ms))
        return [(option, float(ms)) for option, ms in given if ms is not None]

    def slo(self) -> SLOTargets | None:
        """The per-request SLO targets given (None: the benchmark's bounds)."""
        given = self.slo_options()
        if not given:
            return None
        from proctor.loadgen.results import SLOTargets

        def ns(ms: float | None) -> int | None:
            return None if ms is None else round(ms * 1e6)

        return SLOTargets(ns(self.slo_ttft_ms), ns(self.slo_tpot_ms), ns(self.slo_latency_ms),
                          source="set by " + ", ".join(option for option, _ in given))

    def request(self, command: str = "run", **more: Any) -> RunRequest:
        """The session's request: these options plus the command's own (`more`); `command` is the
        word after `proctor` that ran it, for the traceback advice (`proctor --debug sweep ...`)."""
        from proctor.app.session import RunRequest
        from proctor.suts.spec import parse_sut_spec

        scenario = self.checked()
        try:  # the one parse of --sut: every layer below gets the SutSpec
            sut = parse_sut_spec(self.sut)
            if self.allow_pickle:  # the SUT's own parameter (the openai SUT's allow_pickle=1)
                sut = sut.with_param("allow_pickle", "1", "--allow-pickle")
        except ConfigError as exc:
            output.fail(str(exc))
        return RunRequest(
            scenario=scenario,
            sut=sut,
            model=self.model,
            user_conf=self.user_conf,
            output_dir=self.output_dir,
            dataset=self.dataset,
            duration_ms=self.duration_ms,
            max_duration_ms=self.max_duration_ms,
            target_qps=self.target_qps,
            expected_latency_ms=self.expected_latency_ms,
            min_queries=self.min_queries,
            timeout_s=self.timeout_s,
            drain_s=self.drain_s,
            trace=self.trace and not self.no_trace,
            engine=self.engine,
            slo=self.slo(),
            option_names={**SETTING_FLAGS, "debug": f"`proctor --debug {command} ...`"},
            **more,
        )


def check_output_dir(path: Path, option: str = "--output") -> None:
    """The log folder must be a folder or creatable as one: say so before anything runs."""
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                what = "is a file" if p == path else f"is under {p}, which is a file"
                output.fail(f"{option} {path}: {what}; give a folder for the log files")
            return


def _shared(output_default: Path, output_help: str) -> list[tuple[str, Any, Any]]:
    """(parameter name, Annotated type, default) of each shared option, in --help order."""
    return [
        ("scenario", Annotated[Scenario | None, typer.Option(
            "--scenario", "-s", help="SingleStream, MultiStream, Server or Offline.")], None),
        ("model", Annotated[str, typer.Option(
            "--model", metavar="NAME", help="Model name for the mlperf.conf lookup."
        )], "resnet50"),
        ("user_conf", Annotated[Path | None, typer.Option(
            "--user-conf", metavar="FILE", exists=True, dir_okay=False, help="user.conf to apply.")], None),
        ("output_dir", Annotated[Path, typer.Option(
            "--output", "-o", help=output_help, metavar="DIR"
        )], output_default),
        ("sut", Annotated[str, typer.Option("--sut", help=SUT_HELP, metavar="SPEC")], "synthetic"),
        ("dataset", Annotated[Path | None, typer.Option(
            "--dataset", metavar="FILE",
            help="Dataset for LLM SUTs: JSONL (prompt or input_ids, optional output per line), .json (ShareGPT "
            "or records), .csv, .parquet, or the official .pkl files (with --allow-pickle), the columns by "
            "the file's layout (ShareGPT, MLPerf's processed files, OpenOrca); passed to the SUT as "
            "dataset=FILE.")], None),
        ("allow_pickle", Annotated[bool, typer.Option(
            "--allow-pickle", help="Let the SUT read a pickled dataset (the official MLPerf LLM .pkl files): "
            "loading a pickle runs code from the file, so only for a file you trust.")], False),
        ("list_suts_flag", Annotated[bool, typer.Option(
            "--list-suts", help="List the registered SUTs with their parameters and exit.")], False),
        ("duration_ms", Annotated[int | None, typer.Option(
            "--duration-ms", metavar="MS",
            help="min_duration_ms override (a shorter run is marked in the logs).")], None),
        ("quick", Annotated[bool, typer.Option(
            "--quick", help=f"A {QUICK_DURATION_MS // 1000} s run (--duration-ms {QUICK_DURATION_MS}; an explicit "
            "--duration-ms wins).")], False),
        ("max_duration_ms", Annotated[int | None, typer.Option(
            "--max-duration-ms", metavar="MS", help="max_duration_ms override.")], None),
        ("target_qps", Annotated[float | None, typer.Option(
            "--target-qps", metavar="QPS",
            help="Server: target QPS; Offline: expected QPS (samples per second).")], None),
        ("expected_latency_ms", Annotated[float | None, typer.Option(
            "--expected-latency-ms", metavar="MS",
            help="SingleStream/MultiStream expected latency (ms).")], None),
        ("min_queries", Annotated[int | None, typer.Option(
            "--min-queries", metavar="N", help="min_query_count override."
        )], None),
        ("slo_ttft_ms", Annotated[float | None, typer.Option(
            "--slo-ttft-ms", metavar="MS", help="Per-request SLO: time to first token target (ms) for the "
            "attainment and goodput lines (default: the benchmark's Server bound; the MLPerf verdict keeps it).")],
         None),
        ("slo_tpot_ms", Annotated[float | None, typer.Option(
            "--slo-tpot-ms", metavar="MS", help="Per-request SLO: time per output token target (ms); default "
            "the benchmark's Server bound.")], None),
        ("slo_latency_ms", Annotated[float | None, typer.Option(
            "--slo-latency-ms", metavar="MS", help="Per-request SLO: latency target (ms); default the benchmark's "
            "Server bound (non-token benchmarks).")], None),
        ("timeout_s", Annotated[float | None, typer.Option(
            "--timeout-s", metavar="SECONDS", help=TIMEOUT_HELP)], None),
        ("drain_s", Annotated[float, typer.Option(
            "--drain-s", metavar="SECONDS", min=0,
            help="After Ctrl-C, wait this long for the SUT to drain (seconds).")], 0.5),
        ("full", Annotated[bool, typer.Option(
            "--full", hidden=True, help="No effect: mlperf.conf's durations are the default.")], False),
        ("trace", Annotated[bool, typer.Option(
            "--trace", help="Also write the official Chrome trace, mlperf_log_trace.json (~290 bytes per "
            "sample); the report's per-sample data is always in mlperf_log_samples.bin (a few bytes per sample).")],
         False),
        ("no_trace", Annotated[bool, typer.Option(
            "--no-trace", hidden=True, help="No effect: no trace is the default (--trace writes one).")], False),
        ("quiet", Annotated[bool, typer.Option("--quiet", "-q", help="No live line, no table; verdict only.")], False),
        ("engine", Annotated[Engine, typer.Option(
            "--engine",
            help="proctor, or official: the same SUT driven by the official "
            "mlperf_loadgen (pip install 'proctor[official]') for submission logs.")], Engine.PROCTOR),
        ("as_json", Annotated[bool, typer.Option(
            "--json", help="Print one JSON document on stdout (verdict, cause, numbers, findings, paths; "
            "schema: proctor.schemas) and nothing else there; the live line stays on stderr.")], False),
    ]


F = TypeVar("F", bound=Callable[..., Any])


def run_options(*, output_default: Path, output_help: str) -> Callable[[F], F]:
    """Give a command the shared options; it takes them as `opts: RunOptions`."""
    shared = _shared(output_default, output_help)
    names = [name for name, _, _ in shared]
    assert names == [f.name for f in fields_of(RunOptions)], "RunOptions and the option list must agree"

    def decorate(command: F) -> F:
        own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != "opts"]
        params = own + [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for name, annotation, default in shared
        ]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            opts = RunOptions(**{name: kwargs.pop(name) for name in names})
            return command(opts=opts, **kwargs)

        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return cast(F, wrapper)

    return decorate


__all__ = ["SUT_HELP", "RunOptions", "check_output_dir", "run_options"]
