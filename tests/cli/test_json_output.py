"""Issue 23, journey 10: `--json` prints one document on stdout, valid against its schema, with the
command's usual exit code (through the real entry point, in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from proctor.schemas import SCHEMAS, validate
from tests.support import synthetic_logs as sl

FAST_OFFLINE = ("--scenario", "Offline", "--sut", "synthetic:service_us=0,workers=0,batch=4096", "--duration-ms", "0",
                "--min-queries", "2000", "--no-trace")


def proctor(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=300,
    )


def document(res: subprocess.CompletedProcess[str], kind: str) -> Any:
    """stdout is one JSON document and nothing else, and it fits the schema of `kind`."""
    doc = orjson.loads(res.stdout)
    assert validate(doc, SCHEMAS[kind]) == [], res.stdout
    return doc


def test_run_json_valid_offline(tmp_path: Path) -> None:
    res = proctor("run", *FAST_OFFLINE, "-o", tmp_path / "logs", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = document(res, "proctor.run")
    assert doc["kind"] == "proctor.run" and doc["exit_code"] == 0
    assert doc["verdict"] == "VALID" and doc["valid"] is True
    assert doc["scenario"] == "Offline" and doc["mode"] == "PerformanceOnly"
    assert doc["metric"]["name"] == "samples per second" and doc["metric"]["value"] > 0
    assert doc["numbers"]["sample_count"] == 2000 and doc["numbers"]["query_count"] == 1
    assert doc["short_run"].startswith("min_duration 0 s < 600 s")
    assert doc["findings"] == []
    assert Path(tmp_path / doc["paths"]["summary"]).is_file() and doc["paths"]["report"].endswith("report.html")
    assert "VALID" not in res.stderr  # the verdict is in the document, not printed beside it


def test_run_json_invalid_names_the_cause_and_exits_1(tmp_path: Path) -> None:
    # Offline asked for far fewer samples than the SUT does in min_duration: ends early, INVALID
    res = proctor("run", "--scenario", "Offline", "--sut", "synthetic:service_us=0,workers=0,batch=4096",
                  "--duration-ms", "500", "--target-qps", "10", "--min-queries", "1", "--no-trace", "--no-report",
                  "-o", tmp_path / "logs", "--json", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    doc = document(res, "proctor.run")
    assert doc["exit_code"] == 1 and doc["verdict"] == "INVALID" and doc["valid"] is False
    assert "min_duration is 0.5 s" in doc["cause"] and "--target-qps" in doc["cause"]
    (finding,) = [f for f in doc["findings"] if f["rule"] == "result"]
    assert finding["severity"] == "error" and finding["message"] == doc["cause"]
    assert "report" not in doc["paths"]


def test_audit_json(tmp_path: Path) -> None:
    res = proctor("audit", "TEST01", *FAST_OFFLINE, "-o", tmp_path / "audit", "--json", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr
    doc = document(res, "proctor.audit")
    (audit,) = doc["audits"]
    assert audit["audit"] == "TEST01" and audit["folder"].endswith("TEST01")
    assert res.returncode == (0 if doc["passed"] else 1) == doc["exit_code"]
    checks = {c["check"]: c for c in audit["checks"]}
    assert any("accuracy" in name for name in checks) and all(isinstance(c["passed"], bool) for c in checks.values())
    assert doc["passed"] == (audit["passed"] and not doc["findings"])


def test_check_submission_and_summarize_json(tmp_path: Path) -> None:
    from tests.checks.checks_corpus import build_corpus_tree

    tree = build_corpus_tree(tmp_path)
    res = proctor("check", "submission", tree, "--round", "v4.1", "--json", cwd=tmp_path)
    doc = document(res, "proctor.check.submission")
    assert res.returncode == (0 if doc["valid"] else 1)
    assert doc["verdict"] == ("INVALID" if not doc["valid"] else "VALID" if doc["submittable"] else
                              "VALID (development only)")
    assert doc["results"] and {"resnet50", "llama2-70b-99.9"} <= {r["benchmark"] for r in doc["results"]}
    res = proctor("summarize", tree, "--round", "v4.1", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = document(res, "proctor.summarize")
    assert len(rows) >= len(doc["results"])


def test_training_check_log_json(tmp_path: Path) -> None:
    good = sl.write_log(tmp_path / "result_0.txt", sl.valid_events("flux1"))
    bad = sl.write_log(tmp_path / "result_1.txt", sl.with_value(sl.valid_events("flux1"), "opt_adamw_beta_2", 0.96))
    res = proctor("training", "check-log", good, bad, "--json", cwd=tmp_path)
    assert res.returncode == 1
    docs = [orjson.loads(line) for line in res.stdout.splitlines()]
    assert [validate(d, SCHEMAS["proctor.training.check-log"]) for d in docs] == [[], []]
    assert [d["valid"] for d in docs] == [True, False]
    assert docs[1]["findings"][0]["severity"] == "error"
    res = proctor("training", "check-seeds", tmp_path, "--json", cwd=tmp_path)  # both log the same seed
    doc = document(res, "proctor.training.check-seeds")
    assert res.returncode == 1 and doc["valid"] is False
    assert [(f["rule"], f["severity"]) for f in doc["findings"]] == [("seeds:duplicate", "error")]


# --- the validator itself: it must be able to fail ---------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ({"rule": "r", "message": "m"}, "missing key 'severity'"),
        ({"rule": "r", "message": "m", "severity": "fatal"}, "is not one of"),
        ({"rule": 1, "message": "m", "severity": "error"}, "$.rule: expected string, got int"),
        ({"rule": "r", "message": "m", "severity": "error", "line": True}, "expected integer or null"),
        ([], "expected object"),
    ],
)
def test_validator_rejects(doc: Any, error: str) -> None:
    errors = validate(doc, SCHEMAS["proctor.run"]["properties"]["findings"]["items"])
    assert any(error in e for e in errors), errors


def test_validator_rejects_an_unexpected_key_and_a_bad_exit_code() -> None:
    doc = {k: None for k in SCHEMAS["proctor.run"]["required"]}
    errors = validate({**doc, "exit_code": 2, "extra": 1}, SCHEMAS["proctor.run"])
    assert "$: unexpected key 'extra'" in errors
    assert any(e.startswith("$.exit_code: 2 is not one of") for e in errors)


def test_training_summarize_and_check_package_json(tmp_path: Path) -> None:
    from tests.training.results_pkg import write_package
    from tests.training.test_summarize import SYSTEMS

    root = tmp_path / "p"
    write_package(root, SYSTEMS)
    res = proctor("training", "summarize", root, "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr  # a summary that could be made exits 0, invalid rows or not
    doc = document(res, "proctor.training.summarize")
    assert [r["system"] for r in doc["summary"]] == ["sysA", "sysB", "sysC"]
    res = proctor("training", "check-package", root, "--json", cwd=tmp_path)
    doc = document(res, "proctor.training.check-package")
    assert res.returncode == (0 if doc["valid"] else 1)
    assert doc["valid"] is False  # sysC fails its RCP
    assert any(f["severity"] == "error" for f in doc["findings"]) or any(not r["passed"] for r in doc["rcp"])


RAISING_SUT = """\
import proctor


