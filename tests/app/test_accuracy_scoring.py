"""An accuracy run scores itself (issue 23, journey 5; issue 24 §4): accuracy.txt and the target."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from proctor.app import accuracy_scoring as acc
from proctor.checks.accuracy import parse_accuracy_text
from proctor.clients.llm_dataset import LLMDataset, LLMSample
from proctor.errors import ConfigError
from proctor.loadgen.types import TestMode

PY = sys.executable


def test_the_command_is_split_never_shelled(tmp_path: Path) -> None:
    log, folder = tmp_path / "a b" / "mlperf_log_accuracy.json", tmp_path / "a b"
    argv = acc.script_argv(f"{PY} x.py --log {{log}} --out {{dir}}/r '$HOME; rm -rf /' --d={{dataset}}",
                           log=log, folder=folder, dataset=Path("d.jsonl"))
    assert argv == [PY, "x.py", "--log", str(log), "--out", f"{folder}/r", "$HOME; rm -rf /", "--d=d.jsonl"]


@pytest.mark.parametrize(
    ("cmd", "mode", "dataset", "says"),
    [
        ("", TestMode.ACCURACY_ONLY, None, "empty command"),
        ("python 'unclosed", TestMode.ACCURACY_ONLY, None, "cannot be split"),
        ("no-such-program-xyz {log}", TestMode.ACCURACY_ONLY, None, "no such program"),
        (f"{PY} s.py {{dataset}}", TestMode.ACCURACY_ONLY, None, "no --dataset"),
        (f"{PY} s.py {{log}}", TestMode.PERFORMANCE_ONLY, None, "add --mode AccuracyOnly"),
    ],
)
def test_a_bad_script_is_refused_before_the_run(cmd, mode, dataset, says) -> None:
    with pytest.raises(ConfigError, match=says) as exc:
        acc.check_script(cmd, mode, dataset)
    assert exc.value.key == "--accuracy-script"


def test_stdout_becomes_accuracy_txt(tmp_path: Path) -> None:
    path, why = acc.run_script([PY, "-c", "print('accuracy=91.000%, good=1, total=1')"], tmp_path)
    assert why == "" and path == tmp_path / "accuracy.txt"
    assert path.read_text() == "accuracy=91.000%, good=1, total=1\n"


def test_a_failing_or_slow_script_writes_nothing(tmp_path: Path) -> None:
    code = "import sys; print('accuracy=99'); print('no dataset here', file=sys.stderr); sys.exit(3)"
    path, why = acc.run_script([PY, "-c", code], tmp_path)
    assert path is None and why == "exited with status 3 (last line on stderr: no dataset here)"
    path, why = acc.run_script([PY, "-c", "import time; time.sleep(30)"], tmp_path, timeout_s=0.5)
    assert path is None and why == "did not finish within 0.5 s"
    assert list(tmp_path.iterdir()) == []


def test_digits_targets_pass_and_miss() -> None:
    ok, lines = acc.target_lines("digits", "accuracy=94.167%, good=565, total=600\n")
    assert ok and lines == ["digits 99% of FP32: accuracy 94.167 meets >= 93.2253",
                            "digits 99.9% of FP32: accuracy 94.167 meets >= 94.0728"]
    ok, lines = acc.target_lines("digits", "accuracy=93.500%, good=561, total=600\n")
    assert ok and "accuracy 93.500 MISSES >= 94.0728" in lines[1]  # the 99% level is met
    ok, lines = acc.target_lines("digits", "accuracy=90.000%\n")
    assert not ok and lines[-1] == "INVALID: the accuracy misses every quality target of digits"
    ok, lines = acc.target_lines("digits-99.9", "accuracy=93.500%\n")  # a named level is the only one
    assert not ok and len(lines) == 2
    ok, lines = acc.target_lines("digits", "no numbers\n")
    assert not ok and "holds no 'key: number'" in lines[0]


def test_llm_targets_and_generation_length() -> None:
    # llama2-70b (rules table): rouge1 44.4312 etc. at 99.9 %; tokens_per_sample above 90 % of 294.45
    good = "{'rouge1': 44.5, 'rouge2': 22.1, 'rougeL': 28.7, 'tokens_per_sample': 294.4}"
    ok, lines = acc.target_lines("llama2-70b", good)
    assert ok, lines
    assert any("tokens_per_sample 294.4 within > 265.005" in line for line in lines)
    short = good.replace("294.4", "120.0")
    ok, lines = acc.target_lines("llama2-70b", short)
    assert not ok and "tokens_per_sample 120 OUTSIDE > 265.005" in "\n".join(lines)
    assert lines[-1] == "INVALID: the generation length is outside the bounds of Llama2-70b"
    assert "90% of the reference dataset's 294.45 (Inference rules §Benchmarks, Datacenter suite table)" in lines[-2]
    # a benchmark whose metric the scores do not name: said, not failed
    ok, lines = acc.target_lines("resnet50", good)
    assert ok and lines == [
        "note: the scores name no accuracy, the metric(s) of Resnet50-v1.5's targets; no target compared "
        "(--model names the benchmark)"
    ]


def _accuracy_log(path: Path, outputs: dict[int, tuple[str, int]]) -> Path:
    entries = [{"seq_id": k, "qsl_idx": i, "data": t.encode().hex(), "token_count": n}
               for k, (i, (t, n)) in enumerate(outputs.items())]
    path.mkdir(parents=True, exist_ok=True)
    (path / "mlperf_log_accuracy.json").write_bytes(orjson.dumps(entries))
    return path / "mlperf_log_accuracy.json"


def test_an_llm_dataset_with_outputs_is_scored(tmp_path: Path) -> None:
    samples = [LLMSample(prompt="q", output="the cat sat down"), LLMSample(prompt="r", output="a dog ran")]
    qsl = LLMDataset(samples, lambda s: b"")
    log = _accuracy_log(tmp_path / "acc", {0: ("the cat sat down", 4), 1: ("a dog ran", 3)})
    scored = acc.score_run(qsl, log, model="llama3.1-8b")
    text = (tmp_path / "acc" / "accuracy.txt").read_text()
    got = parse_accuracy_text(text)
    assert got["rouge1"] == got["rougel"] == got["exact_match"] == 100.0 and got["tokens_per_sample"] == 3.5
    assert scored.paths == [("accuracy", str(tmp_path / "acc" / "accuracy.txt"))]
    # exact outputs meet the ROUGE targets; two samples are not the official 13,368, so the gen_len
    # bound (90 % of the reference's total) is applied to these two references' 25 characters
    assert any("rouge1 100.00 meets" in line for line in scored.lines)
    assert any(line.startswith("note: 2 sample(s) scored, not Llama3.1-8B's official dataset") for line in scored.lines)
    assert "gen_len 25 within > 22.5: 90% of this dataset's 2 references' 25" in "\n".join(scored.lines)
    assert scored.ok


def test_truncated_outputs_of_an_own_dataset_miss_its_references_length(tmp_path: Path) -> None:
    samples = [LLMSample(prompt="q", output="the cat sat down on the mat"), LLMSample(prompt="r", output="a dog ran")]
    qsl = LLMDataset(samples, lambda s: b"")
    log = _accuracy_log(tmp_path / "acc", {0: ("the cat sat down", 4), 1: ("a dog ran", 3)})  # one cut short
    scored = acc.score_run(qsl, log, model="llama3.1-8b")
    assert "gen_len 25 OUTSIDE > 32.4: 90% of this dataset's 2 references' 36" in "\n".join(scored.lines)
    assert not scored.ok and scored.lines[-1] == "INVALID: the generation length is outside the bounds of Llama3.1-8B"


def test_the_official_dataset_size_keeps_the_rules_reference(tmp_path: Path) -> None:
    text = "\nResults\n\n{'rouge1': 43.0, 'rouge2': 20.2, 'rougeL': 30.0, 'gen_len': 8000000}\n"
    ok, lines = acc.target_lines("llama3.1-8b", text, acc.Scope(13368, 100.0))
    assert ok and "gen_len 8e+06 within > 7.35088e+06: 90% of the reference dataset's 8.16764e+06" in "\n".join(lines)
    assert not any(line.startswith("note:") for line in lines)
    ok, lines = acc.target_lines("llama3.1-8b", text.replace("8000000", "7000000"), acc.Scope(13368, 100.0))
    assert not ok


def test_nothing_to_score_says_how(tmp_path: Path) -> None:
    qsl = LLMDataset([LLMSample(prompt="q")], lambda s: b"")  # no reference outputs
    log = _accuracy_log(tmp_path / "acc", {0: ("x", 1)})
    scored = acc.score_run(qsl, log, model="llama2-70b")
    assert scored.ok and scored.paths == [] and "--accuracy-script" in scored.lines[0]
    assert not (tmp_path / "acc" / "accuracy.txt").exists()


def test_a_script_wins_over_the_builtin_scorer(tmp_path: Path) -> None:
    qsl = LLMDataset([LLMSample(prompt="q", output="x")], lambda s: b"")
    log = _accuracy_log(tmp_path / "acc", {0: ("x", 1)})
    cmd = f"{PY} -c \"import sys; print(\\\"{{'rouge1': 12.0}}\\\", sys.argv[1])\" {{log}}"
    scored = acc.score_run(qsl, log, model="none", script=cmd)
    assert (tmp_path / "acc" / "accuracy.txt").read_text() == f"{{'rouge1': 12.0}} {log}\n"
    assert scored.ok and scored.lines[0].startswith("accuracy (the accuracy script): {'rouge1': 12.0}")


def test_run_refuses_a_script_for_a_performance_run(cli, tmp_path: Path) -> None:
    r = cli("run", "-s", "Offline", "--sut", "digits:backend=numpy", "--model", "digits", "-o", str(tmp_path / "o"),
            "--accuracy-script", f"{PY} score.py {{log}}")
    assert r.rc == 2 and r.err.strip().splitlines() == [
        "error: key '--accuracy-script': applies to accuracy runs; add --mode AccuracyOnly (this run is PerformanceOnly)"
    ]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("code", "last"),
    [
        ("import sys; sys.exit(4)", "FAILED: --accuracy-script exited with status 4; no accuracy.txt written"),
        ("print('accuracy=90.000%, good=540, total=600')", "INVALID: the accuracy misses every quality target of digits"),
    ],
)
def test_a_failed_or_low_score_fails_the_run(cli, tmp_path: Path, code: str, last: str) -> None:
    r = cli("run", "-s", "Offline", "--sut", "digits:backend=numpy", "--model", "digits", "--mode", "AccuracyOnly",
            "-q", "--no-trace", "-o", str(tmp_path / "acc"), "--accuracy-script", f'{PY} -c "{code}"')
    assert r.rc == 1, r.out + r.err
    assert r.out.strip().splitlines()[-1] == last
