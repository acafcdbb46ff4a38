"""The network QDL against `proctor serve node` processes on loopback (and MLServer, and network
namespaces, where available)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from proctor.checks.network import name_tags
from proctor.clients.network import from_params
from proctor.errors import ConfigError
from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test
from proctor.loadgen.sink import ReportingSUT, StartableSUT
from proctor.workloads import digits
from proctor.workloads.digits import accuracy, data, model
from proctor.workloads.digits.qsl import DigitsQSL
from tests.support.recording_sink import RecordingSink

pytestmark = pytest.mark.slow

SRC = str(Path(__file__).resolve().parents[2] / "src")
START = "from proctor.serving.node_server import main; main()"


@dataclass
class NodeProcess:
    proc: subprocess.Popen[str]
    url: str
    name: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    return e


def start_node(sut: str, *, prefix: Sequence[str] = (), host: str = "127.0.0.1", wait_s: float = 60) -> NodeProcess:
    """A node on an ephemeral port; its `READY url name` line says where (bounded wait)."""
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-c", START, "--sut", sut, "--host", host, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
    )
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(wait_s)
    words = line[0].split() if line else []
    if len(words) != 3 or words[0] != "READY":
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""  # type: ignore[union-attr]
        pytest.fail(f"node {sut} did not start: {line} {err[-2000:]}")
    return NodeProcess(proc, words[1], words[2])


@pytest.fixture(scope="module")
def two_nodes():
    nodes = [start_node("digits:backend=numpy,max_batch=16"), start_node("digits:backend=numpy,max_batch=16")]
    try:
        yield nodes
    finally:
        for n in nodes:
            n.stop()


def _run(tmp_path, sut, qsl, scenario, mode, **kw):
    settings = TestSettings(scenario=scenario, mode=mode, min_duration_ms=200, min_query_count=60, **kw)
    log = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    return run_test(sut, qsl, settings, log, audit_config=None, timeout_s=60)


def _expected_good() -> int:
    split = data.validation()
    return int((model.build("fp32").predict(data.preprocess(split.images)) == split.labels).sum())


def test_name_round_trips_to_every_node_and_is_unique(two_nodes):
    sut, _ = from_params(node="|".join(n.url for n in two_nodes))
    try:
        name = sut.name
        assert name.startswith("Network SUT[") and "model=digits" in name
        for n in two_nodes:  # same SUT on both nodes, still one unique name each
            assert n.name in name
        assert two_nodes[0].name != two_nodes[1].name
        assert name_tags(name) == {}  # tensor mode, no compression: nothing for the checker to flag
    finally:
        sut.close()
    sut, _ = from_params(node=two_nodes[0].url, compress="zlib")
    try:  # the checker reads QSL-side compression from sut_name (rules: allowed per benchmark)
        assert name_tags(sut.name) == {"compress": "zlib"}
    finally:
        sut.close()


def test_an_index_mode_node_says_so_in_the_qdl_name():
    """Index mode sends sample indices, not inference data: the name tells the checker (which flags it)."""
    node = start_node("synthetic:service_us=0,workers=1")
    sut, _ = from_params(node=node.url, qsl="synthetic")
    try:
        assert name_tags(sut.name) == {"input": "index"}
    finally:
        sut.close()
        node.stop()


@pytest.mark.parametrize(("scenario", "params"), [
    (Scenario.OFFLINE, {}), (Scenario.SERVER, {"binary": "0"}), (Scenario.OFFLINE, {"compress": "zlib"}),
])
def test_accuracy_through_the_network_equals_in_process(tmp_path, two_nodes, scenario, params):
    sut, qsl = from_params(node=two_nodes[0].url, node2=two_nodes[1].url, chunk="32", **params)
    try:
        out = _run(tmp_path, sut, qsl, scenario, TestMode.ACCURACY_ONLY, server_target_qps=400.0)
        assert not out.incomplete and out.errors == 0
        result = accuracy.evaluate(tmp_path / "mlperf_log_accuracy.json")
        assert result.total == digits.TOTAL_SAMPLE_COUNT and result.good == _expected_good()
        assert all(x.samples > 0 for x in sut.nodes) and not sut.lost  # both nodes served
    finally:
        sut.close()


@pytest.mark.parametrize("scenario", [Scenario.OFFLINE, Scenario.SERVER])
def test_performance_runs_complete_every_sample_over_two_nodes(tmp_path, two_nodes, scenario):
    sut, qsl = from_params(node="|".join(n.url for n in two_nodes))
    try:
        out = _run(tmp_path, sut, qsl, scenario, TestMode.PERFORMANCE_ONLY,
                   offline_expected_qps=1000.0, server_target_qps=200.0)
        assert not out.incomplete and out.errors == 0
        issued = out.records.n_samples_issued
        assert issued > 0 and (out.records.sample_done_ns[:issued] >= 0).all()
        assert sum(x.samples for x in sut.nodes) == issued and all(x.samples for x in sut.nodes)
        detail = (tmp_path / "mlperf_log_detail.txt").read_text()
        assert "Network SUT[" in detail
    finally:
        sut.close()


def test_a_started_qdl_completes_through_its_sink_with_the_registered_digits_qsl(two_nodes):
    sut, qsl = from_params(node=two_nodes[0].url, chunk="4", perf_count="20")
    sink = RecordingSink(10)
    try:
        assert isinstance(sut, StartableSUT) and isinstance(sut, ReportingSUT)
        assert isinstance(qsl.inner, DigitsQSL) and qsl.performance_sample_count == 20  # from the registry
        qsl.load_samples(list(range(10)))
        sut.start(sink)
        ids = np.arange(10, dtype=np.int64) + (3 << 32)
        sut.issue_query_arrays(ids, np.arange(10, dtype=np.int64))
        assert sink.ended.wait(60)
    finally:
        sut.close()
    assert not sink.fails and not sink.completes
    assert sorted(i for got, _, _ in sink.arrays for i in got) == ids.tolist()
    assert sorted(len(got) for got, _, _ in sink.arrays) == [2, 4, 4]  # chunk=4: three requests
    rows = {i: row for got, data_, _ in sink.arrays for i, row in zip(got, data_, strict=True)}
    split = data.validation()
    expected = model.build("fp32").predict(data.preprocess(split.images[:10]))
    got = [int(np.frombuffer(rows[int(i)].tobytes(), digits.RESPONSE_DTYPE)[0]) for i in ids]
    assert got == expected.tolist()  # each row is the node's prediction, unchanged


def test_a_node_that_dies_mid_run_has_its_samples_answered_by_the_other(tmp_path):
    slow = start_node("synthetic:service_us=100000,workers=1")  # queues up: queries are outstanding
    fast = start_node("synthetic:service_us=0,workers=1")
    sut, qsl = from_params(node=f"{slow.url}|{fast.url}", qsl="synthetic")
    try:
        killer = threading.Timer(0.5, slow.proc.kill)
        killer.start()
        out = _run(tmp_path, sut, qsl, Scenario.SERVER, TestMode.PERFORMANCE_ONLY, server_target_qps=100.0)
        killer.join()
        moved = sut.redispatched
        assert list(moved) == [slow.url] and moved[slow.url] >= 1
        assert sut.lost == {} and out.result.failed_samples == 0 and out.errors == 0 and not out.incomplete
        # every issued sample was answered once, by one node or the other
        assert sut.nodes[0].samples + sut.nodes[1].samples == out.records.n_samples_issued
        assert [x.alive for x in sut.nodes] == [False, True]
        report = sut.report()
        assert report[0].startswith(f"node {slow.name} ({slow.url}) went down at t=")
        assert report[0].endswith(f"{moved[slow.url]:,} of its samples re-dispatched to live nodes, none failed")
        assert slow.name in sut.name  # the run's logs name the same SUT after the node died
    finally:
        sut.close()
        slow.stop()
        fast.stop()


def test_bad_parameters_and_unreachable_nodes_are_config_errors():
    with pytest.raises(ConfigError, match="key 'node'"):
        from_params(qsl="synthetic")
    with pytest.raises(ConfigError, match="not an http"):
        from_params(node="ftp://x")
    with pytest.raises(ConfigError, match="unknown network SUT parameter"):
        from_params(node="http://127.0.0.1:1", colour="red")
    with pytest.raises(ConfigError, match="did not answer"):
        from_params(node="http://127.0.0.1:1", qsl="synthetic")


def test_serve_node_registers_on_the_serve_app():
    import typer
    from typer.testing import CliRunner

    from proctor.cli import serve_node

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """serve"""

    serve_node.register(app)
    r = CliRunner().invoke(app, ["node", "--help"])
    assert r.exit_code == 0 and "--sut" in r.output
    r = CliRunner().invoke(app, ["node", "--sut", "nosuch", "--port", "0"])
    assert r.exit_code == 2 and "unknown SUT" in r.output + (r.stderr if r.stderr_bytes else "")


# --- a third-party V2 server -------------------------------------------------------------------


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def test_mlserver_serving_the_digits_model_over_json_tensors(tmp_path):
    exe = os.environ.get("PROCTOR_MLSERVER") or shutil.which("mlserver")
    if not exe:
        pytest.skip("MLServer is not installed (set PROCTOR_MLSERVER to its `mlserver` executable)")
    sklearn_nn = pytest.importorskip("sklearn.neural_network")
    joblib = pytest.importorskip("joblib")
    net = model.load_reference()
    clf = sklearn_nn.MLPClassifier(hidden_layer_sizes=tuple(w.shape[1] for w in net.weights[:-1]), max_iter=1)
    clf.partial_fit(np.zeros((10, 64), np.float32), np.arange(10), classes=np.arange(10))
    clf.coefs_ = [w.astype(np.float64) for w in net.weights]
    clf.intercepts_ = [b.astype(np.float64) for b in net.biases]
    joblib.dump(clf, tmp_path / "model.joblib")
    http, grpc, metrics = _free_ports(3)
    (tmp_path / "settings.json").write_text(json.dumps({
        "host": "127.0.0.1", "http_port": http, "grpc_port": grpc, "metrics_port": metrics,
        "parallel_workers": 0, "metrics_endpoint": None}))
    (tmp_path / "model-settings.json").write_text(json.dumps({
        "name": "digits", "implementation": "mlserver_sklearn.SKLearnModel", "parameters": {"uri": "./model.joblib"},
        "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 64]}],
        "outputs": [{"name": "predict", "datatype": "INT64", "shape": [-1]}]}))
    proc = subprocess.Popen([exe, "start", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{http}"
    sut = None
    try:
        import time
        import urllib.request

        for _ in range(120):  # bounded: up to 60 s for MLServer to start
            try:
                urllib.request.urlopen(f"{url}/v2/models/digits/ready", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        sut, qsl = from_params(node=url, binary="0")
        assert sut.name.startswith("Network SUT[mlserver")
        out = _run(tmp_path / "logs", sut, qsl, Scenario.OFFLINE, TestMode.ACCURACY_ONLY)
        assert not out.incomplete and out.errors == 0
        result = accuracy.evaluate(tmp_path / "logs" / "mlperf_log_accuracy.json", dtype="<i8")  # INT64 rows
        assert result.good == _expected_good()
    finally:
        if sut is not None:
            sut.close()
        proc.terminate()
        proc.wait(20)


# --- each side in its own network namespace ----------------------------------------------------

_NETNS_SCRIPT = """
import sys
from pathlib import Path
from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test
from proctor.clients.network import from_params
from proctor.workloads.digits import accuracy
sut, qsl = from_params(node=sys.argv[1])
s = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.ACCURACY_ONLY)
out = run_test(sut, qsl, s, LogSettings(log_output=LogOutputSettings(outdir=sys.argv[2]), enable_trace=False),
               audit_config=None, timeout_s=60)
