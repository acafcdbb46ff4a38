"""Issue 23, journey 10: the report opens with what a reader looks for (the verdict and its true
cause, the headline metric against its bound, TTFT/TPOT against theirs), then the figures; the full
numbers table is folded, and a figure recomputed from the trace is shown only where it differs from
the logged one."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from report_html import parse
from report_runs import make_llm_run

from proctor.report import build_report
from proctor.report.html import render


class FirstSection(HTMLParser):
    """The text and data-keys of the page's first <section>, and whether a <details> was open at
    each data-key (folded) and whether its row was hidden."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # inside the first section when > 0
        self.done = False
        self.text: list[str] = []
        self.keys: dict[str, tuple[str, bool, bool]] = {}  # key -> (value, folded, hidden)
        self.tags: list[str] = []
        self._details = 0
        self._hidden = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and not self.done and self.depth == 0:
            self.depth = 1
            return
        if self.depth == 0:
            return
        self.tags.append(tag + (f"#{a['id']}" if a.get("id") else ""))
        if tag == "details":
            self._details += 1
        if tag == "tr":
            self._hidden = "hidden" in a
        if "data-key" in a:
            self.keys[a["data-key"] or ""] = (a.get("data-value") or "", self._details > 0, self._hidden)

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag == "details":
            self._details -= 1
        if self.depth and tag == "section":
            self.depth, self.done = 0, True

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.text.append(data)


def first_section(html: str) -> FirstSection:
    p = FirstSection()
    p.feed(html)
    return p


def proctor(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"}, timeout=300)


def test_invalid_run_report_opens_with_its_cause_and_metric(tmp_path: Path) -> None:
    res = proctor("run", "--scenario", "Offline", "--sut", "synthetic:service_us=0,workers=0,batch=4096",
                  "--duration-ms", "500", "--target-qps", "10", "--min-queries", "1", "--no-trace",
                  "-o", tmp_path / "logs", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    verdict = next(line for line in res.stdout.splitlines() if line.startswith("INVALID: "))
    html = (tmp_path / "logs" / "report.html").read_text()
    first = first_section(html)
    text = " ".join(" ".join(first.text).split())
    assert "INVALID" in text and verdict.removeprefix("INVALID: ") in text  # the verdict's own cause
    value, folded, _ = first.keys["headline_metric"]
    assert float(value) > 0 and not folded
    headline_at = first.tags.index("div#run-0-headline")
    assert headline_at < min(i for i, t in enumerate(first.tags) if t.startswith(("figure", "table#run-0-rules")))
    assert first.tags.index("details#run-0-numbers-all") < first.tags.index("table#run-0-numbers")
    assert first.keys["p99_ns"][1]  # the full table is folded
    overview = html[html.index('<nav id="overview">'):html.index("</nav>")]
    assert "INVALID" in overview and "samples per second" in overview


def test_llm_run_headline_has_ttft_tpot_against_their_bounds_and_hides_equal_trace_rows(tmp_path: Path) -> None:
    d, _ = make_llm_run(tmp_path / "llm")
    rep = build_report([d])
    (run,) = rep.runs
    html = render(rep)
    first = first_section(html)
    for key, lat, bound in (("headline_ttft_ns", run.ttft, run.ttft_bound_ns),
                            ("headline_tpot_ns", run.tpot, run.tpot_bound_ns)):
        value, folded, _ = first.keys[key]
        assert run.target_percentile is not None and lat is not None and bound
        assert float(value) == lat.percentiles[run.target_percentile] and not folded
    text = " ".join(" ".join(first.text).split())
    for label, lat, bound in (("TTFT", run.ttft, run.ttft_bound_ns), ("TPOT", run.tpot, run.tpot_bound_ns)):
        met = lat.percentiles[0.99] <= bound  # type: ignore[union-attr,operator]
        assert re.search(rf"{label} p99 [\d.,]+ ms ≤ [\d.,]+ ms {'met' if met else 'NOT met'}", text), text
    assert "latency p99" not in text  # a token run is bound by TTFT/TPOT, not by the latency target
    if run.valid is False:  # the true cause, as the verdict words it (the run's timing decides which)
        assert run.invalid_reasons and all(" ".join(r.split()) in text for r in run.invalid_reasons)
    else:
        assert text.split()[1] == "VALID"
    # every trace figure equals the logged one here: kept for scripts, hidden from the reader
    trace_keys = {k: v for k, v in first.keys.items()
                  if k.startswith("trace_") and k not in ("trace_samples", "trace_same_as_logged")}
    assert trace_keys and all(hidden for _, _, hidden in trace_keys.values())
    assert int(first.keys["trace_same_as_logged"][0]) == len(trace_keys)
    assert "run-0-trace-differs" not in parse(html).ids
    # a trace percentile that differs from the logged one is shown, with the logged value beside it
    assert run.trace_ttft is not None
    changed = dict(run.trace_ttft.percentiles)
    changed[0.5] += 5_000_000
    run.trace_ttft = dataclasses.replace(run.trace_ttft, percentiles=changed)
    html = render(rep)
    first = first_section(html)
    assert first.keys["trace_ttft_p50_ns"][2] is False  # visible
    assert all(hidden for k, (_, _, hidden) in first.keys.items() if k.startswith("trace_") and k not in
               ("trace_ttft_p50_ns", "trace_samples", "trace_same_as_logged"))
    assert "run-0-trace-differs" in parse(html).ids and "TTFT p50 (trace)" in html and "(logged " in html


def test_short_run_report_gives_the_clis_verdict_never_a_green_valid(tmp_path: Path) -> None:
    """A run valid only for settings shorter than the rules' reads in report.html as `proctor run`
    printed it (issue 31: the demo's short runs were green VALID beside a table saying INVALID)."""
    from proctor.loadgen.logs.detail import SHORT_RUN_VERDICT

    # SingleStream with 200 us queries generated 50 us apart: it cannot run out, however slow the host
    res = proctor("run", "--scenario", "SingleStream", "--sut", "synthetic:service_us=200,workers=1",
                  "--duration-ms", "300", "--expected-latency-ms", "0.05", "--no-trace", "-o", tmp_path / "logs",
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    verdict = next(line for line in res.stdout.splitlines() if line.startswith("VALID"))
    assert verdict.startswith(f"{SHORT_RUN_VERDICT}: min_duration 0.3 s < 600 s")
    html = (tmp_path / "logs" / "report.html").read_text()
    assert 'class="badge valid"' not in html
    badges = re.findall(r'class="badge (\w+)" data-verdict="([^"]*)"', html)
    assert badges and set(badges) == {("short", SHORT_RUN_VERDICT)}
    text = " ".join(" ".join(first_section(html).text).split())
    assert f"{SHORT_RUN_VERDICT} min_duration 0.3 s < 600 s" in text  # the badge, then the cause
