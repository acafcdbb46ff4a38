"""The digits accuracy script: the rules' rounding, the official log format, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.errors import LogFormatError
from proctor.workloads import digits
from proctor.workloads.digits import accuracy, data


def write_log(path, entries):
    """An accuracy log in the official writer's layout (one entry per line, uppercase hex)."""
    body = ",".join(f'\n{{ "seq_id" : {s}, "qsl_idx" : {i}, "data" : "{d}" }}' for s, i, d in entries)
    path.write_text("[" + body + "\n]\n")
    return path


def hex_of(label: int) -> str:
    return np.array([label], digits.RESPONSE_DTYPE).tobytes().hex().upper()


@pytest.mark.parametrize(
    ("good", "total", "text"),
    [
        (565, 600, "94.167"),  # 94.1666...
        (600, 600, "100.00"),
        (123445, 1_000_000, "12.344"),  # exact tie -> even digit kept
        (123455, 1_000_000, "12.346"),  # exact tie, 5 is odd -> rounds up
        (197999, 200_000, "99.000"),  # 98.9995: tie, 9 is odd -> rounds up
        (1, 3, "33.333"),
        (0, 5, "0.0000"),
    ],
)
def test_format_is_five_significant_figures_half_even(good, total, text):
    assert accuracy.format_accuracy(good, total) == text


def test_evaluate_counts_each_index_once(tmp_path):
    labels = data.validation().labels
    entries = [
        (k, i, hex_of(int(labels[i]) if i % 3 else (int(labels[i]) + 1) % 10))
        for k, i in enumerate(range(30))
    ]
    entries.append((30, 1, hex_of((int(labels[1]) + 1) % 10)))  # a later, wrong duplicate: ignored
    result = accuracy.evaluate(write_log(tmp_path / "a.json", entries))
    assert (result.good, result.total) == (20, 30)
    assert result.line() == "accuracy=66.667%, good=20, total=30"
    assert not result.meets(0.99)


def test_evaluate_perfect_log_meets_targets(tmp_path):
    labels = data.validation().labels
    entries = [(k, k, hex_of(int(labels[k]))) for k in range(600)]
    result = accuracy.evaluate(write_log(tmp_path / "a.json", entries))
    assert result.line() == "accuracy=100.00%, good=600, total=600"
    assert result.meets(0.99) and result.meets(0.999)


@pytest.mark.parametrize(
    ("entry", "message", "line"),
    [
        ('{ "seq_id" : 0, "qsl_idx" : 1, "data" : "ZZ" }', "key 'data' is not hex", 3),
        ('{ "seq_id" : 0, "qsl_idx" : 1 }', "no key 'data'", 3),
        ('{ "seq_id" : 0, "qsl_idx" : 1, "data" : "01" }', "holds 1 bytes", 3),
        ('{ "seq_id" : 0, "qsl_idx" : 900, "data" : "01000000" }', "outside", 3),
        ("[1]", "not an object", 3),
    ],
)
def test_bad_entries_name_file_line_and_key(tmp_path, entry, message, line):
    path = tmp_path / "bad.json"
    path.write_text('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "01000000" },\n' + entry + "\n]\n")
    with pytest.raises(LogFormatError, match=message) as err:
        accuracy.evaluate(path)
    assert err.value.file == str(path) and err.value.line == line


def test_not_json_is_reported_with_its_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('[\n{ "seq_id" : 0,\n')
    with pytest.raises(LogFormatError, match="not JSON") as err:
        accuracy.evaluate(path)
    assert err.value.file == str(path) and err.value.line is not None


def test_cli_prints_the_rules_line_and_verdicts(tmp_path, capsys):
    labels = data.validation().labels
    wrong = set(range(0, 600, 15))  # 40 wrong -> 560/600 = 93.333%: passes 99%, fails 99.9%
    entries = [
        (k, k, hex_of(int(labels[k]) if k not in wrong else (int(labels[k]) + 1) % 10)) for k in range(600)
    ]
    path = write_log(tmp_path / "mlperf_log_accuracy.json", entries)
    assert accuracy.main(["--mlperf-accuracy-file", str(path), "--targets"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "accuracy=93.333%, good=560, total=600"
    assert out[1].startswith("99% of FP32 (94.167%): target=93.225%") and out[1].endswith("PASS")
    assert out[2].startswith("99.9% of FP32") and out[2].endswith("FAIL")
    assert accuracy.main(["--mlperf-accuracy-file", str(tmp_path / "missing.json")]) == 2
