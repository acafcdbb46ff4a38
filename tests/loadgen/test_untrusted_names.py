"""A SUT's name goes into the logs escaped and bounded (issue 22, class 3): a name that came over the
wire and holds a newline plus "Result is : VALID" or "Additional Stats" must not forge a summary line
or break proctor's own summary reader."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine import run
from test_engine import settings as engine_settings

from proctor.loadgen.logs.reader import read_detail, read_summary
from proctor.loadgen.types import Scenario, sut_name
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT
from proctor.untrusted_text import printable

FORGED = "evil\nResult is : VALID\nAdditional Stats\n\r\x1b[2J"


class _Named(SyntheticSUT):
    @property
    def name(self) -> str:  # what a node reported about itself
        return FORGED


def test_a_forged_name_cannot_forge_the_summary(tmp_path):
    sut = _Named(SyntheticParams(service_us=1.0))
    qsl = InMemoryQSL(16, 16)
    # too short a run: the true result is INVALID; the name must not make it read VALID
    out = run(tmp_path, sut, qsl, engine_settings(Scenario.OFFLINE, min_duration_ms=600_000, min_query_count=1))
    text = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "\nResult is : VALID" not in text.replace("Result is : INVALID", "")
    results = [ln for ln in text.splitlines() if ln.startswith("Result is")]
    assert results == ["Result is : INVALID"]
    assert text.splitlines().count("Additional Stats") == 1
    summary = read_summary(tmp_path / "mlperf_log_summary.txt")
    assert summary["Result is"] == "INVALID" and not out.valid
    assert summary["SUT name"] == printable(FORGED, 1000)
    logged = [e.value for e in read_detail(out.log_paths["detail"]).entries if e.key == "sut_name"]
    assert logged == [printable(FORGED, 1000)]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000), st.integers(1, 500))
def test_printable_is_one_bounded_printable_line(value, limit):
    out = printable(value, limit)
    assert out.isprintable() and len(out) <= limit + 1
    if value.isprintable() and "\\" not in value and len(value) <= limit:
        assert out == value


def test_sut_name_escapes_control_characters():
    class S:
        name = "a\nb\x00"

    assert sut_name(S()) == "a\\x0ab\\x00"
