"""Suite-wide test setup: hypothesis profiles and an in-process CLI runner.

Profiles: `ci` (default, short: the suite stays within CI's budget) and `long` (thousands of
examples per property; `HYPOTHESIS_PROFILE=long python -m pytest -m fuzz` or bench/fuzz_long.sh).
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings

# A shell without job control starts background jobs with SIGINT ignored, and children inherit an
# ignored signal: the Ctrl-C tests (in-process and in child processes) would test nothing. Handled
# here, an ignored SIGINT becomes Python's own again, and children start with the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@dataclass
class CliResult:
    rc: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run `proctor ARGS...` in this process the way the console script does; returns rc/out/err."""
    from proctor.cli import main, output

    def invoke(*args: str) -> CliResult:
        output.set_debug(False)
        capsys.readouterr()
        rc = main.run([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(rc, captured.out, captured.err)

    return invoke


@pytest.fixture(autouse=True)
def _fresh_compat_config_state():
    """The compat API counts user.conf FromConfig calls per process, as the official does: each test
    starts as a fresh process would."""
    import sys

    compat = sys.modules.get("proctor.compat.mlperf_loadgen")
    if compat is not None:
        compat.reset_config_state()
    yield
