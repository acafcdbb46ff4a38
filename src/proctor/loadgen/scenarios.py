"""The scenarios (Interactive runs as Server under its own model name) and the test modes: names the engine,
the conf files and the checks share, apart from the SUT interfaces in `types`, so a log reader loads only these."""

from __future__ import annotations

from enum import StrEnum


class Scenario(StrEnum):
    SINGLE_STREAM = "SingleStream"
    MULTI_STREAM = "MultiStream"
    SERVER = "Server"
    OFFLINE = "Offline"


class TestMode(StrEnum):
    SUBMISSION_RUN = "SubmissionRun"
    ACCURACY_ONLY = "AccuracyOnly"
    PERFORMANCE_ONLY = "PerformanceOnly"
    FIND_PEAK_PERFORMANCE = "FindPeakPerformance"


# The official conf files give `mode` as an integer in this order (test_settings.h).
MODE_BY_NUMBER = (TestMode.SUBMISSION_RUN, TestMode.ACCURACY_ONLY, TestMode.PERFORMANCE_ONLY,
                  TestMode.FIND_PEAK_PERFORMANCE)
