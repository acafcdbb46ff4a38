"""Each class of disagreement the whole-round comparison with the official checkers found (published
v4.1 and v5.1 results, official v4.1 and v5.1.1 checkers), rebuilt in tmp_path from the corpus logs:

- an Offline query padded by equal issue, logged unpadded by LoadGen before 5.0.11 (203 published
  v4.1 results read as forged rates) or with a loaded set smaller than the performance sample count
  (a v5.1 open Llama3.1-8B edge run);
- a hash of the truncated log is named, not rejected (three v5.1 Llama2, two v4.1 DLRM results);
- equal issue mode, which the v5.0.1 (closed) and v5.1.1 (every division) checkers require;
- TEST01's fallback compares the benchmark's target metrics, not every number (a v4.1 BERT result's
  exact_match moved 0.107 %, its F1 0.098 %);
- a TEST01 that passed keeps its accuracy log (the official rejects it without);
- an open result's accuracy run covers the whole dataset (rules §Open division), as the official
  says, though it keeps the result;
- a system description with a repeated key is read as the official reads it (its last value), with
  a warning (a published v4.1 system repeats network_speed_mbit).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from checks_corpus import UT_EDGE, build_valid_tree, edit_detail

from proctor.checks.compliance import check_accuracy_hash
from proctor.checks.rederive import RULE, check_rederived
from proctor.checks.submission import OPEN_DATASET_SRC, check_submission
from proctor.checks.system_description import check_system_description
from proctor.findings import Severity
from proctor.loadgen.logs import read_detail
from proctor.rules.inference_rounds import delta_perc_of_test01, round_table
from proctor.submission.truncate import truncate_bytes
from tests.checks import test_rounds as built

OFFLINE = Path("closed/UntetherAI/results") / UT_EDGE / "resnet50" / "offline" / "performance/run_1"
CONCAT = "effective_sample_concatenate_permutation"


def _set(detail: Path, key: str, value: str | None) -> None:
    """A detail-log key set to `value` (added when the log lacks it), or removed (None)."""
    text = detail.read_text()
    if value is None:
        detail.write_text("".join(ln for ln in text.splitlines(keepends=True) if f'"key": "{key}"' not in ln))
    elif f'"key": "{key}"' in text:
        edit_detail(detail, key, value)
    else:
        built._append(detail, key, value)


# The corpus Offline run: 92,400,000 samples over 657.065314409 s (140,625 samples/s as logged).
# (concatenation setting, loaded set, QSL total, generated size, logged rate) -> the rate is a forgery
PADDING = [
    # LoadGen 4.x logged neither the setting nor the padded size: either size is the run's
    (None, 10833, None, "92400000", "140625", False),  # unpadded: equal issue off
    (None, 10833, None, "92400000", "140634", False),  # padded to 8,530 x 10,833 = 92,405,490
    (None, 10833, None, "92400000", "150000", True),
    # the setting logged on: the query held the padded size, logged so or not
    ("true", 10833, None, "92400000", "140634", False),
    ("true", 10833, None, "92405490", "140634", False),
    ("true", 10833, None, "92400000", "140625", True),
    # a loaded set of the QSL's 4,761 samples (performance count 5,000): 9,522 = 2 x 4,761 held
    ("true", 5000, 4761, "9522", "14.4917", False),
    ("true", 5000, None, "9522", "14.4917", True),  # without the QSL's total, padding to 5,000 gives 10,000
    # off: nothing padded
    ("false", 10833, None, "92400000", "140625", False),
    ("false", 10833, None, "92400000", "140634", True),
]


@pytest.mark.parametrize(("concat", "loaded", "total", "generated", "rate", "forged"), PADDING)
def test_offline_rate_of_an_equal_issue_query(
    tmp_path: Path, concat: str | None, loaded: int, total: int | None, generated: str, rate: str, forged: bool
) -> None:
    detail = build_valid_tree(tmp_path) / OFFLINE / "mlperf_log_detail.txt"
    _set(detail, CONCAT, concat)
    _set(detail, "effective_performance_sample_count", str(loaded))
    _set(detail, "qsl_reported_total_count", str(total) if total else None)
    _set(detail, "generated_samples_per_query", generated)
    _set(detail, "result_samples_per_second", rate)
    if generated == "9522":  # one query of 9,522 samples: the same 657 s run, its counts scaled down
        _set(detail, "effective_samples_per_query", "5000")
        _set(detail, "effective_min_sample_count", "5000")
    found = [f for f in check_rederived(read_detail(detail)).findings if f.key == "result_samples_per_second"]
    assert bool(found) is forged, [f.message for f in found]
    if forged:
        assert found[0].rule == RULE


# --- accuracy hash of the truncated log -----------------------------------------------------------
def test_hash_of_the_truncated_log_is_a_warning(tmp_path: Path) -> None:
    full = b"[\n" + b",\n".join(b'{"seq_id": %d, "qsl_idx": %d, "data": "00"}' % (i, i) for i in range(400)) + b"\n]\n"
    acc = tmp_path / "accuracy"
    acc.mkdir()
    cut = truncate_bytes(full)
    (acc / "mlperf_log_accuracy.json").write_bytes(cut)
    (acc / "accuracy.txt").write_text(f"{{'rouge1': 44.4}}\nhash={hashlib.sha256(cut).hexdigest()}\n")
    found = check_accuracy_hash(acc)
    assert [(f.rule, f.severity) for f in found] == [("accuracy_hash", Severity.WARNING)]
    assert "truncated log" in found[0].message
    # the full log's hash: nothing to say; a hash of neither: cannot be told from the cut log either
    (acc / "accuracy.txt").write_text(f"{{'rouge1': 44.4}}\nhash={hashlib.sha256(full).hexdigest()}\n")
    assert check_accuracy_hash(acc) == []


# --- equal issue mode -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("builder", "version", "value", "rejected"),
    [
        ("_llama2_v51", "v5.1", "true", False),
        ("_llama2_v51", "v5.1", "false", True),
        ("_llama2_v51", "v5.1", None, True),  # not logged: the official reads None, not True
        ("_llama2_interactive_v50", "v5.0", "false", True),
        ("_gptj_v41", "v4.1", "false", False),  # v4.1's checker computes it and never fails on it
    ],
)
def test_equal_issue_mode_as_the_round_requires(
    tmp_path: Path, builder: str, version: str, value: str | None, rejected: bool
) -> None:
    root = built._build(tmp_path, getattr(built, builder))
    for detail in root.glob("closed/*/results/*/*/*/performance/run_1/mlperf_log_detail.txt"):
        _set(detail, CONCAT, value)
    report = check_submission(root, version)
    found = [f for f in report.findings if f.rule == "equal_issue"]
    assert bool(found) is rejected and report.valid is not rejected, [f.message for f in report.findings if f.failed]
    if rejected:
        assert len(found) == 2 and all(f.failed and f.source == round_table(version).equal_issue.source for f in found)  # type: ignore[union-attr]
        assert ("not logged" if value is None else "is false") in found[0].message


def test_equal_issue_lists_are_the_rounds() -> None:
    v50, v51 = round_table("v5.0").equal_issue, round_table("v5.1").equal_issue
    assert v50 is not None and v51 is not None
    assert v50.closed_only and not v51.closed_only
    assert "llama2-70b-interactive-99" in v50.models and "whisper" in v51.models
    assert round_table("v4.1").equal_issue is None and round_table("v6.1").equal_issue is None


# --- TEST01 -----------------------------------------------------------------------------------------
def _test01(root: Path, scenario: str = "Offline") -> Path:
    return next(root.glob(f"closed/*/compliance/*/bert-99/{scenario}/TEST01"))


@pytest.mark.parametrize(
    ("baseline", "compliance", "failed"),
    [
        # the published v4.1 ASUSTeK bert-99.9 numbers, at bert-99's 1 %: exact_match is no target
        ((26.650898770104067, 29.099668791545227), (26.62251655629139, 29.07128657773255), ()),
        ((80.0, 90.0), (70.0, 89.5), ()),  # exact_match 13 % apart: not a target metric
        ((80.0, 90.0), (80.0, 88.0), ("f1",)),  # F1 2.2 % apart
        ((80.0, 90.0), (80.0, 0.0), ("f1",)),  # a zero is the official's missing metric
    ],
)
def test_test01_fallback_compares_the_target_metrics(
    tmp_path: Path, baseline: tuple[float, float], compliance: tuple[float, float], failed: tuple[str, ...]
) -> None:
    root = built._build(tmp_path, built._bert_v41)
    t = _test01(root)
    (t / "verify_accuracy.txt").write_text("num_perf_log_data_mismatch = 3\nTEST FAIL\n")
    for name, (em, f1) in (("baseline_accuracy.txt", baseline), ("compliance_accuracy.txt", compliance)):
        (t / "accuracy" / name).write_text(json.dumps({"exact_match": em, "f1": f1}) + "\n")
    found = [f for f in check_submission(root, "v4.1").findings if f.failed and "TEST01" in f.path]
    assert [f.rule for f in found if "Offline" in f.path] == (["compliance_failed"] if failed else [])
    if failed:
        assert "f1" in found[0].message and "exact_match" not in found[0].message


def test_test01_deltas_are_the_official_ones() -> None:
    assert delta_perc_of_test01("stable-diffusion-xl", "CLIP_SCORE", False) == 1.0
    assert delta_perc_of_test01("stable-diffusion-xl", "FID_SCORE", False) == 2.0
    assert delta_perc_of_test01("bert-99.9", "F1", True) == 0.1
    assert delta_perc_of_test01("bert-99", "F1", False) == 1.0


@pytest.mark.parametrize("missing", ["mlperf_log_accuracy.json", "accuracy.txt"])
def test_test01_that_passed_keeps_its_accuracy_files(tmp_path: Path, missing: str) -> None:
    """A published v4.1 result whose TEST01 accuracy log is gone: the official rejects it."""
    root = built._build(tmp_path, built._bert_v41)
    (_test01(root) / "accuracy" / missing).unlink()
    found = [f for f in check_submission(root, "v4.1").findings if f.failed]
    assert [(f.rule, Path(f.path).name) for f in found] == [("compliance_file", missing)]
    assert "REQUIRED_TEST01_ACC_FILES" in (found[0].source or "")


# --- the open division's dataset ----------------------------------------------------------------------
def test_open_accuracy_run_over_part_of_the_dataset_cites_the_open_rule(tmp_path: Path) -> None:
    root = build_valid_tree(tmp_path)
    (root / "open").mkdir()
    shutil.move(str(root / "closed" / "UntetherAI"), root / "open" / "UntetherAI")
    system = root / "open/UntetherAI/systems" / f"{UT_EDGE}.json"
    system.write_text(re.sub(r'"division":\s*"closed"', '"division": "open"', system.read_text()))
    acc = root / "open/UntetherAI/results" / UT_EDGE / "resnet50" / "offline" / "accuracy" / "mlperf_log_detail.txt"
    assert check_submission(root, "v4.1").valid
    edit_detail(acc, "qsl_reported_total_count", "47610")
    found = [f for f in check_submission(root, "v4.1").findings if f.failed]
    assert [(f.rule, f.path) for f in found] == [("accuracy_dataset", str(acc))]
    assert found[0].source is not None and found[0].source.startswith(OPEN_DATASET_SRC)


# --- a repeated key in the system description ------------------------------------------------------
@pytest.mark.parametrize(
    ("repeated", "last", "failed"),
    [
        ('"host_network_card_count": "2", "host_network_card_count": "4"', "4", False),
        ('"division": "open", "division": "closed"', "closed", False),  # the last value is the closed one
        ('"division": "closed", "division": "open"', "open", True),  # ... and here it is open: wrong division
    ],
)
def test_system_description_with_a_repeated_key(tmp_path: Path, repeated: str, last: str, failed: bool) -> None:
    root = build_valid_tree(tmp_path)
    system = root / "closed/UntetherAI/systems" / f"{UT_EDGE}.json"
    text = system.read_text().rstrip()
    assert text.endswith("}")
    system.write_text(text[:-1].rstrip() + ", " + repeated + "}\n")
    desc, found = check_system_description(system, "closed", "UntetherAI")
    key = repeated.split('"')[1]
    assert desc is not None and str(desc[key]) == last
    warned = [f for f in found if "duplicate key" in f.message]
    assert [(f.severity, f.key) for f in warned] == [(Severity.WARNING, key)]
    assert any(f.failed for f in found) is failed
