"""`proctor run --fit` (issue 31 §3): an Offline run the SUT finished before min_duration is made again
asking 1.5 x the rate that whole run measured (`audits.run.sized_offline`, as the audits size their
reference runs), at most twice, each time said; other scenarios refuse the option.

The SUT here cannot outrun a bound (4 workers sleeping 1 ms a sample: 4,000 samples/s at most), so the
first run, asked 400 samples/s, always ends early and the one made again at 1.5 x its rate always
lasts min_duration, however loaded the machine."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from proctor.audits.run import RESIZE_MARGIN, RESIZES
from proctor.cli.apps import app
from proctor.loadgen.logs.reader import read_detail

runner = CliRunner()
CAPPED = "synthetic:service_us=1000,workers=4"


def invoke(*args: str):
    return runner.invoke(app, ["run", *args], catch_exceptions=False)


def test_an_offline_run_that_ended_early_is_made_again_sized_by_it(tmp_path):
    out = tmp_path / "logs"
    result = invoke("-s", "Offline", "--sut", CAPPED, "--target-qps", "400", "--duration-ms", "500", "--min-queries", "1", "--fit",
                    "--no-report", "-o", str(out), "--quiet")
    assert result.exit_code == 0, result.output
    notes = re.findall(r"^note: --fit: run (\d) ended before min_duration at ([\d.e+]+) samples/s \(asked ([\d.e+]+)\): "
                       r"made again with offline_expected_qps ([\d.e+]+) \(1\.5 x that rate\)$", result.stdout, re.M)
    assert 1 <= len(notes) <= RESIZES, result.output  # in the verdict's lines (stdout), said on stderr as it goes
    assert all(f"note: --fit: run {n[0]} " in result.stderr for n in notes)
    assert [int(n[0]) for n in notes] == list(range(1, len(notes) + 1)) and float(notes[0][2]) == 400
    for _, rate, _, asked in notes:
        assert float(asked) == float(rate) * RESIZE_MARGIN or abs(float(asked) / float(rate) - RESIZE_MARGIN) < 1e-3
    assert "VALID for these settings" in result.output
    detail = read_detail(out / "mlperf_log_detail.txt")  # the logs are the last run's
    assert abs(float(detail.require("requested_offline_expected_qps")) - float(notes[-1][3])) <= 1e-3 * float(notes[-1][3])


def test_without_fit_the_same_run_is_invalid_and_names_the_target(tmp_path):
    result = invoke("-s", "Offline", "--sut", CAPPED, "--target-qps", "400", "--duration-ms", "500", "--min-queries", "1",
                    "--no-report", "-o", str(tmp_path / "logs"), "--quiet")
    assert result.exit_code == 1, result.output
    assert "INVALID: ran" in result.output and "--target-qps" in result.output and "--fit" not in result.output


def test_fit_is_refused_outside_offline(tmp_path):
    result = invoke("-s", "Server", "--sut", CAPPED, "--target-qps", "100", "--duration-ms", "500", "--fit",
                    "-o", str(tmp_path / "logs"))
    assert result.exit_code == 2, result.output
    assert "--fit" in result.output and "Offline" in result.output and len(result.output.strip().splitlines()) == 1
