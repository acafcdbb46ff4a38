"""Benchmark folder names as each round's official checker reads them (`get_mlperf_model`): the
round's own names, its model_mapping table, the open division's model_mapping.json, then the guess
("mobilenet"/"efficientnet"/"resnet50" -> resnet, "bert-99.9", "bert-99", and at HEAD
"llama3_1-405b"). Published v5.1 open results name 264 folders mobilenet-*/efficientnet-*: the
official v5.1.1 checker takes them as ResNet50-class results, and so does proctor. A closed (or
network) folder whose name declares another model is rejected by the rules' Closed Division."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.checks.submission import CLOSED_MODEL_SRC, check_submission
from proctor.rules.inference_rounds import round_table
from proctor.rules.rounds import ROUNDS
from tests.checks.checks_corpus import UT_EDGE, build_valid_tree

OPEN_GATEOVERFLOW = "mobilenet-v1-precision_float-1.0-224"  # as published in v5.1 open/GATEOverflow

# (round, folder) -> (proctor benchmark, the official model name, names the reference model)
MAPPED = [
    # the round's own names (the official's `model in self.models`) and the mapping table's exact names
    ("v4.1", "resnet", ("resnet50", "resnet", True)),
    ("v4.1", "resnet50", ("resnet50", "resnet", True)),
    ("v4.1", "mobilenet", ("resnet50", "resnet", False)),
    ("v4.1", "ssd-resnet34", ("retinanet", "retinanet", False)),
    ("v5.0", "llama3_1-405b", ("llama3_1-405b", "llama3.1-405b", True)),
    ("v5.1", "llama3_1-8b", ("llama3_1-8b", "llama3.1-8b", True)),
    ("v5.1", "llama3_1-8b-edge", ("llama3_1-8b-edge", "llama3.1-8b-edge", True)),
    ("v5.1", "ssd-resnet34", ("retinanet", "retinanet", False)),
    # the guess: a substring of the name
    *[(r, OPEN_GATEOVERFLOW, ("resnet50", "resnet", False)) for r in ("v4.1", "v5.0", "v5.1", "v6.0", "v6.1")],
    ("v5.1", "efficientnet-fp32-lite0", ("resnet50", "resnet", False)),
    ("v5.1", "resnet50-int8-tflite", ("resnet50", "resnet", True)),
    ("v4.1", "obert-large-pruned97-quant-none-bert-99", ("bert", "bert-99", True)),
    ("v4.1", "mobilebert-none-base-none-bert-99", ("bert", "bert-99", True)),  # mobileBERT is no MobileNet
    ("v4.1", "int8-bert-99.9", ("bert", "bert-99.9", True)),
    # HEAD (v6.0, v6.1) guesses llama3_1-405b too; v5.1.1 does not
    ("v6.0", "llama3_1-405b-fp8", ("llama3_1-405b", "llama3.1-405b", True)),
    ("v6.1", "llama3_1-405b-fp8", ("llama3_1-405b", "llama3.1-405b", True)),
]
UNKNOWN = [
    ("v5.1", "llama3_1-405b-fp8"),  # no such guess at tag v5.1.1
    ("v5.1", "yolo-nano"),
    ("v5.1", "MobileNet-v2"),  # the guess is case-sensitive, as the official's `in`
    ("v5.0", "llama3_1-405b-fp8"),  # nor at tag v5.0.1
    ("v4.1", ""),
]


@pytest.mark.parametrize(("version", "folder", "expected"), MAPPED)
def test_folder_names_map_as_the_official_checker_of_the_round(
    version: str, folder: str, expected: tuple[str, str, bool]
) -> None:
    found = round_table(version).folder_benchmark(folder)
    assert (found.variant.benchmark.name, found.official, found.reference) == expected


@pytest.mark.parametrize(("version", "folder"), UNKNOWN)
def test_folder_names_the_round_cannot_map(version: str, folder: str) -> None:
    with pytest.raises(KeyError):
        round_table(version).folder_benchmark(folder)


@pytest.mark.parametrize(
    ("mapping", "folder", "expected"),
    [
        ({"my-net": "resnet"}, "my-net", ("resnet50", "resnet")),
        ({"llama3_1-70b-fp8_dyn": "llama2-70b-99"}, "llama3_1-70b-fp8_dyn", ("llama2-70b", "llama2-70b-99")),
        # the round's mapping table comes first, as in the official order
        ({"mobilenet": "llama2-70b-99"}, "mobilenet", ("resnet50", "resnet")),
        # an empty value is skipped (the official's `if mlperf_model`), the guess still applies
        ({"mobilenet-x": ""}, "mobilenet-x", ("resnet50", "resnet")),
        # a value the round has no benchmark for maps to nothing
        ({"my-net": "no-such-model"}, "my-net", None),
    ],
)
def test_submitter_model_mapping(mapping: dict[str, str], folder: str, expected: tuple[str, str] | None) -> None:
    rnd = round_table("v5.1")
    if expected is None:
        with pytest.raises(KeyError, match=folder):
            rnd.folder_benchmark(folder, mapping)
        return
    found = rnd.folder_benchmark(folder, mapping)
    assert (found.variant.benchmark.name, found.official) == expected


@pytest.mark.parametrize("version", ROUNDS)
def test_every_mapping_entry_names_a_benchmark_of_its_round(version: str) -> None:
    """Each model the round's table maps to is one of the round's benchmarks (retinanet left the
    table in v6.0: its old name then maps to nothing)."""
    rnd = round_table(version)
    names = rnd.folder_names
    assert names is None or names.source.startswith("mlcommons/inference ")
    for folder, target in (names.mapping if names else {}).items():
        if target.model == "retinanet" and "retinanet" not in rnd.table.by_name:
            continue
        assert rnd.folder_benchmark(folder).variant.benchmark.name in rnd.table.by_name, folder


@given(st.text(max_size=80), st.dictionaries(st.text(max_size=30), st.text(max_size=30), max_size=4))
def test_any_folder_name_maps_or_is_a_key_error(folder: str, mapping: dict[str, str]) -> None:
    for version in ("v4.1", "v5.1", "v6.1"):
        try:
            found = round_table(version).folder_benchmark(folder, mapping)
        except KeyError:
            continue
        assert found.variant.benchmark.name in round_table(version).table.by_name
        if found.via is not None and "guess" in found.via:
            assert any(g in folder for g in ("mobilenet", "efficientnet", "resnet50", "bert-99", "llama3_1-405b"))


# --- a whole tree: the real UntetherAI resnet50 runs under other folder names ----------------------
def _rename(root: Path, division: str, new: str, mapping: dict[str, str] | None = None) -> Path:
    """The valid closed tree's resnet50 results (and their measurements, audits) under `new`, in
    `division`, with `mapping` as the submitter's model_mapping.json."""
    sub = root / "closed" / "UntetherAI"
    for part in ("results", "measurements", "compliance"):
        if (sub / part / UT_EDGE / "resnet50").is_dir():
            (sub / part / UT_EDGE / "resnet50").rename(sub / part / UT_EDGE / new)
    if mapping is not None:
        (sub / "model_mapping.json").write_text(json.dumps(mapping))
    if division != "closed":
        (root / division).mkdir()
        shutil.move(str(sub), root / division / "UntetherAI")
        (root / "closed").rmdir()
        system = root / division / "UntetherAI" / "systems" / f"{UT_EDGE}.json"
        desc = json.loads(system.read_text())
        system.write_text(json.dumps({**desc, "division": division}))
    return root


