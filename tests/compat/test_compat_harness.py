"""One official-API harness file, run against the official module and proctor's compat layer."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest

import proctor.compat.mlperf_loadgen as compat

HARNESS = Path(__file__).with_name("harness.py")
CASES = [
    ("Offline", "AccuracyOnly", False),
    ("Offline", "PerformanceOnly", True),
    ("SingleStream", "PerformanceOnly", False),
    ("SingleStream", "AccuracyOnly", True),
    ("MultiStream", "PerformanceOnly", True),
    ("Server", "PerformanceOnly", False),
]


def load_harness(module: ModuleType) -> dict:
    """Execute harness.py with `import mlperf_loadgen` bound to `module`."""
    saved = sys.modules.get("mlperf_loadgen")
    sys.modules["mlperf_loadgen"] = module
    try:
        return runpy.run_path(str(HARNESS))
    finally:
        if saved is None:
            sys.modules.pop("mlperf_loadgen", None)
        else:
            sys.modules["mlperf_loadgen"] = saved


def detail(path: Path) -> dict:
    out: dict = {}
    for line in path.read_bytes().splitlines():
        rec = orjson.loads(line[len(b":::MLLOG ") :])
        out.setdefault(rec["key"], rec["value"])
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    official = pytest.importorskip("mlperf_loadgen")
    base = tmp_path_factory.mktemp("compat")
    got: dict = {}
    compat.set_early_stopping_extension(False)  # stop where the official does (test_early_stopping_extension)
    try:
        for module, tag in ((official, "official"), (compat, "proctor")):
            harness = load_harness(module)
            for scenario, mode, fast in CASES:
                out = base / tag / f"{scenario}-{mode}"
                got[(tag, scenario, mode)] = (harness["run"](str(out), scenario, mode, fast), out)
    finally:
        compat.set_early_stopping_extension(True)
    return got


@pytest.mark.official
@pytest.mark.parametrize(("scenario", "mode", "fast"), CASES)
def test_same_calls_into_the_harness(both, scenario, mode, fast):
    off, off_dir = both[("official", scenario, mode)]
    mine, mine_dir = both[("proctor", scenario, mode)]
    assert mine["issued"], "the SUT was never called"
    for key in (
        "from_config",
        "from_config_bad",
        "conf_psc",
        "conf_seed",
        "conf_target_qps",
        "conf_ss_latency",
        "scenario",
        "mode",
        "ttft",
        "loaded",
        "unloaded",
        "flushes",
    ):
        assert mine[key] == off[key], key
    assert mine["issued"] == off["issued"]  # same samples, same order
    assert mine["queries"] == off["queries"]
    assert mine["cb_count"] == off["cb_count"]
    assert mine["from_config"] == 0 and mine["from_config_bad"] < 0
    # Nothing of the rejected file is applied (it says 12). The official loads mlperf.conf only on the
    # first user.conf call of the process, so its fresh second object keeps the default 100; proctor
    # gives each object mlperf.conf on its first call, even when the file then fails (deviations).
    assert off["bad_min_query_count"] == 100
    assert mine["bad_min_query_count"] == 24576  # resnet50 Offline in the shipped mlperf.conf


@pytest.mark.official
@pytest.mark.parametrize(("scenario", "mode", "fast"), CASES)
def test_same_logs(both, scenario, mode, fast):
    _, off_dir = both[("official", scenario, mode)]
    _, mine_dir = both[("proctor", scenario, mode)]
    for name in ("h_summary_x.txt", "h_detail_x.txt", "h_accuracy_x.json"):
        assert (mine_dir / name).is_file(), name
    off, mine = detail(off_dir / "h_detail_x.txt"), detail(mine_dir / "h_detail_x.txt")
    assert mine["sut_name"] == off["sut_name"] == ("PyFastSUT" if fast else "PySUT")
    assert mine["qsl_name"] == off["qsl_name"] == "PyQSL"
    for key in off:
        if key.startswith(("effective_", "requested_")) or key in (
            "result_query_count",
            "result_validity",
            "generated_query_count",
            "loaded_qsl_set",
        ):
            assert mine.get(key) == off[key], key
    acc_off = orjson.loads((off_dir / "h_accuracy_x.json").read_bytes())
    acc_mine = orjson.loads((mine_dir / "h_accuracy_x.json").read_bytes())
    assert sorted((e["qsl_idx"], e["data"]) for e in acc_mine) == sorted(
        (e["qsl_idx"], e["data"]) for e in acc_off
    )
    if mode == "AccuracyOnly":
        assert len(acc_mine) == 200  # every sample, payload = index * 0.5 as float32
        e = min(acc_mine, key=lambda e: e["qsl_idx"] if e["qsl_idx"] == 3 else 1e9)
        assert bytes.fromhex(e["data"]) == __import__("struct").pack("<f", 1.5)
