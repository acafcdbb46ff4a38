"""Training logs that cannot be true are not VALID (issue 30 §3).

Each class of impossible log (a clock that goes back, run_stop before run_start, a second run_start
or run_stop, a time_ms that is no wall-clock reading, a time to train that is not positive or is
absurd, a quality value that is not a finite number, a negative or non-finite count) is an ERROR
with the file and the line in `check-log`, and `score`, `check-rcp`, `check-seeds` and `summarize`
refuse a score from it: none prints a negative, infinite or absurd time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from proctor.findings import Severity
from proctor.rules.training import log_bounds as bounds
from proctor.training.compliance import check_file
from proctor.training.logparse import read_log
from proctor.training.plausibility import PREFIX, is_implausible
from proctor.training.rcp import check_rcp
from proctor.training.runs import read_run, read_run_set
from proctor.training.scoring import score_run_set
from proctor.training.seeds import check_seeds
from proctor.training.summarize import summarize
from tests.support import synthetic_logs as sl

from .results_pkg import write_package

Events = list[sl.Event]
MINUTES = [60.0 + i for i in range(10)]
SAMPLES = [175104 + 512 * i for i in range(10)]


def _index(ev: Events, key: str, nth: int = 0) -> int:
    return [i for i, e in enumerate(ev) if e.key == key][nth]


def _set(ev: Events, key: str, nth: int = 0, **changes: object) -> Events:
    out = list(ev)
    i = _index(out, key, nth)
    out[i] = replace(out[i], **changes)  # type: ignore[arg-type]
    return out


def _at(ev: Events, key: str, nth: int = 0) -> int:
    """The 1-based line of the nth `key` event in the written log."""
    return _index(ev, key, nth) + 1


def _valid() -> Events:
    return sl.valid_events("llama31_8b")


def _errors(path: Path) -> list:
    rep = check_file(path, "6.1.0")
    assert rep.valid is False
    return [f for f in rep.findings if is_implausible(f)]


# -- each class: the mutation and the line the error names ----------------------------------------------
def _run_stop_before_run_start(ev: Events) -> tuple[Events, int]:
    out = list(ev)
    stop = out.pop(_index(out, "run_stop"))
    i = _index(out, "run_start")
    out.insert(i, replace(stop, time_ms=out[i].time_ms - 10))
    return out, i + 1


def _stop_timed_before_start(ev: Events) -> tuple[Events, int]:
    t = ev[_index(ev, "run_start")].time_ms
    return _set(ev, "run_stop", time_ms=t - 100_000), _at(ev, "run_stop")


def _zero_time_to_train(ev: Events) -> tuple[Events, int]:
    t = ev[_index(ev, "run_start")].time_ms
    out = [replace(e, time_ms=t) if i > _index(ev, "run_start") else e for i, e in enumerate(ev)]
    return out, _at(ev, "run_stop")


def _huge_time_ms(ev: Events) -> tuple[Events, int]:
    return _set(ev, "run_stop", time_ms=1.7e25), _at(ev, "run_stop")


def _absurd_time_to_train(ev: Events) -> tuple[Events, int]:
    t = ev[_index(ev, "run_start")].time_ms
    return _set(ev, "run_stop", time_ms=t + 400 * 86_400_000.0), _at(ev, "run_stop")


def _negative_time_ms(ev: Events) -> tuple[Events, int]:
    return _set(ev, "seed", time_ms=-5.0), _at(ev, "seed")


def _nan_time_ms(ev: Events) -> tuple[Events, int]:
    return _set(ev, "run_start", time_ms=math.nan), _at(ev, "run_start")


def _infinite_time_ms(ev: Events) -> tuple[Events, int]:
    return _set(ev, "block_stop", time_ms=math.inf), _at(ev, "block_stop")


def _reversed_body(ev: Events) -> tuple[Events, int]:
    lo, hi = _index(ev, "run_start") + 1, _index(ev, "run_stop")
    body = ev[lo:hi]
    times = [e.time_ms for e in body]
    out = ev[:lo] + [replace(e, time_ms=t) for e, t in zip(body, times[::-1], strict=True)] + ev[hi:]
    # the first clock event timed more than the clocks' jitter before an earlier clock event
    latest = -math.inf
    for i, e in enumerate(out):
        if e.key in bounds.CLOCK_EVENTS:
            if e.time_ms < latest - bounds.CLOCK_JITTER_MS.value:
                return out, i + 1
            latest = max(latest, e.time_ms)
    raise AssertionError("the reversed body never goes back")


def _clock_goes_back(ev: Events) -> tuple[Events, int]:
    t = ev[_index(ev, "block_start", 1)].time_ms
    return _set(ev, "block_stop", 1, time_ms=t - 5000), _at(ev, "block_stop", 1)


def _second_run_start(ev: Events) -> tuple[Events, int]:
    out = list(ev)
    i = _index(out, "block_start", 1)
    out.insert(i, replace(out[_index(out, "run_start")], time_ms=out[i - 1].time_ms))
    return out, i + 1


def _second_run_stop(ev: Events) -> tuple[Events, int]:
    out = list(ev)
    stop = out[_index(out, "run_stop")]
    out.append(replace(stop, time_ms=stop.time_ms + 10))
    return out, len(out)


def _quality(value: object) -> Callable[[Events], tuple[Events, int]]:
    def mutate(ev: Events) -> tuple[Events, int]:
        return _set(ev, "eval_accuracy", value=value), _at(ev, "eval_accuracy")

    return mutate


def _count(name: str, value: object) -> Callable[[Events], tuple[Events, int]]:
    def mutate(ev: Events) -> tuple[Events, int]:
        out = list(ev)
        i = _index(out, "eval_accuracy")
        out[i] = replace(out[i], metadata={**out[i].metadata, name: value})
        return out, i + 1

    return mutate


def _quality_before_run_start(ev: Events) -> tuple[Events, int]:
    out = list(ev)
    i = _index(out, "run_start")
    out.insert(i, replace(out[_index(out, "eval_accuracy")], time_ms=out[i - 1].time_ms))
    return out, i + 1


CASES: dict[str, tuple[Callable[[Events], tuple[Events, int]], str]] = {
    "run_stop line before run_start": (_run_stop_before_run_start, "run_stop"),
    "run_stop timed before run_start": (_stop_timed_before_start, "time_to_train"),
    "zero time to train": (_zero_time_to_train, "time_to_train"),
    "time_ms 1.7e25": (_huge_time_ms, "time_ms"),
    "time to train 400 days": (_absurd_time_to_train, "time_to_train"),
    "negative time_ms": (_negative_time_ms, "time_ms"),
    "NaN time_ms": (_nan_time_ms, "time_ms"),
    "Infinity time_ms": (_infinite_time_ms, "time_ms"),
    "body in reverse time order": (_reversed_body, "order"),
    "clock 5 s back": (_clock_goes_back, "order"),
    "second run_start": (_second_run_start, "run_start"),
    "second run_stop": (_second_run_stop, "run_stop"),
    "eval_accuracy Infinity": (_quality(math.inf), "quality"),
    "eval_accuracy -Infinity": (_quality(-math.inf), "quality"),
    "eval_accuracy NaN": (_quality(math.nan), "quality"),
    "eval_accuracy 1e300": (_quality(1e300), "quality"),
    "eval_accuracy string": (_quality("3.2"), "quality"),
    "eval_accuracy bool": (_quality(True), "quality"),
    "eval_accuracy null": (_quality(None), "quality"),
    "eval_accuracy list": (_quality([3.2]), "quality"),
    "samples_count negative": (_count("samples_count", -12288), "samples_count"),
    "samples_count NaN": (_count("samples_count", math.nan), "samples_count"),
    "samples_count string": (_count("samples_count", "12288"), "samples_count"),
    "epoch_num negative": (_count("epoch_num", -1), "epoch_num"),
    "epoch_num Infinity": (_count("epoch_num", math.inf), "epoch_num"),
    "epoch_num 1e400": (_count("epoch_num", 10**400), "epoch_num"),
    "eval before run_start": (_quality_before_run_start, "order"),
}


@pytest.mark.parametrize("case", CASES)
def test_check_log_names_the_rule_and_the_line(tmp_path: Path, case: str) -> None:
    mutate, rule = CASES[case]
    events, line = mutate(_valid())
    p = sl.write_log(tmp_path / "result_0.txt", events)
    errors = _errors(p)
    assert any(f.rule == PREFIX + rule and f.line == line for f in errors), [
        (f.rule, f.line, f.message) for f in errors
    ]
    for f in errors:
        assert f.path == str(p) and f.severity is Severity.ERROR and f.source
        assert f.line is not None and f"line {f.line}" in f.message


def test_a_valid_log_has_no_such_finding(tmp_path: Path) -> None:
    p = sl.write_log(tmp_path / "result_0.txt", _valid())
    rep = check_file(p, "6.1.0")
    assert rep.valid and not [f for f in rep.findings if f.rule.startswith(PREFIX)]
    log = read_log(p)
    assert log.findings == [] and log.run_time_ms() is not None and log.run_time_ms() > 0


def test_a_quality_dict_of_numbers_is_a_quality_and_one_of_text_is_not(tmp_path: Path) -> None:
    ok = sl.write_log(tmp_path / "result_0.txt", _set(_valid(), "eval_accuracy", value={"BBOX": 0.38}))
    assert not [f for f in check_file(ok, "6.1.0").findings if is_implausible(f)]
    bad = sl.write_log(tmp_path / "result_1.txt", _set(_valid(), "eval_accuracy", value={"BBOX": "x"}))
    assert [f.rule for f in check_file(bad, "6.1.0").findings if is_implausible(f)] == [PREFIX + "quality"]


def test_small_clock_jitter_between_events_is_a_warning_and_among_ranks_nothing(tmp_path: Path) -> None:
    ev = _valid()
    t = ev[_index(ev, "block_start", 1)].time_ms
    jitter = _set(ev, "block_stop", 1, time_ms=t - 200)  # 200 ms back: within the clocks of ranks
    rep = check_file(sl.write_log(tmp_path / "result_0.txt", jitter), "6.1.0")
    assert rep.valid
    warned = [f for f in rep.findings if f.rule == PREFIX + "clock_jitter"]
    assert len(warned) == 1 and warned[0].severity is Severity.WARNING
    assert warned[0].line == _at(jitter, "block_stop", 1) and warned[0].value == 200
    # eight ranks log init_start, the later ones a few ms earlier (the published multi-rank logs)
    out = list(ev)
    i = _index(out, "init_start")
    for k in range(1, 8):
        out.insert(i + k, replace(out[i], time_ms=out[i].time_ms - k))
    rep = check_file(sl.write_log(tmp_path / "result_1.txt", out), "6.1.0")
    assert rep.valid and not [f for f in rep.findings if f.rule.startswith(PREFIX)]


def test_run_stop_may_carry_an_earlier_checkpoint_time(tmp_path: Path) -> None:
    """§9: the clock stop may be moved back to the timestamp of the first passing checkpoint
    evaluated after the clock stopped, so run_stop is not held to the order of the clock events."""
    ev = _valid()
    start, last_block = ev[_index(ev, "run_start")].time_ms, ev[_index(ev, "block_stop", 1)].time_ms
    assert last_block - (start + 5) > bounds.CLOCK_JITTER_MS.value
    moved = _set(ev, "run_stop", time_ms=start + 5)  # before the last block_stop, after run_start
    rep = check_file(sl.write_log(tmp_path / "result_0.txt", moved), "6.1.0")
    assert rep.valid, [f.message for f in rep.findings if f.failed]


def test_many_bad_lines_are_listed_to_a_cap_and_counted(tmp_path: Path) -> None:
    ev = _valid()
    out = [replace(e, time_ms=-1.0) if e.key.startswith("opt_") or e.key.endswith("_parallelism") else e for e in ev]
    n = sum(1 for e in out if e.time_ms == -1.0)
    assert n > 10
    ev2 = out + [replace(out[_index(out, "seed")], key=f"k{i}", time_ms=-1.0) for i in range(40)]
    found = [f for f in check_file(sl.write_log(tmp_path / "result_0.txt", ev2), "6.1.0").findings
             if f.rule == PREFIX + "time_ms"]
    assert len([f for f in found if f.line is not None]) == 20
    more = [f for f in found if f.line is None]
    assert len(more) == 1 and more[0].value == n + 40


# -- the scorers refuse ---------------------------------------------------------------------------------
def _package_with(tmp_path: Path, mutate: Callable[[Path], None]) -> Path:
    root = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (SAMPLES, MINUTES)}})
    mutate(root / "results" / "sysA" / "llama31_8b" / "result_3.txt")
    return root


def _edit_line(path: Path, key: str, **changes: object) -> None:
    lines = path.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        obj = json.loads(line.split(":::MLLOG ", 1)[1])
        if obj["key"] == key:
            obj.update(changes)
            lines[i] = ":::MLLOG " + json.dumps(obj) + "\n"
            break
    path.write_text("".join(lines))


def _swap_start_stop(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    objs = [json.loads(x.split(":::MLLOG ", 1)[1]) for x in lines]
    i = next(k for k, o in enumerate(objs) if o["key"] == "run_start")
    j = next(k for k, o in enumerate(objs) if o["key"] == "run_stop")
    objs[i]["time_ms"], objs[j]["time_ms"] = objs[j]["time_ms"], objs[i]["time_ms"]
    path.write_text("".join(":::MLLOG " + json.dumps(o) + "\n" for o in objs))


REFUSED: dict[str, Callable[[Path], None]] = {
    "run_stop timed before run_start": _swap_start_stop,
    "time_ms 1.7e25": lambda p: _edit_line(p, "run_stop", time_ms=1.7e25),
    "eval_accuracy Infinity": lambda p: p.write_text(p.read_text().replace('"value": 3.29', '"value": Infinity')),
    "eval_accuracy 1e400": lambda p: p.write_text(p.read_text().replace('"value": 3.29', '"value": 1e400')),
}


@pytest.mark.parametrize("case", REFUSED)
def test_score_rcp_seeds_and_summary_refuse_a_log_that_cannot_be_true(tmp_path: Path, case: str) -> None:
    root = _package_with(tmp_path, REFUSED[case])
    bdir = root / "results" / "sysA" / "llama31_8b"
    bad = bdir / "result_3.txt"
    run = read_run(bad)
    assert run.implausible and run.minutes is None and not run.converged
    rs = read_run_set(bdir)
    sc = score_run_set(rs)
    assert sc.valid is False and sc.score_minutes is None and sc.unscaled_minutes is None
    assert any(f.rule == "implausible_runs" for f in sc.findings)
    assert any(is_implausible(f) and f.path == str(bad) and f.line for f in sc.findings)
    rcp = check_rcp(rs, "6.1.0")
    assert rcp.passed is False and rcp.rcp == "implausible_runs"
    seeds = check_seeds(bdir)
    assert any(is_implausible(f) and f.path == str(bad) for f in seeds)
    s = summarize([root], "6.1.0")
    assert s.rows[0]["llama31_8b"] is None
    assert any(is_implausible(f) for f in s.findings)


def test_the_untouched_package_scores(tmp_path: Path) -> None:
    root = _package_with(tmp_path, lambda p: None)
    bdir = root / "results" / "sysA" / "llama31_8b"
    sc = score_run_set(read_run_set(bdir))
    assert sc.valid and sc.score_minutes == pytest.approx(sum(sorted(MINUTES)[1:-1]) / 8)
    assert check_rcp(bdir, "6.1.0").passed and not [f for f in check_seeds(bdir) if f.failed]
    assert summarize([root], "6.1.0").rows[0]["llama31_8b"] is not None


@pytest.mark.parametrize("case", ["run_stop timed before run_start", "time_ms 1.7e25"])
def test_cli_prints_no_negative_or_absurd_time(tmp_path: Path, cli, case: str) -> None:
    root = _package_with(tmp_path, REFUSED[case])
    bdir = root / "results" / "sysA" / "llama31_8b"
    r = cli("training", "score", bdir, "--json")
    assert r.rc == 1, r.err
    row = json.loads(r.out)[0]
    assert row["score_minutes"] is None and row["valid"] is False
    r = cli("training", "score", bdir)
    assert r.rc == 1 and "result_3.txt:" in r.out and "-1." not in r.out and "e+" not in r.out.split("ERROR")[0]
    r = cli("training", "check-log", bdir / "result_3.txt")
    assert r.rc == 1 and "INVALID" in r.out and "implausible:" in r.out
    r = cli("training", "check-rcp", bdir)
    assert r.rc == 1 and "FAIL" in r.out
    r = cli("training", "check-seeds", bdir)
    assert r.rc == 1 and "INVALID" in r.out
    r = cli("training", "check-package", root)
    assert r.rc == 1 and "PACKAGE INVALID" in r.out
    r = cli("training", "summarize", root, "--json")
    assert r.rc == 0 and json.loads(r.out)["summary"][0]["llama31_8b"] is None


def test_package_does_not_accept_an_impossible_log_as_an_olympic_drop(tmp_path: Path) -> None:
    from proctor.training.package import check_package

    root = _package_with(tmp_path, REFUSED["time_ms 1.7e25"])
    rep = check_package(root, "6.1.0")
    assert not rep.valid
    errs = [f for f in rep.findings if f.failed]
    assert any(is_implausible(f) and f.path and f.path.endswith("result_3.txt") for f in errs)


# -- property tests: hostile records never crash a reader; no reader yields an impossible time ------------
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

HOSTILE_TIMES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from(["1700000000000", "NaN", "x", "", True, None, 10**400, [1], {"a": 1}]),
)
HOSTILE_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from([10**400, "3.2", "", True, False, None, [], [3.2], {}, {"BBOX": 0.3}, {"BBOX": math.inf}]),
)
KEYS = ["run_start", "run_stop", "init_start", "init_stop", "block_start", "block_stop", "epoch_start",
        "eval_accuracy", "eval_error", "seed", "global_batch_size", "submission_benchmark", "train_loss"]


def _raw(key: str, t: object, value: object, md: dict[str, object]) -> str:
    obj = {"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key, "value": value,
           "metadata": {"file": "t.py", "lineno": 1, **md}}
    return ":::MLLOG " + json.dumps(obj) + "\n"


@st.composite
def hostile_records(draw: st.DrawFn) -> str:
    """A valid log with a few records changed or added: keys, times, values and counts of any kind."""
    lines = sl.render(_valid()).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 6))):
        md: dict[str, object] = {}
        for name in draw(st.lists(st.sampled_from(bounds.COUNT_METADATA), max_size=2)):
            md[name] = draw(HOSTILE_VALUES)
        line = _raw(draw(st.sampled_from(KEYS)), draw(HOSTILE_TIMES), draw(HOSTILE_VALUES), md)
        i = draw(st.integers(0, len(lines)))
        if draw(st.booleans()) and i < len(lines):
            lines[i] = line
        else:
            lines.insert(i, line)
    return "".join(lines)


MAX_MINUTES = bounds.MAX_TIME_TO_TRAIN_MS.value / 60000.0


@pytest.mark.fuzz
@given(hostile_records())
def test_no_reader_raises_or_yields_an_impossible_time(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        bdir = Path(d) / "llama31_8b"
        bdir.mkdir()
        p = bdir / "result_0.txt"
        p.write_text(text, encoding="utf-8")
        rep = check_file(p, "6.1.0")
        assert rep.valid == (not [f for f in rep.findings if f.failed])
        for f in rep.findings:
            if f.rule.startswith(PREFIX):
                assert f.path == str(p) and (f.line is not None or "more lines" in f.message)
        run = read_run(p)
        assert run.minutes is None or 0 < run.minutes <= MAX_MINUTES
        # the same log is impossible to both readers (a time_ms no double holds is unreadable to check-log)
        assert run.implausible or not any(is_implausible(f) for f in rep.findings)
        assert not (run.implausible and rep.valid)
        log = read_log(p)
        t = log.run_time_ms()
        assert t is None or 0 < t <= bounds.MAX_TIME_TO_TRAIN_MS.value
        assert run.implausible or not run.converged or math.isfinite(run.samples_to_converge)
        check_seeds(bdir)
        sc = score_run_set(read_run_set(bdir), runs_required=1)
        assert sc.score_minutes is None or 0 < sc.score_minutes <= MAX_MINUTES
        assert not (run.implausible and (sc.valid or sc.score_minutes is not None))
        res = check_rcp(read_run_set(bdir), "6.1.0")
        assert not (run.implausible and res.passed)


@pytest.mark.fuzz
@given(st.integers(1, 5), st.floats(0, 3 * bounds.CLOCK_JITTER_MS.value, allow_nan=False))
def test_a_clock_event_back_past_the_jitter_is_an_error_and_within_it_is_not(nth: int, back: float) -> None:
    import tempfile

    ev = _valid()
    clock = [i for i, e in enumerate(ev) if e.key in bounds.CLOCK_EVENTS and e.key != "run_start"]
    i = clock[-nth]  # one of the training's clock events (block_start / block_stop / init_stop)
    latest = max(e.time_ms for e in ev[:i] if e.key in bounds.CLOCK_EVENTS)
    ev[i] = replace(ev[i], time_ms=latest - back)
    ev = [replace(e, time_ms=max(e.time_ms, latest + 1)) if k > i else e for k, e in enumerate(ev)]
    with tempfile.TemporaryDirectory() as d:
        rep = check_file(sl.write_log(Path(d) / "result_0.txt", ev), "6.1.0")
    order = [f for f in rep.findings if f.rule == PREFIX + "order"]
    if back > bounds.CLOCK_JITTER_MS.value:
        assert [f.line for f in order] == [i + 1] and not rep.valid
    else:
        assert order == []


@pytest.mark.fuzz
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**20), 10**20)))
def test_a_quality_is_refused_exactly_when_it_is_not_a_finite_modest_number(value: float) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = sl.write_log(Path(d) / "result_0.txt", _set(_valid(), "eval_accuracy", value=value))
        rep = check_file(p, "6.1.0")
    refused = [f for f in rep.findings if f.rule == PREFIX + "quality"]
    expect = not (math.isfinite(float(value)) and abs(float(value)) <= bounds.MAX_QUALITY_ABS.value)
    assert bool(refused) == expect