print(sut.name)
print(out.errors, accuracy.evaluate(Path(sys.argv[2]) / "mlperf_log_accuracy.json").good)
sut.close()
"""


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def test_queries_cross_a_veth_pair_between_two_namespaces(tmp_path):
    if shutil.which("ip") is None or sys.platform != "linux":
        pytest.skip("needs iproute2 on Linux")
    tag = f"pn{os.getpid() % 100000}"
    ns_node, ns_gen = f"{tag}n", f"{tag}g"
    made: list[str] = []
    node = None
    try:
        for ns in (ns_node, ns_gen):
            r = _ip("netns", "add", ns)
            if r.returncode:
                pytest.skip(f"ip netns add is not permitted here: {r.stderr.strip()}")
            made.append(ns)
        # a veth pair with one end in each namespace; 10.231.x addresses exist only inside them
        for cmd in (
            ("link", "add", f"{tag}a", "netns", ns_node, "type", "veth", "peer", "name", f"{tag}b", "netns", ns_gen),
            ("-n", ns_node, "addr", "add", "10.231.7.1/30", "dev", f"{tag}a"),
            ("-n", ns_gen, "addr", "add", "10.231.7.2/30", "dev", f"{tag}b"),
            ("-n", ns_node, "link", "set", f"{tag}a", "up"), ("-n", ns_gen, "link", "set", f"{tag}b", "up"),
            ("-n", ns_node, "link", "set", "lo", "up"), ("-n", ns_gen, "link", "set", "lo", "up"),
        ):
            r = _ip(*cmd)
            if r.returncode:
                pytest.skip(f"ip {' '.join(cmd)} failed: {r.stderr.strip()}")
        node = start_node("digits:backend=numpy", prefix=("ip", "netns", "exec", ns_node), host="10.231.7.1")
        r = subprocess.run(["ip", "netns", "exec", ns_gen, sys.executable, "-c", _NETNS_SCRIPT, node.url,
                            str(tmp_path)], capture_output=True, text=True, timeout=120, env=env())
        assert r.returncode == 0, r.stderr[-2000:]
        name, counts = r.stdout.strip().splitlines()[-2:]
        assert "Network SUT[" in name and "10.231.7.1" in name
        assert counts.split() == ["0", str(_expected_good())]
    finally:
        if node is not None:
            node.stop()
        for ns in made:
            _ip("netns", "del", ns)
