"""proctor's mllog writes the official logger's lines; each side's reader reads the other's."""

from __future__ import annotations

import io
import logging

import numpy as np
import pytest

from proctor.mllog_lines import LogLine, parse_line
from proctor.training import constants, mllog

official_mllog = pytest.importorskip("mlperf_logging.mllog.mllog")
official_constants = pytest.importorskip("mlperf_logging.mllog.constants")


def _official(root_dir=None):
    buf = io.StringIO()
    lg = logging.getLogger(f"official_test_{id(buf)}")
    lg.propagate = False
    lg.setLevel(logging.INFO)
    lg.addHandler(logging.StreamHandler(buf))
    return official_mllog.MLLogger(logger=lg, root_dir=root_dir), buf


def _calls(logger):
    # one line per call, so the call-site line numbers differ between calls
    logger.start(constants.RUN_START, time_ms=1234567890123)
    logger.event(constants.EVAL_ACCURACY, 0.99, metadata={"epoch_num": 3}, time_ms=1)
    logger.end(constants.RUN_STOP, metadata={"status": "success"}, time_ms=2)
    logger.event("x", {"a": [1, 2.5, None, "é", True]}, namespace="worker1", time_ms=3.5, clear_line=True)
    logger.event("y", np.float32(0.5), metadata={"n": np.int64(7), "arr": np.arange(3)}, time_ms=4)
    logger.event("z", 1e-05, metadata={"lineno": 99}, time_ms=5)


def test_lines_identical_to_official() -> None:
    off, obuf = _official(root_dir="/nonexistent")
    pbuf = io.StringIO()
    ours = mllog.MLLogger(stream=pbuf, root_dir="/nonexistent")
    _calls(off)
    _calls(ours)
    assert pbuf.getvalue() == obuf.getvalue()
    assert obuf.getvalue().count(":::MLLOG") == 6
    assert '"lineno": 99' in pbuf.getvalue() and "Metadata fields overridden: lineno" in pbuf.getvalue()


def test_each_reader_reads_the_others_lines() -> None:
    from mlperf_logging.compliance_checker.mlp_parser import ruleset_610

    pbuf = io.StringIO()
    _calls(mllog.MLLogger(stream=pbuf))
    lines, errors = ruleset_610.parse_generator(pbuf.getvalue().splitlines(keepends=True))
    assert errors == [] and [ll.key for ll in lines] == [
        "run_start",
        "eval_accuracy",
        "run_stop",
        "x",
        "y",
        "z",
    ]
    assert lines[1].value == {
        "value": 0.99,
        "metadata": {"file": __file__, "lineno": lines[1].value["metadata"]["lineno"], "epoch_num": 3},
    }
    off, obuf = _official()
    _calls(off)
    recs = [parse_line(t.encode(), i) for i, t in enumerate(obuf.getvalue().splitlines(), 1)]
    recs = [r for r in recs if r is not None]
    assert all(isinstance(r, LogLine) for r in recs)
    assert [(r.key, r.value, r.event_type) for r in recs][:3] == [
        ("run_start", None, "INTERVAL_START"),
        ("eval_accuracy", 0.99, "POINT_IN_TIME"),
        ("run_stop", None, "INTERVAL_END"),
    ]
    assert recs[1].metadata["file"] == __file__ and recs[3].namespace == "worker1"


def test_call_site_and_stack_offset() -> None:
    buf = io.StringIO()
    lg = mllog.MLLogger(stream=buf)

    def helper():
        lg.event("k", 1, stack_offset=2)

    expected = __import__("inspect").currentframe().f_lineno + 1
    helper()
    rec = parse_line(buf.getvalue().encode(), 1)
    assert rec.metadata == {"file": __file__, "lineno": expected}


def test_constants_cover_official() -> None:
    names = {k: v for k, v in vars(official_constants).items() if k.isupper()}
    ours = {k: getattr(constants, k, None) for k in names}
    assert ours == names
    assert len(constants.DISCLOSURE_KEYS) == 9 and constants.CONFIG_FILENAME == "config_filename"


def test_config_validation_and_file(tmp_path) -> None:
    with pytest.raises(ValueError, match="logging.Logger"):
        mllog.config(logger="nope")
    with pytest.raises(ValueError, match="default logger"):
        mllog.config(logger=logging.getLogger(constants.DEFAULT_LOGGER_NAME))
    with pytest.raises(ValueError, match="integer"):
        mllog.config(default_stack_offset="1")
    lg = mllog.MLLogger(stream=io.StringIO())
    lg.add_file(str(tmp_path / "log.txt"))
    lg.event("k", "v", time_ms=1)
    lg.enabled = False
    lg.event("k", "dropped", time_ms=2)
    lg.close()
    assert (tmp_path / "log.txt").read_text().count(":::MLLOG") == 1


def test_point_events_are_buffered_briefly_and_interval_events_flush(tmp_path, monkeypatch):
    """A flush per event would cost more than the event; boundaries and 100 ms bound what a crash loses."""
    clock = iter([1000.0, 1000.01, 1000.02, 1000.2]).__next__
    monkeypatch.setattr(mllog.time, "monotonic", clock)
    path = tmp_path / "log.txt"
    logger = mllog.MLLogger(stream=open(path, "w"))  # noqa: SIM115 - closed below
    logger.event(constants.TRAIN_SAMPLES, 1, time_ms=1)  # first event: flushed (nothing flushed yet)
    logger.event(constants.TRAIN_SAMPLES, 2, time_ms=2)  # 10 ms later: stays in the buffer
    assert len(path.read_text().splitlines()) == 1
    logger.start(constants.EPOCH_START, time_ms=3)  # an interval boundary flushes at once
    assert len(path.read_text().splitlines()) == 3
    logger.event(constants.TRAIN_SAMPLES, 4, time_ms=4)  # 180 ms after the last flush: flushed
    assert [parse_line(x.encode(), 1).value for x in path.read_text().splitlines()] == [1, 2, None, 4]
    logger.close()
