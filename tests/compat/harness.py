"""A harness written for the official `mlperf_loadgen`, used unchanged against proctor's compat layer.

It only uses the official Python API: the test binds `mlperf_loadgen` to either module before
running this file, so the `import` line below is the only place the module is named.
"""

import array
import os

import mlperf_loadgen as lg
import numpy as np

USER_CONF = """\
*.Offline.min_query_count = 300
*.SingleStream.target_latency = 0.05
*.Server.target_qps = 2000
*.Server.target_latency = 50
*.*.performance_sample_count_override = 64
"""


class Harness:
    """An SUT that answers inline with the QSL index as float32 payload; records what it was asked."""

    def __init__(self, fast: bool) -> None:
        self.issued: list[int] = []  # QSL indices in issue order
        self.queries: list[int] = []  # samples per IssueQuery call
        self.loaded: list[list[int]] = []
        self.unloaded: list[list[int]] = []
        self.flushes = 0
        self.cb_ids: list[int] = []  # ids the response callback saw
        self.buffers: list[object] = []
        self.sut = (
            lg.ConstructFastSUT(self.issue_fast, self.flush)
            if fast
            else lg.ConstructSUT(self.issue, self.flush)
        )
        self.qsl = lg.ConstructQSL(200, 64, self.loaded.append, self.unloaded.append)

    def respond(self, ids, indices) -> None:
        self.queries.append(len(ids))
        self.issued.extend(indices)
        out = np.asarray(indices, np.float32) * 0.5
        responses = []
        for k, i in enumerate(ids):
            if k % 2:  # half through numpy, half through array.array, as harnesses do
                ptr, size = out[k : k + 1].ctypes.data, out[k : k + 1].nbytes
            else:
                buf = array.array("f", [float(out[k])])
                self.buffers.append(buf)
                ptr, n = buf.buffer_info()
                size = n * buf.itemsize
            responses.append(lg.QuerySampleResponse(i, ptr, size))
        lg.QuerySamplesComplete(responses, lambda r: self.cb_ids.append(r.id))
        self.buffers.clear()

    def issue(self, query_samples) -> None:
        self.respond([q.id for q in query_samples], [q.index for q in query_samples])

    def issue_fast(self, ids, indices) -> None:
        self.respond(ids, indices)

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        lg.DestroyQSL(self.qsl)
        if hasattr(self, "sut"):
            lg.DestroySUT(self.sut)


def settings(scenario: str, mode: str, conf_path: str) -> tuple["lg.TestSettings", int]:
    ts = lg.TestSettings()
    ts.scenario = getattr(lg.TestScenario, scenario)
    ts.mode = getattr(lg.TestMode, mode)
    rc0 = ts.FromConfig("", "resnet50", scenario, 0)  # the shipped mlperf.conf
    rc = ts.FromConfig(conf_path, "resnet50", scenario) + rc0
    ts.min_duration_ms = 50 if scenario == "Server" else 0
    ts.min_query_count = 300 if scenario != "Server" else 50
    ts.server_target_latency_ns = 50_000_000
    return ts, rc


def run(outdir: str, scenario: str, mode: str, fast: bool = False) -> dict:
    """Run one test; return what the harness saw (its own records, not the logs)."""
    os.makedirs(outdir, exist_ok=True)
    conf_path = os.path.join(outdir, "user.conf")
    with open(conf_path, "w") as f:
        f.write(USER_CONF)
    ts, rc = settings(scenario, mode, conf_path)
    bad = os.path.join(outdir, "bad.conf")
    with open(bad, "w") as f:
        f.write("*.Offline.min_query_count = 12 # a trailing comment the official rejects\n")
    ts_bad = lg.TestSettings()
    rc_bad = ts_bad.FromConfig(bad, "resnet50", "Offline")
    log_settings = lg.LogSettings()
    log_settings.log_output.outdir = outdir
    log_settings.log_output.prefix = "h_"
    log_settings.log_output.suffix = "_x"
    log_settings.enable_trace = False
    h = Harness(fast)
    lg.StartTestWithLogSettings(h.sut, h.qsl, ts, log_settings, "")
    h.close()
    return {
        "from_config": rc,
        "from_config_bad": rc_bad,
        "bad_min_query_count": ts_bad.min_query_count,
        "conf_psc": ts.performance_sample_count_override,
        "conf_seed": ts.qsl_rng_seed,
        "conf_target_qps": ts.server_target_qps,
        "conf_ss_latency": ts.single_stream_expected_latency_ns,
        "scenario": str(ts.scenario),
        "mode": int(ts.mode),
        "ttft": ts.ttft_latency,
        "issued": h.issued,
        "queries": h.queries,
        "loaded": h.loaded,
        "unloaded": h.unloaded,
        "flushes": h.flushes,
        "cb_count": len(h.cb_ids),
    }
