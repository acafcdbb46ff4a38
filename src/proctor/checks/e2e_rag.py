"""E2E-RAG: the detailed log JSON the rules require, and the parameters the rules fix, read from it.

Closed and network results of `e2e-rag` must carry the reference pipeline's detail JSON
(`llm_logs*.json`, in the result folder or its performance/accuracy folders). Its
`experiment_metadata` must declare the fixed retrieval loop (max_iterations 5) and, where it names
them, the fixed components (rules.e2e_rag); no query may take more retrieval iterations than the
rules allow (`llm_calls[].hop_count`, `summary.total_hops`). The file is hostile input: read up to a
bound, parsed once, walked with limits.
"""

from __future__ import annotations

import math
from pathlib import Path

from proctor.findings import Finding
from proctor.lazy_patterns import LazyPattern
from proctor.rules.e2e_rag import (
    BENCHMARK,
    DETAIL_JSON_GLOB,
    DETAIL_JSON_SHAPE,
    DETAIL_JSON_SOURCE,
    FIXED_PARAMETERS,
    MAX_ITERATIONS,
    FixedParameter,
)
from proctor.trees import is_file, read_at_most

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from proctor.checks.compliance import ResultContext

MAX_DETAIL_BYTES = 512 << 20  # 824 questions x a dozen logged LLM calls with their documents
MAX_QUERIES = 1 << 20
RULE = "e2e_rag"
ITERATIONS_SOURCE = FIXED_PARAMETERS[0].source
_PUNCT = LazyPattern(r"[^a-z0-9]")


def _err(path: Path | str, message: str, source: str = DETAIL_JSON_SOURCE, **kw: Any) -> Finding:
    return Finding(rule=RULE, path=str(path), message=message, source=source, **kw)


def detail_jsons(scendir: Path) -> list[Path]:
    """The detail JSONs of a result (the folder itself, performance/run_1, accuracy), sorted."""
    found: list[Path] = []
    for folder in (scendir, scendir / "performance" / "run_1", scendir / "accuracy"):
        try:
            found += sorted(p for p in folder.glob(DETAIL_JSON_GLOB) if is_file(p))
        except OSError:
            continue
    return found


def check_e2e_rag(ctx: ResultContext, closed: bool) -> list[Finding]:
    """Findings about an E2E-RAG result's detail JSON (none for other benchmarks or the open division)."""
    if ctx.variant.benchmark.name != BENCHMARK or not closed:
        return []
    files = detail_jsons(ctx.scendir)
    if not files:
        return [
            _err(
                ctx.scendir / "llm_logs_multi_shot_<timestamp>.json",
                "missing the detailed log JSON (llm_logs*.json) of the RAG pipeline: the rules require it so "
                "reviewers can check the run; copy the reference logger's output here",
            )
        ]
    out: list[Finding] = []
    for path in files:
        out += check_detail_json(path)
    return out


def check_detail_json(path: Path, limit: int = MAX_DETAIL_BYTES) -> list[Finding]:
    import orjson  # here: only trees that hold this file pay for its import

    try:
        with path.open("rb") as fh:
            data = read_at_most(fh, limit)
    except OSError as exc:
        return [_err(path, f"cannot read it ({exc.strerror or exc})")]
    if len(data) > limit:
        return [_err(path, f"larger than {limit} bytes: too large to be checked as a detail JSON")]
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return [_err(path, f"not valid JSON ({str(exc)[:120]}); keep the logger's output unedited")]
    meta = obj.get("experiment_metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return [
            _err(
                path,
                f"no experiment_metadata object: not the reference pipeline's detail JSON ({DETAIL_JSON_SHAPE})",
            )
        ]
    out = [f for p in FIXED_PARAMETERS if (f := _fixed(path, meta, p)) is not None]
    return out + _iterations(path, obj.get("queries"))


def _matches(value: object, param: FixedParameter) -> bool:
    if param.equals is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return False
        try:
            number = float(value) if not isinstance(value, str) or len(value) <= 40 else math.nan
        except ValueError:
            return False
        return math.isfinite(number) and number == param.equals
    return (
        isinstance(value, str)
        and param.contains is not None
        and param.contains in _PUNCT.sub("", value.lower())
    )


def _fixed(path: Path, meta: dict[str, Any], param: FixedParameter) -> Finding | None:
    if param.key not in meta:
        if not param.required:
            return None
        return _err(
            path,
            f"experiment_metadata lacks {param.key}; the rules fix it ({_want(param)})",
            source=param.source,
            key=param.key,
        )
    value = meta[param.key]
    if _matches(value, param):
        return None
    return _err(
        path,
        f"experiment_metadata {param.key} = {str(value)[:80]!r}; the rules fix it ({_want(param)})",
        source=param.source,
        key=param.key,
        value=value if isinstance(value, (int, float, str)) else None,
        expected=param.equals if param.equals is not None else param.contains,
    )


def _want(param: FixedParameter) -> str:
    return (
        f"= {param.equals:g}" if param.equals is not None else f"the reference component, '{param.contains}'"
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _iterations(path: Path, queries: object) -> list[Finding]:
    """Queries that ran more retrieval iterations than the rules allow (first one named, all counted)."""
    if not isinstance(queries, list):
        return [
            _err(path, f"no queries list: not the reference pipeline's detail JSON ({DETAIL_JSON_SHAPE})")
        ]
    over, first = 0, ""
    for q in queries[:MAX_QUERIES]:
        if not isinstance(q, dict):
            continue
        hops = (
            [_int(c.get("hop_count")) for c in q.get("llm_calls") or () if isinstance(c, dict)]
            if isinstance(q.get("llm_calls"), list)
            else []
        )
        summary = q.get("summary")
        total = _int(summary.get("total_hops")) if isinstance(summary, dict) else None
        most = max([h for h in hops if h is not None] + ([total] if total is not None else []), default=0)
        if most > MAX_ITERATIONS:
            over += 1
            first = first or f"{str(q.get('query_id'))[:60]} ({most} iterations)"
    if not over:
        return []
    return [
        _err(
            path,
            f"{over} queries ran more than {MAX_ITERATIONS} retrieval iterations (first: {first}); the rules "
            f"limit and fix it to {MAX_ITERATIONS}",
            source=ITERATIONS_SOURCE,
            key="hop_count",
            value=over,
        )
    ]


__all__ = ["check_detail_json", "check_e2e_rag", "detail_jsons"]
