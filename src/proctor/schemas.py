"""The JSON documents `--json` prints, one schema per kind, and a validator for the subset they use.

Each command's `--json` prints exactly one JSON document on stdout and nothing else (progress,
warnings and errors go to stderr), whatever its exit status: its own document, or `proctor.error`
when it ended without one (bad input, interrupted before it had a result, a failure, a bug; an
interrupted run prints its partial result, `incomplete` true); the exit status is the usual one. A program reading
the output can check it against `SCHEMAS[kind]` (JSON Schema, draft 2020-12 keywords: `type`,
`properties`, `required`, `additionalProperties`, `items`, `enum`, `minimum`); `validate` checks that
subset without a JSON Schema library, so the tests and users need nothing more than proctor.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

_NUMBER_OR_NULL: Schema = {"type": ["number", "null"]}
_STRINGS: Schema = {"type": "array", "items": {"type": "string"}}
_SEVERITY: Schema = {"type": "string", "enum": ["error", "warning", "info"]}
_STOPPED = (130, 143, 129)  # interrupted: Ctrl-C, SIGTERM, SIGHUP (128 + the signal)

FINDING: Schema = {
    "type": "object",
    "required": ["rule", "message", "severity"],
    "properties": {
        "rule": {"type": "string"},
        "message": {"type": "string"},
        "severity": _SEVERITY,
        "path": {"type": ["string", "null"]},
        "line": {"type": ["integer", "null"]},
        "key": {"type": ["string", "null"]},
        "source": {"type": ["string", "null"]},
    },
}
_FINDINGS: Schema = {"type": "array", "items": FINDING}

RUN: Schema = {
    "type": "object",
    "required": [
        "kind", "version", "valid", "exit_code", "verdict", "cause", "verdict_lines", "incomplete", "engine",
        "scenario", "mode", "short_run", "metric", "numbers", "errors", "warnings", "findings", "paths",
    ],
    "additionalProperties": False,
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.run"]},
        "version": {"type": "integer", "minimum": 1},
        "valid": {"type": "boolean"},
        "exit_code": {"type": "integer", "enum": [0, 1, *_STOPPED]},  # stopped: the partial result
        "incomplete": {"type": "boolean"},  # the run did not end (interrupted, failed, stuck SUT)
        "verdict": {"type": "string", "enum": ["VALID", "INVALID", "INCOMPLETE", "DONE", "FAILED"]},
        "cause": {"type": "string"},
        "verdict_lines": _STRINGS,
        "engine": {"type": "string", "enum": ["proctor", "official"]},
        "scenario": {"type": "string"},
        "mode": {"type": "string"},
        "short_run": {"type": "string"},
        "metric": {
            "type": ["object", "null"],
            "required": ["name", "value", "unit", "text"],
            "properties": {
                "name": {"type": "string"},
                "value": {"type": "number"},
                "unit": {"type": "string"},
                "text": {"type": "string"},
            },
        },
        "numbers": {"type": "object", "additionalProperties": _NUMBER_OR_NULL},
        "errors": {"type": "integer", "minimum": 0},
        "warnings": _STRINGS,
        "findings": _FINDINGS,
        "paths": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}

_AUDIT_CHECK: Schema = {
    "type": "object",
    "required": ["check", "passed", "lines", "notes", "numbers"],
    "properties": {
        "check": {"type": "string"},
        "passed": {"type": "boolean"},
        "lines": _STRINGS,
        "notes": _STRINGS,
        "numbers": {"type": "object"},
    },
}

AUDIT: Schema = {
    "type": "object",
    "required": ["kind", "version", "passed", "exit_code", "short_run", "audits", "findings"],
    "additionalProperties": False,
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.audit"]},
        "version": {"type": "integer", "minimum": 1},
        "passed": {"type": "boolean"},
        "exit_code": {"type": "integer", "enum": [0, 1]},
        "short_run": {"type": "string"},
        "audits": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["audit", "passed", "inconclusive", "folder", "failures", "checks", "notes"],
                "properties": {
                    "audit": {"type": "string"},
                    "passed": {"type": "boolean"},
                    "inconclusive": {"type": "string"},
                    "folder": {"type": "string"},
                    "failures": _STRINGS,
                    "checks": {"type": "array", "items": _AUDIT_CHECK},
                    "notes": _STRINGS,
                },
            },
        },
        "findings": _FINDINGS,
    },
}

_RESULT_ROW: Schema = {
    "type": "object",
    "required": ["system", "benchmark", "scenario", "metric", "value", "units", "valid"],
    "properties": {
        "system": {"type": "string"},
        "benchmark": {"type": "string"},
        "scenario": {"type": "string"},
        "metric": {"type": "string"},
        "value": _NUMBER_OR_NULL,
        "units": {"type": "string"},
        "valid": {"type": "boolean"},
    },
}

CHECK_SUBMISSION: Schema = {
    "type": "object",
    "required": ["kind", "version", "verdict", "valid", "submittable", "findings", "results"],
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.check.submission"]},
        "version": {"type": "integer", "minimum": 1},
        "verdict": {"type": "string", "enum": ["VALID", "INVALID", "VALID (development only)"]},
        "valid": {"type": "boolean"},
        "submittable": {"type": "boolean"},
        "findings": {
            "type": "array",
            "items": {**FINDING, "required": ["path", "rule", "message", "severity"]},
        },
        "results": {"type": "array", "items": _RESULT_ROW},
    },
}

# `proctor summarize --json`: the summary's records (a list; a power row follows its result's row)
SUMMARIZE: Schema = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["system", "benchmark", "scenario", "metric", "value", "units", "valid"],
        "properties": {
            **_RESULT_ROW["properties"],
            "valid": {"type": ["boolean", "null"]},
        },
    },
}

# `proctor training check-log --json`: one object per file given (one line each)
TRAINING_CHECK_LOG: Schema = {
    "type": "object",
    "required": ["file", "valid", "benchmark", "division", "ruleset", "findings"],
    "properties": {
        "file": {"type": "string"},
        "valid": {"type": "boolean"},
        "benchmark": {"type": ["string", "null"]},
        "division": {"type": ["string", "null"]},
        "ruleset": {"type": "string"},
        "findings": _FINDINGS,
        "hint": {"type": "string"},
    },
}

TRAINING_CHECK_SEEDS: Schema = {
    "type": "object",
    "required": ["directory", "valid", "findings"],
    "additionalProperties": False,
    "properties": {"directory": {"type": "string"}, "valid": {"type": "boolean"}, "findings": _FINDINGS},
}

TRAINING_SUMMARIZE: Schema = {
    "type": "object",
    "required": ["summary", "detailed", "open_final_quality", "findings"],
    "properties": {
        "summary": {"type": "array", "items": {"type": "object"}},
        "detailed": {"type": "array", "items": {"type": "object"}},
        "open_final_quality": {"type": "array", "items": {"type": "object"}},
        "findings": _FINDINGS,
    },
}

TRAINING_CHECK_PACKAGE: Schema = {
    "type": "object",
    "required": ["directory", "ruleset", "valid", "checked", "rcp", "findings"],
    "properties": {
        "directory": {"type": "string"},
        "ruleset": {"type": "string"},
        "valid": {"type": "boolean"},
        "rcp": {"type": "array", "items": {"type": "object"}},
        "findings": _FINDINGS,
    },
}

# `proctor results ingest --json`: the database and what each tree gave
RESULTS_INGEST: Schema = {
    "type": "object",
    "required": ["kind", "version", "db", "db_bytes", "db_results", "trees"],
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.results.ingest"]},
        "version": {"type": "integer", "minimum": 1},
        "db": {"type": "string"},
        "db_bytes": {"type": "integer", "minimum": 0},
        "db_results": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        "trees": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tree", "suite", "round", "round_from", "units", "checked", "unchanged", "removed",
                             "results", "invalid", "findings", "files", "seconds", "failed"],
                "properties": {
                    "suite": {"type": "string", "enum": ["inference", "training"]},
                    "failed": _STRINGS,
                },
            },
        },
    },
}

RESULTS_QUERY: Schema = {
    "type": "object",
    "required": ["kind", "version", "columns", "rows"],
    "additionalProperties": False,
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.results.query"]},
        "version": {"type": "integer", "minimum": 1},
        "columns": _STRINGS,
        "rows": {"type": "array", "items": {"type": "object"}},
    },
}

_PEER: Schema = {
    "type": ["object", "null"],
    "required": ["rank", "submitter", "system", "accelerator", "accelerators", "value", "per_accelerator", "verdict"],
    "properties": {
        "rank": {"type": "integer", "minimum": 1},
        "value": {"type": "number"},
        "per_accelerator": _NUMBER_OR_NULL,
        "verdict": {"type": "string", "enum": ["VALID", "INVALID"]},
    },
}

# `proctor results compare --json`: one placement per own result
RESULTS_COMPARE: Schema = {
    "type": "object",
    "required": ["kind", "version", "exit_code", "html", "placements"],
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.results.compare"]},
        "version": {"type": "integer", "minimum": 1},
        "exit_code": {"type": "integer", "enum": [0, 1, 2]},
        "html": {"type": ["string", "null"]},
        "placements": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["own", "findings", "round", "suite", "benchmark", "scenario", "metric", "units",
                             "higher_is_better", "division", "valid_only", "peers_count", "rank",
                             "per_accelerator_meaningful", "rank_per_accelerator", "peers_per_accelerator", "above",
                             "below", "peers", "benchmark_results", "round_results", "rounds_with_benchmark", "notes"],
                "properties": {
                    "own": {"type": "object", "required": ["value", "units", "verdict", "accelerators", "per_accelerator"]},
                    "findings": _FINDINGS,
                    "higher_is_better": {"type": "boolean"},
                    "rank": {"type": ["integer", "null"], "minimum": 1},
                    "rank_per_accelerator": {"type": ["integer", "null"], "minimum": 1},
                    "peers_count": {"type": "integer", "minimum": 0},
                    "above": _PEER,
                    "below": _PEER,
                    "peers": {"type": "array", "items": _PEER},
                    "notes": _STRINGS,
                },
            },
        },
    },
}

# What `--json` prints when a command ends without its own document: bad input (2), interrupted
# before it had a result (130/143/129, `incomplete` true), a failure (1) or a bug (70).
ERROR: Schema = {
    "type": "object",
    "required": ["kind", "version", "command", "exit_code", "error", "incomplete"],
    "additionalProperties": False,
    "properties": {
        "kind": {"type": "string", "enum": ["proctor.error"]},
        "version": {"type": "integer", "minimum": 1},
        "command": {"type": "string"},
        "exit_code": {"type": "integer", "minimum": 1},
        "error": {"type": "string"},
        "incomplete": {"type": "boolean"},
    },
}

SCHEMAS: dict[str, Schema] = {
    "proctor.error": ERROR,
    "proctor.run": RUN,
    "proctor.audit": AUDIT,
    "proctor.check.submission": CHECK_SUBMISSION,
    "proctor.summarize": SUMMARIZE,
    "proctor.training.check-log": TRAINING_CHECK_LOG,
    "proctor.training.check-seeds": TRAINING_CHECK_SEEDS,
    "proctor.training.summarize": TRAINING_SUMMARIZE,
    "proctor.training.check-package": TRAINING_CHECK_PACKAGE,
    "proctor.results.ingest": RESULTS_INGEST,
    "proctor.results.query": RESULTS_QUERY,
    "proctor.results.compare": RESULTS_COMPARE,
}

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False  # JSON's true is not a number
    return isinstance(value, _TYPES[name])


def validate(doc: Any, schema: Schema, where: str = "$") -> list[str]:
    """Every way `doc` breaks `schema` (the keywords listed in the module docstring): [] when it fits."""
    errors: list[str] = []
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(doc, n) for n in names):
            return [f"{where}: expected {' or '.join(names)}, got {type(doc).__name__}"]
    if "enum" in schema and doc not in schema["enum"]:
        errors.append(f"{where}: {doc!r} is not one of {schema['enum']!r}")
    if "minimum" in schema and _is(doc, "number") and doc < schema["minimum"]:
        errors.append(f"{where}: {doc!r} is below the minimum {schema['minimum']!r}")
    if isinstance(doc, dict):
        props: dict[str, Schema] = schema.get("properties", {})
        errors += [f"{where}: missing key {k!r}" for k in schema.get("required", ()) if k not in doc]
        extra = schema.get("additionalProperties", True)
        for key, value in doc.items():
            if key in props:
                errors += validate(value, props[key], f"{where}.{key}")
            elif extra is False:
                errors.append(f"{where}: unexpected key {key!r}")
            elif isinstance(extra, dict):
                errors += validate(value, extra, f"{where}.{key}")
    if isinstance(doc, list) and "items" in schema:
        for i, item in enumerate(doc):
            errors += validate(item, schema["items"], f"{where}[{i}]")
    return errors


__all__ = ["SCHEMAS", "Schema", "validate"]
