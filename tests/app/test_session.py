"""The run session (proctor.app.session) and the SUT seam it drives: one outcome type for both
engines, a two-method SUT, a started SUT completing through the run's sink, the SUT's report in the
logs before they close, and a CLI that writes no run log."""

from __future__ import annotations

import dataclasses
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from proctor.app import session
from proctor.loadgen import completion
from proctor.loadgen.engine import RunOutcome, run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.options import EngineOptions
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.sink import CompletionSink, ReportingSUT, StartableSUT
from proctor.loadgen.types import ClosableSUT, QuerySample, QuerySampleResponse, Scenario, SystemUnderTest
from proctor.suts.synthetic import InMemoryQSL, from_params

SRC = Path(__file__).resolve().parents[2] / "src" / "proctor"


def logs(path: Path) -> LogSettings:
    return LogSettings(LogOutputSettings(outdir=str(path)), enable_trace=False)


def short_single_stream() -> TestSettings:
    return TestSettings(
        scenario=Scenario.SINGLE_STREAM,
        single_stream_expected_latency_ns=1_000,
        min_duration_ms=50,
        min_query_count=300,
    )


class MinimalSUT:
    """Two methods, no name, no start: completes inline through the module functions."""

    def issue_query(self, samples: list[QuerySample]) -> None:
        completion.query_samples_complete([QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples])

    def flush_queries(self) -> None:
        pass


class StartedSUT:
    """Completes through the sink it was started with, from its own thread; reports and closes."""

    def __init__(self) -> None:
        self.sinks: list[CompletionSink] = []
        self.calls: list[str] = []
        self.issued_before_start = 0

    def start(self, sink: CompletionSink) -> None:
        self.calls.append("start")
        self.sinks.append(sink)

    def issue_query(self, samples: list[QuerySample]) -> None:
        if not self.sinks:
            self.issued_before_start += 1
            return
        sink = self.sinks[-1]
        ids = np.array([s.id for s in samples], np.int64)
        threading.Thread(target=sink.complete_arrays, args=(ids,)).start()

    def flush_queries(self) -> None:
        pass

    def report(self) -> list[str]:
        self.calls.append("report")
        return ["lost 0 samples", "requests 1234"]

    def close(self) -> None:
        self.calls.append("close")


def test_the_capabilities_are_protocols() -> None:
    assert isinstance(MinimalSUT(), SystemUnderTest)
    assert not isinstance(MinimalSUT(), StartableSUT | ReportingSUT | ClosableSUT)
    started = StartedSUT()
    assert isinstance(started, StartableSUT) and isinstance(started, ReportingSUT) and isinstance(started, ClosableSUT)
    assert isinstance(completion.ForwardingSink(), CompletionSink)
    assert isinstance(completion.RunSink(), CompletionSink)


def test_a_two_method_sut_runs_valid_under_its_class_name(tmp_path: Path) -> None:
    qsl = InMemoryQSL(total=64, perf=64)
    out = run_test(MinimalSUT(), qsl, short_single_stream(), logs(tmp_path), audit_config=None)
    assert out.valid and out.errors == 0 and out.engine == "proctor"
    assert read_detail(out.log_paths["detail"]).require("sut_name") == "MinimalSUT"
    assert out.sut_report == []
    assert completion.active() is None


def test_a_started_sut_completes_through_the_runs_sink_and_its_report_is_logged(tmp_path: Path) -> None:
    sut = StartedSUT()
    qsl = InMemoryQSL(total=64, perf=64)
    out = session.run(sut, qsl, short_single_stream(), logs(tmp_path), EngineOptions(audit_config=None, short_run="a test"))
    assert len(sut.sinks) == 1 and isinstance(sut.sinks[0], completion.RunSink)
    assert sut.issued_before_start == 0
    assert out.valid and out.errors == 0
    assert out.result is not None and out.result.sample_count >= 300  # every completion landed
    assert sut.calls == ["start", "report", "close"]  # the report while the logs are open; close after
    assert out.sut_report == ["sut: lost 0 samples", "sut: requests 1234"]
    detail = read_detail(out.log_paths["detail"])
    assert detail.require("proctor_sut_report") == ["sut: lost 0 samples", "sut: requests 1234"]
    assert detail.require("proctor_short_run") == "a test"
    summary = out.log_paths["summary"].read_text()
    footer = summary.index("No errors encountered during test.")
    mark = summary.index("PROCTOR: Not a submission run: a test")
    report = summary.index("PROCTOR: sut: lost 0 samples\nPROCTOR: sut: requests 1234\n")
    assert footer < mark < report


def test_a_raising_report_is_an_error_not_a_crash(tmp_path: Path) -> None:
    class BadReport(MinimalSUT):
        def report(self) -> list[str]:
            raise ValueError("no counts")

    out = run_test(BadReport(), InMemoryQSL(total=64, perf=64), short_single_stream(), logs(tmp_path),
                   audit_config=None)
    assert out.errors == 1 and not session.verdict(out)[0]  # an error fails the verdict
    assert any("report() raised ValueError: no counts" in m for m in out.error_messages)


