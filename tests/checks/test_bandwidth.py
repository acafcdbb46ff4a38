"""Bandwidth appendix: the rules' own size formulas and the `proctor bandwidth` command."""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from proctor.checks.bandwidth import minimum_bandwidth
from proctor.rules.inference import BY_NAME


def test_numeric_sizes_follow_the_symbolic_formulas() -> None:
    assert BY_NAME["resnet50"].ingress.per_dtype == 3 * 224 * 224  # type: ignore[union-attr]
    assert BY_NAME["retinanet"].ingress.per_dtype == 3 * 800 * 800  # type: ignore[union-attr]
    assert BY_NAME["bert"].ingress.per_dtype == 3 * 384  # type: ignore[union-attr]
    # "DLRMv3: (2 + 6*1 + 6*2048) * 8 = 98368 bytes per sample."
    assert BY_NAME["dlrm-v3"].ingress.fixed == (2 + 6 * 1 + 6 * 2048) * 8  # type: ignore[union-attr]
    # WAN egress: the rules' bandwidth column says "throughput*224,870,400*dtype_size" although its own
    # numeric size "81*720*1280*3" is 223,948,800; the requirement column is what proctor enforces.
    assert BY_NAME["wan-2.2-t2v-a14b"].egress.per_dtype == 224_870_400  # type: ignore[union-attr]
    assert 81 * 720 * 1280 * 3 == 223_948_800


def test_minimum_bandwidth() -> None:
    r = minimum_bandwidth(BY_NAME["resnet50"], 1000.0, 1)
    assert (r.ingress_bytes_per_s, r.egress_bytes_per_s) == (150_528_000.0, 0.0)
    assert any("> 0" in n for n in r.notes)
    r = minimum_bandwidth(BY_NAME["3d-unet"], 2.0, 2)
    assert r.ingress_bytes_per_s == r.egress_bytes_per_s == 2 * 32944795 * 2
    r = minimum_bandwidth(BY_NAME["dlrm-v3"], 10.0, 4)  # int64 features: dtype size does not apply
    assert r.ingress_bytes_per_s == 983_680.0
    r = minimum_bandwidth(BY_NAME["gpt-oss-120b"], 3.0, 2)
    assert (r.ingress_bytes_per_s, r.egress_bytes_per_s) == (3 * 15330 * 2, 3 * 10000 * 2)
    with pytest.raises(ValueError, match="no row"):
        minimum_bandwidth(BY_NAME["whisper"], 1.0, 1)


def _app():
    from proctor.cli import inference_checks  # noqa: F401  (registers the commands)
    from proctor.cli.apps import app

    return app


def test_cli_json() -> None:
    res = CliRunner().invoke(
        _app(), ["bandwidth", "Llama2-70b", "--throughput", "100", "--dtype-size", "4", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = orjson.loads(res.stdout)
    assert data["ingress_bytes_per_s"] == 100 * 1024 * 4 and data["egress_bytes_per_s"] == 100 * 1024 * 4
    res = CliRunner().invoke(
        _app(), ["bandwidth", "rgat", "--throughput", "5", "--dtype-size", "1", "--json"]
    )
    data = orjson.loads(res.stdout)
    assert data["ingress_bytes_per_s"] == data["egress_bytes_per_s"] == 0
    assert sum("> 0" in n for n in data["notes"]) == 2
    res = CliRunner().invoke(_app(), ["bandwidth", "nosuch", "--throughput", "5", "--dtype-size", "1"])
    assert res.exit_code == 2
