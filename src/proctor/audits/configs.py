"""The official compliance audits' settings as data: each audit's audit.config lines and where they
come from (each audit's record, `audits/specs.py`, names its config here).

Source: the official inference repository's `compliance/` folder (round v6.1): `TEST01/<benchmark>/
audit.config` (one per benchmark: mode 2, the fixed accuracy-log seed, a per-benchmark sampling
target), `TEST04/audit.config` (mode 2, the same sample issued over and over), `TEST06/audit.config`
(mode 2, 100 logged samples, no minimum duration, no equal-issue permutation). Which benchmark needs
which audit is the round's (rules/inference_rounds.py). LoadGen reads audit.config with model "*"
(docs/architecture.md, "Inference"), so the model-specific TEST04 lines never apply; they are kept
because the official file has them.
"""

from __future__ import annotations

from proctor.typed_records import record

# TEST06's output token dtypes (--dtype) and their numpy codes
TEST06_DTYPES = {"int64": "<i8", "int32": "<i4", "int16": "<i2", "float32": "<f4"}

SOURCE = "mlcommons/inference compliance/{test}{sub}/audit.config (round v6.1)"
CHECKER_SOURCE = "mlcommons/inference tools/submission/submission_checker/constants.py, v6.1 models_TEST0x"

# compliance/TEST01/*/audit.config and TEST06/audit.config: the accuracy-log RNG seed they all use.
ACCURACY_LOG_RNG_SEED = 720381539243781796
PERFORMANCE_MODE = 2  # "mode = 2": PerformanceOnly


@record(frozen=True, slots=True)
class ConfLine:
    model: str
    scenario: str
    key: str
    value: int

    def render(self) -> str:
        return f"{self.model}.{self.scenario}.{self.key} = {self.value}"


@record(frozen=True, slots=True)
class AuditConfig:
    """One audit.config: its lines in the official order and the file they come from."""

    audit: str  # TEST01, ... (audits/specs.py)
    lines: tuple[ConfLine, ...]
    source: str
    note: str = ""

    def render(self) -> str:
        head = [
            f"# {self.audit} audit.config, as the official {self.source}",
            "# The format of this config file is 'key = value'; LoadGen reads it with model '*'.",
        ]
        if self.note:
            head.append(f"# proctor: {self.note}")
        return "\n".join([*head, *(line.render() for line in self.lines)]) + "\n"

    def value(self, key: str, scenario: str = "*") -> int | None:
        """The value LoadGen would use for `key` in `scenario` (model '*': lookup scenario, then '*')."""
        for scen in (scenario, "*"):
            for line in reversed(self.lines):
                if line.model == "*" and line.scenario == scen and line.key == key:
                    return line.value
        return None


# compliance/TEST01/<folder>/audit.config: accuracy_log_sampling_target per benchmark folder.
TEST01_SAMPLING_TARGET: dict[str, int] = {
    "3d-unet": 64,
    "bert": 4096,
    "dlrm": 4096,
    "dlrm-v2": 4096,
    "gpt-j": 4096,
    "pointpainting": 256,
    "resnet50": 4096,
    "retinanet": 256,
    "rgat": 4096,
    "rnnt": 4096,
    "stable-diffusion-xl": 128,
    "wan-2.2-t2v-a14b": 50,
    "whisper": 4096,
    "yolo": 64,
}
# mlperf.conf model names whose TEST01 folder is spelt differently.
TEST01_FOLDER_ALIASES = {"gptj": "gpt-j", "dlrm-v3": "dlrm-v2"}
# A model with no TEST01 folder (proctor's own workloads): the image-classification value, said so.
TEST01_DEFAULT_FOLDER = "resnet50"


def test01_folder(model: str) -> str | None:
    """The compliance/TEST01 folder for an mlperf.conf model name, or None if it has none."""
    base = model.removesuffix("-interactive")
    base = TEST01_FOLDER_ALIASES.get(base, base)
    return base if base in TEST01_SAMPLING_TARGET else None


def test01_config(model: str) -> AuditConfig:
    folder = test01_folder(model)
    note = ""
    if folder is None:
        folder = TEST01_DEFAULT_FOLDER
        note = f"'{model}' has no compliance/TEST01 folder; using the {folder} folder's sampling target"
    return AuditConfig(
        "TEST01",
        (
            ConfLine("*", "*", "mode", PERFORMANCE_MODE),
            ConfLine("*", "*", "accuracy_log_rng_seed", ACCURACY_LOG_RNG_SEED),
            ConfLine("*", "*", "accuracy_log_sampling_target", TEST01_SAMPLING_TARGET[folder]),
        ),
        SOURCE.format(test="TEST01", sub=f"/{folder}"),
        note,
    )


def _test04_lines() -> tuple[ConfLine, ...]:
    lines: list[ConfLine] = []
    for scen in ("MultiStream", "Offline", "SingleStream", "Server"):
        lines += [
            ConfLine("*", scen, "mode", PERFORMANCE_MODE),
            ConfLine("*", scen, "performance_issue_unique", 0),
            ConfLine("*", scen, "performance_issue_same", 1),
            ConfLine("*", scen, "performance_issue_same_index", 3),
        ]
    lines += [
        ConfLine("stable-diffusion-xl", "Offline", "min_query_count", 500),
        ConfLine("wan-2.2-t2v-a14b", "Offline", "min_query_count", 20),
        ConfLine("wan-2.2-t2v-a14b", "SingleStream", "min_query_count", 20),
    ]
    return tuple(lines)


TEST04_CONFIG = AuditConfig("TEST04", _test04_lines(), SOURCE.format(test="TEST04", sub=""))

TEST06_CONFIG = AuditConfig(
    "TEST06",
    (
        ConfLine("*", "*", "mode", PERFORMANCE_MODE),
        ConfLine("*", "*", "accuracy_log_rng_seed", ACCURACY_LOG_RNG_SEED),
        ConfLine("*", "*", "accuracy_log_sampling_target", 100),
        ConfLine("*", "*", "min_query_count", 100),
        ConfLine("*", "*", "min_duration", 0),
        ConfLine("*", "*", "sample_concatenate_permutation", 0),
    ),
    SOURCE.format(test="TEST06", sub=""),
)


__all__ = [
    "ACCURACY_LOG_RNG_SEED",
    "TEST01_SAMPLING_TARGET",
    "TEST04_CONFIG",
    "TEST06_CONFIG",
    "AuditConfig",
    "ConfLine",
    "test01_config",
]
