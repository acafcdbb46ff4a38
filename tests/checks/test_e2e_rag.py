"""E2E-RAG (rules §FAQ, E2E-RAG): the detailed log JSON must be there and declare the fixed parameters;
no query may run more retrieval iterations than the rules fix. The detail JSON is hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.checks.compliance import ResultContext
from proctor.checks.e2e_rag import check_detail_json, check_e2e_rag
from proctor.rules.e2e_rag import FAQ, FIXED_PARAMETERS, MAX_ITERATIONS
from proctor.rules.inference import resolve

META = {
    "retrieval_mode": "multi_shot",
    "max_iterations": 5,
    "chunk_size": 768,
    "grader_model": "openai/gpt-oss-20b",
    "sufficiency_checker_model": "openai/gpt-oss-120b",
    "query_model": "openai/gpt-oss-120b",
    "answer_generator_model": "openai/gpt-oss-120b",
}


def _detail(meta: dict[str, Any] | None = None, hops: tuple[int, ...] = (0, 1, 2)) -> dict[str, Any]:
    calls = [{"component": "query_writer", "hop_count": h} for h in hops]
    return {
        "experiment_metadata": META if meta is None else meta,
        "queries": [{"query_id": "q1", "llm_calls": calls, "summary": {"total_hops": max(hops, default=0)}}],
    }


def _ctx(tmp_path: Path, bench: str = "e2e-rag", detail: dict[str, Any] | None = None) -> ResultContext:
    scendir = tmp_path / "closed/Sub/results/sys" / bench / "Offline"
    (scendir / "performance" / "run_1").mkdir(parents=True)
    if detail is not None:
        (scendir / "llm_logs_multi_shot_20260101_000000.json").write_bytes(orjson.dumps(detail))
    return ResultContext(
        scendir.parents[3], "sys", bench, "Offline", "Offline", scendir, "v6.1", resolve(bench), None
    )


def test_reference_detail_json_passes(tmp_path: Path) -> None:
    assert check_e2e_rag(_ctx(tmp_path, detail=_detail()), closed=True) == []


def test_missing_detail_json_is_an_error(tmp_path: Path) -> None:
    found = check_e2e_rag(_ctx(tmp_path), closed=True)
    assert [(f.rule, f.failed) for f in found] == [("e2e_rag", True)]
    assert "detailed log JSON" in found[0].message and (found[0].source or "").startswith(FAQ)


def test_other_benchmarks_and_open_are_not_checked(tmp_path: Path) -> None:
    assert check_e2e_rag(_ctx(tmp_path / "a", "resnet50"), closed=True) == []
    assert check_e2e_rag(_ctx(tmp_path / "b"), closed=False) == []


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"max_iterations": 3}, "max_iterations"),
        ({"max_iterations": "10"}, "max_iterations"),
        ({"max_iterations": True}, "max_iterations"),
        ({"retrieval_mode": "single_shot"}, "retrieval_mode"),
        ({"grader_model": "openai/gpt-oss-120b"}, "grader_model"),
        ({"answer_generator_model": "meta-llama/Llama-3.1-8B"}, "answer_generator_model"),
        ({"index_type": "IVF"}, "index_type"),
        ({"embedding_model": "bge-large"}, "embedding_model"),
        ({"reranker_model": "bge-reranker"}, "reranker_model"),
    ],
)
def test_a_parameter_other_than_the_fixed_one_is_an_error(tmp_path: Path, change: dict, key: str) -> None:
    found = check_e2e_rag(_ctx(tmp_path, detail=_detail(META | change)), closed=True)
    assert [(f.rule, f.key, f.failed) for f in found] == [("e2e_rag", key, True)]
    assert found[0].source == next(p.source for p in FIXED_PARAMETERS if p.key == key)


def test_declared_components_that_match_pass(tmp_path: Path) -> None:
    meta = META | {
        "index_type": "FAISS HNSW",
        "embedding_model": "intfloat/e5-base-v2",
        "reranker_model": "colbert-ir/colbertv2.0",
    }
    assert check_e2e_rag(_ctx(tmp_path, detail=_detail(meta)), closed=True) == []


def test_undeclared_iterations_is_an_error(tmp_path: Path) -> None:
    meta = {k: v for k, v in META.items() if k != "max_iterations"}
    found = check_e2e_rag(_ctx(tmp_path, detail=_detail(meta)), closed=True)
    assert [f.key for f in found] == ["max_iterations"] and "lacks max_iterations" in found[0].message


def test_a_query_past_the_iteration_limit_is_an_error(tmp_path: Path) -> None:
    found = check_e2e_rag(_ctx(tmp_path, detail=_detail(hops=(1, 2, 3, 4, 5, 6))), closed=True)
    assert [(f.key, f.value) for f in found] == [("hop_count", 1)]
    assert f"more than {MAX_ITERATIONS} retrieval iterations" in found[0].message
    assert check_e2e_rag(_ctx(tmp_path / "ok", detail=_detail(hops=(1, 2, 3, 4, 5))), closed=True) == []


def test_not_the_reference_shape_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "llm_logs.json"
    for data, words in ((b"[1, 2]", "no experiment_metadata"), (b"{not json", "not valid JSON"),
                        (orjson.dumps({"experiment_metadata": META}), "no queries list")):  # fmt: skip
        path.write_bytes(data)
        found = check_detail_json(path)
        assert len(found) == 1 and words in found[0].message
    path.write_bytes(orjson.dumps(_detail()))
    assert check_detail_json(path, limit=64)[0].message.startswith("larger than 64 bytes")


def _dumps(value: object) -> bytes:
    return json.dumps(value).encode()  # Python's json writes integers past 64 bits too


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=25), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        JSONISH.map(_dumps),
        st.dictionaries(st.sampled_from([p.key for p in FIXED_PARAMETERS] + ["x"]), JSONISH, max_size=6).map(
            lambda m: _dumps({"experiment_metadata": m, "queries": [{"llm_calls": [{"hop_count": 9}]}, 7]})
        ),
    )
)
def test_hostile_detail_json_gives_findings_not_exceptions(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("rag") / "llm_logs.json"
    path.write_bytes(data)
    for f in check_detail_json(path):
        assert f.rule == "e2e_rag" and f.failed and len(f.message) < 600


def test_submission_tree_needs_the_detail_json(tmp_path: Path) -> None:
    """Through the whole checker: an e2e-rag result folder without its detail JSON is rejected with the
    FAQ's rule; with the reference JSON no e2e_rag finding is left. Round v6.1: E2E-RAG's first round
    (the corpus logs' v4.1 seeds are findings of their own, not looked at here)."""
    import shutil

    from checks_corpus import UT_EDGE, build_valid_tree

    from proctor.checks.submission import check_submission

    root = build_valid_tree(tmp_path)
    results = root / "closed/UntetherAI/results" / UT_EDGE
    rag = results / "e2e-rag" / "Offline"
    shutil.copytree(results / "resnet50" / "offline", rag)
    found = [f for f in check_submission(root, "v6.1").findings if f.rule == "e2e_rag"]
    assert [(f.failed, Path(f.path).parent) for f in found] == [(True, rag)]
    (rag / "llm_logs_multi_shot_20260101_000000.json").write_bytes(orjson.dumps(_detail(hops=(1, 2, 7))))
    found = [f for f in check_submission(root, "v6.1").findings if f.rule == "e2e_rag"]
    assert [(f.failed, f.key) for f in found] == [(True, "hop_count")]
    (rag / "llm_logs_multi_shot_20260101_000000.json").write_bytes(orjson.dumps(_detail()))
    assert [f for f in check_submission(root, "v6.1").findings if f.rule == "e2e_rag"] == []
