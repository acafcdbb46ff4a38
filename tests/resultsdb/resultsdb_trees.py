"""Small published-results trees for the results-database tests, built in tmp_path.

Inference: the edge resnet50 results of tests/checks/checks_corpus.build_valid_tree (real UntetherAI
logs: SingleStream, MultiStream, Offline, with accuracy runs and audits) with the seeds of the round
switched in, which every round from v4.1 to v6.1 accepts; more submitters are copies with their own
numbers and accelerators. Training: tests/training/results_pkg packages (llama31_8b).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from proctor.rules.rounds import SEEDS
from tests.checks.checks_corpus import UT_EDGE, build_valid_tree, edit_run, scale_latencies, set_offline_rate
from tests.training.results_pkg import write_package

SEED_KEYS = ("effective_qsl_rng_seed", "effective_sample_index_rng_seed", "effective_schedule_rng_seed")
SYSTEM = UT_EDGE
SUB = "UntetherAI"
# the source logs' numbers (UntetherAI, v4.1): Offline samples/s, SingleStream and MultiStream ms
OFFLINE, SINGLE_MS, MULTI_MS = 140625.0, 0.118879, 0.208008
# per submitter: (factor on the Offline rate, factor on the latencies, accelerators per node); the real
# logs' SingleStream queries fill 94 % of their span, so a slower copy can take at most ~1.05 x as long
PEERS: dict[str, tuple[float, float, int]] = {
    "UntetherAI": (1.0, 1.0, 2), "Acme": (2.0, 0.5, 8), "Beta": (0.5, 1.04, 1),
}


def pristine(base: Path) -> Path:
    """The valid edge tree once (v4.1 seeds), to copy per round."""
    return build_valid_tree(base)


def _set_seeds(root: Path, version: str) -> None:
    for log in root.rglob("mlperf_log_detail.txt"):
        if "TEST05" in log.parts:
            continue  # v4.1's TEST05 runs with its own seeds
        for key, seed in zip(SEED_KEYS, SEEDS[version], strict=True):
            edit_run(log, key, str(seed))  # the summary prints them too


def _scale(sub: Path, factor: float, latency: float, accelerators: int, name: str) -> None:
    """A submitter of its own: its name in the description, its accelerators, its numbers (each log
    edited as a run with those numbers writes it: the checker re-derives every result)."""
    desc_path = sub / "systems" / f"{SYSTEM}.json"
    desc = json.loads(desc_path.read_text())
    desc.update(submitter=name, accelerators_per_node=str(accelerators),
                accelerator_model_name=f"{name} X{accelerators}", system_name=f"{name} box")
    desc_path.write_text(json.dumps(desc))
    for scen in ("offline", "singlestream", "multistream"):
        logs = [sub / "results" / SYSTEM / "resnet50" / scen / "performance/run_1/mlperf_log_detail.txt"]
        logs += sorted((sub / "compliance" / SYSTEM / "resnet50" / scen).glob("TEST*/performance/run_1/mlperf_log_detail.txt"))
        for log in logs:  # the audits measured the same system: their numbers move with the result's
            if scen == "offline":
                set_offline_rate(log, OFFLINE * factor)
            elif min(latency, 1.0) != 1.0 or (scen == "singlestream" and latency != 1.0):
                # MultiStream's queries fill their span: a copy may only be faster there
                scale_latencies(log, latency if scen == "singlestream" else min(latency, 1.0))


def inference_round(pristine_tree: Path, base: Path, version: str, peers: dict[str, tuple[float, int]] | None = None,
                    name: str | None = None) -> Path:
    """`base/inference_results_<version>/closed/<submitter>` for each of `peers` (default PEERS)."""
    root = base / (name or f"inference_results_{version}")
    closed = root / "closed"
    closed.mkdir(parents=True)
    src = pristine_tree / "closed" / SUB
    for who, (factor, latency, accelerators) in (peers or PEERS).items():
        shutil.copytree(src, closed / who)
        _scale(closed / who, factor, latency, accelerators, who)
    _set_seeds(root, version)
    return root


def training_round(base: Path, version: str = "v6.1", name: str | None = None) -> Path:
    """`base/training_results_<version>/{acme,zeta}`: llama31_8b packages (ruleset of the round)."""
    root = base / (name or f"training_results_{version}")
    write_package(root / "acme", {"sys1": {"llama31_8b": ([196608] * 10, [100.0 + i for i in range(10)])}})
    write_package(root / "zeta", {"sys2": {"llama31_8b": ([196608] * 10, [80.0 + i for i in range(10)])}},
                  system_overrides={"submitter": "zeta", "accelerators_per_node": "4", "number_of_nodes": "2"})
    return root


def run_folder(pristine_tree: Path, base: Path, bench: str, scenario: str, version: str, *,
               samples_per_second: float | None = None) -> Path:
    """A `proctor run -o runs/<bench>/<scenario>/performance/run_1` folder: a real LoadGen detail log of
    that scenario with the round's seeds (the Offline rate set when given)."""
    src = pristine_tree / "closed" / SUB / "results" / SYSTEM / "resnet50" / scenario.lower() / "performance/run_1"
    run = base / "runs" / bench / scenario / "performance" / "run_1"
    shutil.copytree(src, run)
    for key, seed in zip(SEED_KEYS, SEEDS[version], strict=True):
        edit_run(run / "mlperf_log_detail.txt", key, str(seed))
    if samples_per_second is not None:
        set_offline_rate(run / "mlperf_log_detail.txt", samples_per_second)
    return run


def set_value(log: Path, key: str, value: str) -> None:
    """One detail-log key's value, changed in place (a re-run with another number)."""
    edit_run(log, key, value)


def readme(root: Path, suite: str, version: str) -> None:
    (root / "README.md").write_text(f"# MLPerf™ {suite} {version} results\n\nThis repository contains ...\n")


def number(text: str) -> float:
    m = re.search(r"[\d.]+", text)
    assert m is not None
    return float(m.group(0))