def test_one_verdict_for_both_engines_shapes() -> None:
    base = dict(result=None, incomplete=False, incomplete_reason="", errors=0, warnings=0, scenario="Offline",
                mode="PerformanceOnly", log_paths={"detail": Path("d"), "accuracy": Path("a")})
    official_ok = RunOutcome(valid=True, engine="official", wall_s=1.25, **base)  # type: ignore[arg-type]
    ok, lines = session.verdict(official_ok)
    assert ok and lines == ["engine: official mlperf_loadgen (1.2 s)", "VALID"]
    invalid = RunOutcome(valid=False, engine="official", invalid_reasons=["too few queries"], **base)  # type: ignore[arg-type]
    # issue 23: one failed check is named on the verdict line itself; several are listed under a count
    assert session.verdict(invalid) == (False, ["engine: official mlperf_loadgen (0.0 s)",
                                                "INVALID: too few queries"])
    invalid = dataclasses.replace(invalid, invalid_reasons=["too few queries", "latency over the target"])
    assert session.verdict(invalid) == (False, ["engine: official mlperf_loadgen (0.0 s)",
                                                "INVALID: 2 checks failed:", "  - too few queries",
                                                "  - latency over the target"])
    nothing = RunOutcome(valid=False, **base)  # type: ignore[arg-type]
    assert session.verdict(nothing) == (False, ["INVALID: no performance result (nothing completed)"])


@pytest.mark.official
def test_both_engines_return_the_same_outcome(tmp_path: Path) -> None:
    pytest.importorskip("mlperf_loadgen")
    outcomes = {}
    for engine in session.Engine:
        sut, qsl = from_params(workers="1", service_us="0", total="64", perf="64")
        outcomes[engine] = session.run(
            sut, qsl, short_single_stream(), logs(tmp_path / engine), EngineOptions(audit_config=None, short_run="a test"),
            engine=engine,
        )
        assert sut._closed  # the session closed it
    mine, official = outcomes[session.Engine.PROCTOR], outcomes[session.Engine.OFFICIAL]
    assert type(mine) is type(official) is RunOutcome
    assert (mine.engine, official.engine) == ("proctor", "official")
    for o in (mine, official):
        assert o.valid and o.errors == 0 and o.error_messages == [] and not o.incomplete
        assert (o.scenario, o.mode) == ("SingleStream", "PerformanceOnly")
        assert sorted(o.log_paths) == ["accuracy", "detail", "samples", "summary", "trace"]
        assert read_detail(o.log_paths["detail"]).require("proctor_short_run") == "a test"
        assert o.log_paths["summary"].read_text().rstrip().endswith("PROCTOR: Not a submission run: a test")
    assert {k: p.name for k, p in mine.log_paths.items()} == {k: p.name for k, p in official.log_paths.items()}
    assert mine.metric is not None and official.metric is not None
    assert mine.metric.name == official.metric.name == "90th percentile latency (early stopping estimate)"
    assert mine.metric.unit == official.metric.unit == "ns" and official.metric.value > 0
    assert session.verdict(mine)[0] and session.verdict(official)[0]


LOG_WRITES = re.compile(
    r"append_record|append_short_run|append_annotations|\bopen\(|write_text|write_bytes|log_paths\[|\.log_paths"
)


def test_no_file_under_cli_writes_a_runs_logs() -> None:
    lines = [
        (path, n, line)
        for path in sorted((SRC / "cli").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
    ]
    appends = [f"{p.name}:{n}" for p, n, line in lines if re.search(r"append_record|append_short_run|append_annotations", line)]
    assert appends == []
    # the commands that make runs neither open a file nor touch a run's log paths
    run_commands = [f"{p.name}:{n}: {line.strip()}" for p, n, line in lines
                    if p.name in ("run.py", "audit.py", "run_options.py") and LOG_WRITES.search(line)]
    assert run_commands == []


def test_the_app_layer_does_not_import_the_cli() -> None:
    hits = [
        str(path.relative_to(SRC))
        for path in sorted((SRC / "app").rglob("*.py"))
        if re.search(r"^\s*(from|import) proctor\.cli\b", path.read_text(), re.M)
    ]
    assert hits == []


def test_the_printed_verdict_is_a_file_beside_the_closed_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 §4: the session judges a run once the engine has closed its logs; it writes the verdict
    beside them (loadgen.logs.verdict) and appends nothing to the closed detail log."""
    from proctor.loadgen.logs import detail as detail_mod
    from proctor.loadgen.logs.verdict import VERDICT_FILE, read_verdict
    from proctor.report.data import read_run

    appended: list[str] = []
    monkeypatch.setattr(detail_mod, "append_record", lambda path, key, value: appended.append(key))
    request = session.RunRequest(scenario=Scenario.SINGLE_STREAM, sut="synthetic:service_us=0,workers=1",
                                 duration_ms=100, min_queries=64, output_dir=tmp_path, report=False,
                                 audit_conf=tmp_path / "none.config")
    result = session.RunSession(request).execute()
    assert appended == []
    assert "proctor_verdict" not in (tmp_path / "mlperf_log_detail.txt").read_text()
    written = read_verdict(tmp_path)
    assert written is not None and written[: len(result.verdict)] == result.verdict
    assert result.verdict[0].startswith(("VALID", "INVALID")) and (tmp_path / VERDICT_FILE).is_file()
    assert read_run(tmp_path).verdict == written  # report.html shows the words the command line printed
