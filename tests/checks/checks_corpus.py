"""Helpers for the checks tests: official-layout trees built from the real logs in shared/corpus/inference."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

_IN_CORPUS = Path("shared") / "corpus" / "inference" / "v4.1"
# The checkout's shared/ sits beside the repository (or above a worktree of it): the nearest one up.
CORPUS = next(
    (p / _IN_CORPUS for p in Path(__file__).resolve().parents if (p / _IN_CORPUS).is_dir()),
    Path(__file__).resolve().parents[3] / _IN_CORPUS,
)
NV_SYSTEM = "B200-SXM-180GBx1_TRT"
UT_EDGE, UT_DC = "h13_u2_preview", "h13_u2_preview_dc"


def _copy_result(root: Path, submitter: str, system: str, bench: str, scenario: str, src: Path) -> Path:
    d = root / "closed" / submitter / "results" / system / bench / scenario
    perf = d / "performance" / "run_1"
    perf.mkdir(parents=True, exist_ok=True)
    for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
        shutil.copy(src / name, perf / name)
    (d / "accuracy").mkdir(exist_ok=True)
    if (src / "accuracy.txt").exists():
        shutil.copy(src / "accuracy.txt", d / "accuracy" / "accuracy.txt")
    return d


def build_corpus_tree(tmp_path: Path) -> Path:
    """closed/{NVIDIA,UntetherAI}: the llama2-70b-99.9 Server, resnet50 SS/MS/Offline (edge), Server (dc)."""
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/inference is not available")
    root = tmp_path / "submission"
    for sub in ("NVIDIA", "UntetherAI"):
        (root / "closed" / sub / "systems").mkdir(parents=True)
        for j in (CORPUS / sub / "systems").glob("*.json"):
            shutil.copy(j, root / "closed" / sub / "systems" / j.name)
    _copy_result(
        root,
        "NVIDIA",
        NV_SYSTEM,
        "llama2-70b-99.9",
        "Server",
        CORPUS / "NVIDIA" / NV_SYSTEM / "llama2-70b-99.9" / "Server",
    )
    for scen in ("singlestream", "multistream", "offline"):
        _copy_result(
            root, "UntetherAI", UT_EDGE, "resnet50", scen, CORPUS / "UntetherAI" / UT_EDGE / "resnet50" / scen
        )
    _copy_result(
        root, "UntetherAI", UT_DC, "resnet50", "server", CORPUS / "UntetherAI" / UT_DC / "resnet50" / "server"
    )
    return complete_results(root)


def summary_metric(summary: Path, pattern: str) -> float:
    """A number from an official mlperf_log_summary.txt (the LoadGen's own report)."""
    m = re.search(pattern + r"\s*:\s*([\d.]+)", summary.read_text())
    assert m is not None, f"{pattern!r} not in {summary}"
    return float(m.group(1))


def edit_detail(path: Path, key: str, value: str) -> None:
    """Replace one key's JSON value in a detail log (as a wrongly configured run would have logged it)."""
    text = path.read_text()
    new, n = re.subn(
        r'("key": "' + re.escape(key) + r'", "value": )([^,]+|"[^"]*")(, "time_ms")',
        lambda m: m.group(1) + value + m.group(3),
        text,
    )
    assert n >= 1, f"{key} not in {path}"
    path.write_text(new)


def edit_summary(path: Path, label: str, value: str) -> None:
    """Replace one `label : value` line of a summary (beside an edited detail log, as one run wrote both)."""
    text = path.read_text()
    new, n = re.subn(r"(?m)^(\s*" + re.escape(label) + r"\s*:\s*).*$", lambda m: m.group(1) + value, text)
    assert n >= 1, f"{label} not in {path}"
    path.write_text(new)


_ORDERED = (  # the order statistics of one latency array, lowest rank first (recompute checks the order)
    ("result_min_latency_ns", "result_{}_percentile_latency_ns", "result_max_latency_ns"),
    ("result_min_query_latency_ns", "result_{}_percentile_per_query_latency_ns", "result_max_query_latency_ns"),
    ("result_first_token_min_latency_ns", "result_first_token_{}_percentile_latency_ns", "result_first_token_max_latency_ns"),
    ("result_time_to_output_token_min", "result_time_per_output_token_{}_percentile_ns", "result_time_to_output_token_max"),
)


def _detail_value(path: Path, key: str) -> str | None:
    m = re.search(r'"key": "' + re.escape(key) + r'", "value": ([^,]+|"[^"]*"), "time_ms"', path.read_text())
    return None if m is None else m.group(1)


def edit_run(detail: Path, key: str, value: str) -> None:
    """Change one value of a run's logs as a run with that value writes them: the detail key, the
    summary lines that print it, and the order statistics of the same latency array it would push
    past (a p99 lowered below the p97 lowers the p97 too)."""
    from proctor.loadgen.logs.numbers import percentile_label
    from proctor.loadgen.logs.recompute import PERCENTILES
    from proctor.loadgen.logs.summary_claims import printed_as

    changes = {key: value}
    for lo, pattern, hi in _ORDERED:
        seq = [lo, *(pattern.format(percentile_label(p)) for p in PERCENTILES), hi]
        if key in seq and value.isdigit():
            at = seq.index(key)
            for i, other in enumerate(seq):
                old = _detail_value(detail, other)
                if old is None or not old.isdigit() or i == at:
                    continue
                if (i < at and int(old) > int(value)) or (i > at and int(old) < int(value)):
                    changes[other] = value
    summary = detail.with_name("mlperf_log_summary.txt")
    for k, v in changes.items():
        edit_detail(detail, k, v)
        for section, label in printed_as(k) if summary.exists() else ():
            shown = {"true": "1", "false": "0"}.get(v, v.strip('"'))
            if label in (read_summary_section(summary, section)):
                edit_summary(summary, label, shown)


def read_summary_section(summary: Path, section: str) -> dict[str, object]:
    from proctor.loadgen.logs import read_summary

    parsed = read_summary(summary)
    part = parsed if section == "head" else parsed.get(section, {})
    return part if isinstance(part, dict) else {}


def build_valid_tree(tmp_path: Path) -> Path:
    """One closed submitter whose edge resnet50 SingleStream/MultiStream/Offline results pass every
    check: the real UntetherAI performance logs, plus an accuracy folder built from them (the detail
    log switched to AccuracyOnly over the whole ImageNet validation set, an accuracy.txt at target)."""
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/inference is not available")
    root = tmp_path / "valid"
    sub = root / "closed" / "UntetherAI"
    for name in ("systems", "measurements", "code", "compliance"):
        (sub / name).mkdir(parents=True)
    shutil.copy(CORPUS / "UntetherAI" / "systems" / f"{UT_EDGE}.json", sub / "systems" / f"{UT_EDGE}.json")
    for scen in ("singlestream", "multistream", "offline"):
        d = _copy_result(
            root, "UntetherAI", UT_EDGE, "resnet50", scen, CORPUS / "UntetherAI" / UT_EDGE / "resnet50" / scen
        )
        acc = d / "accuracy"
        shutil.copy(d / "performance" / "run_1" / "mlperf_log_detail.txt", acc / "mlperf_log_detail.txt")
        edit_detail(acc / "mlperf_log_detail.txt", "effective_test_mode", '"AccuracyOnly"')
        edit_detail(acc / "mlperf_log_detail.txt", "qsl_reported_total_count", "50000")
        (acc / "accuracy.txt").write_text("accuracy=76.078%, good=38039, total=50000\n")
        (acc / "mlperf_log_accuracy.json").write_text('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "00" }\n]\n')
    return complete_results(root)


AUDIT_SETTING: dict[str, dict[str, str]] = {
    "TEST01": {"effective_accuracy_log_sampling_target": "4096"},
    "TEST04": {"effective_performance_issue_same": "true"},
    "TEST05": {  # v4.1 only: the performance run with the round's TEST05 seeds
        "effective_qsl_rng_seed": "16799458546791641818",
        "effective_sample_index_rng_seed": "5453809927556429288",
        "effective_schedule_rng_seed": "5435552105434836064",
    },
}
# verify files without the scores: the checker re-runs each verification on the logs and compares the numbers
VERIFY = {
    "TEST01": {"verify_accuracy.txt": "num_perf_log_data_mismatch = 0\nTEST PASS\n\n", "verify_performance.txt": "Verifying performance.\nTEST PASS\n"},
    "TEST04": {"verify_performance.txt": "Verifying performance.\nTEST PASS\n"},
    "TEST05": {"verify_performance.txt": "Verifying performance.\nTEST PASS\n"},
}


def complete_results(root: Path) -> Path:
    """What a closed result needs beyond its logs (v5.x layout, the corpus' round): the accuracy log's
    hash in accuracy.txt, measurements (JSON, README.md, user.conf) and the TEST01/TEST04 audits (and
    v4.1's TEST05), each
    audit log a copy of the result's switched to the audit's setting."""
    import orjson

    from proctor.submission.truncate import truncate_tree

    for scen in sorted(root.glob("*/*/results/*/*/*")):
        sub, system, bench = scen.parents[3], scen.parents[1].name, scen.parent.name
        acc = scen / "accuracy"
        log = acc / "mlperf_log_accuracy.json"
        txt = (acc / "accuracy.txt").read_text() if (acc / "accuracy.txt").exists() else ""
        if "hash=" in txt:  # a real submission's: its log was truncated; stand in one of that shape
            log.write_bytes(b"[" + b" " * 4095 + b"\n\n...\n\n" + b" " * 4095 + b"]")
        elif not log.exists():
            log.write_text('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "00" }\n]\n')
        meas = sub / "measurements" / system / bench / scen.name
        meas.mkdir(parents=True, exist_ok=True)
        (meas / f"{system}.json").write_bytes(
            orjson.dumps({k: "fp32" for k in ("input_data_types", "retraining", "starting_weights_filename", "weight_data_types", "weight_transformations")})
        )
        (meas / "README.md").write_text("how the result was produced\n")
        (meas / "user.conf").write_text("# the run's user.conf: no overrides\n")
        detail = scen / "performance" / "run_1" / "mlperf_log_detail.txt"
        if bench.startswith("llama2-70b"):
            t = sub / "compliance" / system / bench / scen.name / "TEST06"
            t.mkdir(parents=True, exist_ok=True)
            (t / "verify_accuracy.txt").write_text(
                "First token check pass: True\nEOS check pass: True\nSample length check pass: True\nTEST06 verification complete\n"
            )
        if not detail.exists() or not bench.startswith("resnet"):
            continue
        for test, setting in AUDIT_SETTING.items():
            t = sub / "compliance" / system / bench / scen.name / test
            (t / "performance" / "run_1").mkdir(parents=True, exist_ok=True)
            for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
                shutil.copy(detail.parent / name, t / "performance" / "run_1" / name)
            for key, value in setting.items():
                edit_detail(t / "performance" / "run_1" / "mlperf_log_detail.txt", key, value)
            for name, text in VERIFY[test].items():
                (t / name).write_text(text)
            if test == "TEST01":  # its accuracy log (the sampled responses) and accuracy.txt, the official
                (t / "accuracy").mkdir(exist_ok=True)  # requires both (truncate_tree adds the hash line)
                shutil.copy(log, t / "accuracy" / "mlperf_log_accuracy.json")
                (t / "accuracy" / "accuracy.txt").write_text("")
    truncate_tree(root, None)  # hash and truncate every accuracy log that has its accuracy.txt
    return root


def copy_result_as(root: Path, src: Path, system: str, bench: str, scenario: str, submitter: str = "UntetherAI") -> Path:
    """A result folder of `bench`/`scenario` made from another result's logs (`src`, a scenario folder
    of the tree): a real LoadGen log under another benchmark's name, for rules that depend on the name."""
    dest = root / "closed" / submitter / "results" / system / bench / scenario
    shutil.copytree(src, dest)
    return dest


def set_offline_rate(detail: Path, rate: float) -> None:
    """An Offline run that measured `rate` samples/s over the same span: its query holds rate x its
    span in samples (asked for as rate / 1.05 x 660 s, as a sized run asks), so every number the
    checker re-derives (samples / max latency) agrees with the claim, in the detail log and summary."""
    span_s = int(_detail_value(detail, "result_max_latency_ns") or 0) / 1e9
    assert span_s > 0, detail
    samples = round(rate * span_s)
    expected = round(rate / 1.05)
    shown = f"{samples / span_s:.6g}"
    for key in ("effective_samples_per_query", "effective_min_sample_count", "generated_samples_per_query"):
        edit_detail(detail, key, str(samples))
    for key in ("requested_offline_expected_qps", "effective_target_qps"):
        edit_detail(detail, key, str(expected))
    edit_detail(detail, "result_samples_per_second", shown)
    summary = detail.with_name("mlperf_log_summary.txt")
    if summary.exists():
        edit_summary(summary, "Samples per second", shown)
        edit_summary(summary, "samples_per_query", str(samples))
        edit_summary(summary, "target_qps", str(expected))


_LATENCY_KEY = re.compile(
    r"^(result_(min|max|mean)_(query_)?latency_ns|result_[\d.]+_percentile_(per_query_)?latency_ns"
    r"|early_stopping_latency_(ss|ms))$"
)


def scale_latencies(detail: Path, m: float) -> None:
    """A SingleStream/MultiStream run whose every latency took `m` times as long (m <= ~1.05 for the
    real SingleStream logs here, whose queries fill 94 % of their span; MultiStream's fill it): each
    latency key, the early-stopping text's estimates and QPS without LoadGen overhead (1 / mean
    latency), in the detail log and every latency line of its summary, so what the checker re-derives
    agrees with what the logs claim."""

    def scaled(text: str) -> str:
        return str(round(int(text) * m))

    content = detail.read_text()
    for key in re.findall(r'"key": "([^"]+)", "value": \d+,', content):
        if _LATENCY_KEY.match(key):
            edit_detail(detail, key, scaled(_detail_value(detail, key) or "0"))
    mean = _detail_value(detail, "result_mean_latency_ns")
    qps = f"{1e9 / int(mean):.6g}" if mean is not None and _detail_value(
        detail, "result_qps_without_loadgen_overhead") is not None else None
    if qps is not None:
        edit_detail(detail, "result_qps_without_loadgen_overhead", qps)
    es = _detail_value(detail, "early_stopping_result")
    estimate = re.compile(r"(percentile estimate: )(\d+)")
    if es is not None:
        edit_detail(detail, "early_stopping_result", estimate.sub(lambda g: g.group(1) + scaled(g.group(2)), es))
    summary = detail.with_name("mlperf_log_summary.txt")
    if summary.exists():
        lines = []
        for line in summary.read_text().splitlines(keepends=True):
            if re.search(r"latency \(ns\)\s*:", line):
                line = re.sub(r"(:\s*)(\d+)", lambda g: g.group(1) + scaled(g.group(2)), line, count=1)
            elif qps is not None and mean is not None and line.startswith("QPS w/o loadgen overhead"):
                fixed = f"{1e9 / int(mean):.2f}"  # the summary prints it with two decimals
                line = re.sub(r"(:\s*)\S+", lambda g, v=fixed: g.group(1) + v, line, count=1)
            lines.append(estimate.sub(lambda g: g.group(1) + scaled(g.group(2)), line))
        summary.write_text("".join(lines))