class Boom:
    def issue_query(self, samples):
        raise RuntimeError("the accelerator fell off the bus")

    def flush_queries(self):
        pass


def make():
    return Boom(), proctor.SimpleQSL(64)
"""


def test_run_json_for_a_failed_run_still_prints_its_document(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(RAISING_SUT)
    res = proctor("run", *FAST_OFFLINE[:2], "--sut", "boom.py:make", "--duration-ms", "0", "--min-queries", "10",
                  "--no-trace", "-o", tmp_path / "logs", "--json", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    doc = document(res, "proctor.run")
    # the run wrote its logs: it is judged like any other (issue 31 §2), its cause the SUT's exception
    assert doc["verdict"] == "INCOMPLETE" and doc["exit_code"] == 1 and doc["valid"] is False
    assert doc["cause"].startswith("the SUT raised RuntimeError: the accelerator fell off the bus")
    assert doc["findings"][0]["rule"] == "incomplete" and "report" in doc["paths"]


def test_audit_json_reports_an_inconclusive_audit_as_such() -> None:
    from proctor.app.documents import audit_document
    from proctor.audits.run import AuditOutcome
    from proctor.audits.specs import Audit
    from proctor.audits.verify import Verdict

    fail = Verdict(check="performance", passed=False, lines=["TEST FAIL"])
    o = AuditOutcome(Audit.TEST04, Path("out/TEST04"), [fail], inconclusive="3 runs inside the 12.0 % spread")
    doc = audit_document([o], short_run="", exit_code=1)
    assert validate(doc, SCHEMAS["proctor.audit"]) == []
    (audit,) = doc["audits"]
    assert audit["inconclusive"] == "3 runs inside the 12.0 % spread" and audit["passed"] is False
    assert any(f["message"].startswith("INCONCLUSIVE: 3 runs") for f in doc["findings"])
