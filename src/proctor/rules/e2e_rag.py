"""E2E-RAG's fixed parameters, as data (rules §FAQ, E2E-RAG).

The rules fix the retrieval loop ("limited to 5. All submitters are required to set it to 5"), the
pipeline's components (FAISS HNSW index, e5-base-v2 embeddings, ColBERTv2 reranking, GPT-OSS-120B
query writer / sufficiency checker / answer generator, GPT-OSS-20B grader) and require the detailed
log JSON ("the submitter is required to submit the detailed log JSON file"). The detail JSON's shape
(`experiment_metadata`, `queries[].llm_calls[].hop_count`) is the reference implementation's
(`e2e-rag/llm_logger.py`, `multi_shot_retrieval.py`, mlcommons/inference HEAD).
"""

from __future__ import annotations

from proctor.rules.inference import RULES
from proctor.typed_records import record

FAQ = f"{RULES} §FAQ, E2E-RAG"
BENCHMARK = "e2e-rag"
MAX_ITERATIONS = 5
DETAIL_JSON_GLOB = "llm_logs*.json"  # the reference's llm_logs_multi_shot_<timestamp>.json
DETAIL_JSON_SOURCE = f"{FAQ} ('Why is the submitter required to submit the detailed log JSON file?')"
DETAIL_JSON_SHAPE = "mlcommons/inference HEAD e2e-rag/llm_logger.py (experiment_metadata, queries, llm_calls)"


@record(frozen=True, slots=True)
class FixedParameter:
    """A detail-JSON `experiment_metadata` key whose value the rules fix.

    `equals` for a number; `contains` for a name that must mention the reference component (case and
    punctuation ignored). `required`: the key must be present (else: checked when declared).
    """

    key: str
    source: str
    equals: float | None = None
    contains: str | None = None
    required: bool = False


FIXED_PARAMETERS: tuple[FixedParameter, ...] = (
    FixedParameter(
        "max_iterations",
        f"{FAQ} ('What is the maximum number of retrieval iterations?': 'All submitters are required to set it to 5')",
        equals=MAX_ITERATIONS,
        required=True,
    ),
    FixedParameter("retrieval_mode", f"{FAQ} ('iterative multi-shot retrieval')", contains="multishot"),
    FixedParameter("index_type", f"{FAQ} ('FAISS HNSW index')", contains="hnsw"),
    FixedParameter(
        "embedding_model", f"{FAQ} (key components: 'embedding models (e5-base-v2)')", contains="e5basev2"
    ),
    FixedParameter("reranker_model", f"{FAQ} (key components: 'ColBERTv2 model')", contains="colbertv2"),
    FixedParameter(
        "query_model",
        f"{FAQ} (key components: 'Query Writer (LLM): Using GPT-OSS-120B')",
        contains="gptoss120b",
    ),
    FixedParameter(
        "grader_model", f"{FAQ} (key components: 'Document Grading: Using GPT-OSS-20B')", contains="gptoss20b"
    ),
    FixedParameter(
        "sufficiency_checker_model",
        f"{FAQ} (key components: 'Sufficiency Checker: Using GPT-OSS-120B')",
        contains="gptoss120b",
    ),
    FixedParameter(
        "answer_generator_model",
        f"{FAQ} (key components: 'Answer Generation: Using GPT-OSS-120B')",
        contains="gptoss120b",
    ),
)

__all__ = ["BENCHMARK", "DETAIL_JSON_GLOB", "FAQ", "FIXED_PARAMETERS", "MAX_ITERATIONS", "FixedParameter"]