@pytest.mark.parametrize(
    ("division", "folder", "mapping", "valid"),
    [
        ("open", OPEN_GATEOVERFLOW, None, True),
        ("open", "efficientnet-fp32-lite4", None, True),
        ("open", "my-classifier", {"my-classifier": "resnet"}, True),
        ("open", "my-classifier", None, False),
        ("closed", "resnet50-v1.5-int8", None, True),  # a spelling of the reference model
        ("closed", OPEN_GATEOVERFLOW, None, False),  # another model: closed runs the reference
        ("closed", "my-classifier", {"my-classifier": "resnet"}, False),  # the official reads it in open only
    ],
)
def test_tree_folder_names(
    tmp_path: Path, division: str, folder: str, mapping: dict[str, str] | None, valid: bool
) -> None:
    root = _rename(build_valid_tree(tmp_path), division, folder, mapping)
    report = check_submission(root, "v4.1")
    failed = [f for f in report.findings if f.failed]
    assert report.valid is valid, [f.message for f in failed]
    if valid:
        assert sorted((r.benchmark, r.scenario) for r in report.results) == [
            (folder, s) for s in ("MultiStream", "Offline", "SingleStream")
        ]
        assert all(r.valid for r in report.results)
    else:
        names = [f for f in failed if f.rule == "benchmark_name"]
        assert [Path(f.path).name for f in names] == [folder]
        if division == "closed" and mapping is None:
            assert names[0].source == CLOSED_MODEL_SRC and "move the result to open" in names[0].message
