"""ResNet-50 as an in-process SUT on a GPU, Offline and Server, on proctor's engine and the official
one in the same run: samples/s and the Server's highest valid QPS for both.

    python bench/gpu_offline_server.py                       # GPU if torch sees one, else a CPU smoke run
    python bench/gpu_offline_server.py --device cpu          # tiny: 64x64 images, batches 1-4, short runs
    python bench/gpu_offline_server.py --engines proctor     # without the official LoadGen

Model: torchvision's ResNet-50 with random weights (no download), in bf16 and channels-last on the
GPU (float32 on the CPU); when torchvision is missing, an equivalent ResNet-50 (v1.5: stride on the
3x3 convolution) defined here in plain torch. Data: `--perf-count` random images made on the device
(the QSL holds them; nothing is copied per query). The SUT is proctor's DynamicBatcher (greedy, max
batch = the batch size the script picks) whose workers each run on their own CUDA stream; a batch is
padded to the next power of two so cuDNN sees few shapes (all warmed up before timing).

Batch: the candidate (`--batches`) with the highest throughput in a short probe. Server: latency
bound `--latency-ms` (ResNet-50's 15 ms) at the `--percentile` (99 %), searched per engine: start
at half the batch probe's rate (the same start for both engines, so both visit the same rates until
their verdicts differ), grow x1.5 while valid, then bisect, `--server-probes` runs in all; the
reported figure is the highest QPS whose run was VALID. Both engines write the official summary,
which is where every figure here is read from.

Needs: torch (CUDA build for the GPU run); torchvision optional; `mlperf_loadgen` for the official
side (the machine may have no network: install the mlcommons-loadgen 6.0.17 wheel for its Python,
e.g. cp312, from a file; `pip download mlcommons-loadgen==6.0.17 --python-version 3.12
--only-binary=:all: --no-deps -d wheels/` fetches it elsewhere).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from proctor.suts.batching import Complete, DynamicBatcher, complete_arrays, official_complete

SCALE = {  # defaults per device: the GPU check, and a CPU smoke run that finishes in about a minute
    "cuda": {
        "image_size": 224,
        "perf_count": 1024,
        "batches": "32,64,128,256,512",
        "duration_ms": 10_000,
        "server_probes": 7,
        "latency_ms": 15.0,
        "percentile": 0.99,
        "min_queries": 100,
        "dtype": "bf16",
    },
    "cpu": {
        "image_size": 64,
        "perf_count": 16,
        "batches": "1,2,4",
        "duration_ms": 300,
        "server_probes": 3,
        "latency_ms": 1000.0,
        "percentile": 0.9,
        "min_queries": 64,
        "dtype": "fp32",
    },
}


# --- the model -------------------------------------------------------------------------------------


def resnet50(torch: Any) -> Any:
    """torchvision's resnet50(weights=None), or the same network in plain torch without it."""
    try:
        from torchvision.models import resnet50 as tv_resnet50

        return tv_resnet50(weights=None), "torchvision"
    except Exception:  # noqa: BLE001 - missing, or a build that does not match torch
        pass
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin: int, width: int, stride: int) -> None:
            super().__init__()
            cout = width * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x: Any) -> Any:
            idt = x if self.downsample is None else self.downsample(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            return self.relu(self.bn3(self.conv3(y)) + idt)

    layers, cin = [], 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        stage = []
        for b in range(blocks):
            stage.append(Bottleneck(cin, width, stride if b == 0 else 1))
            cin = width * 4
        layers.append(nn.Sequential(*stage))
    net = nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
        *layers,
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(2048, 1000),
    )
    return net, "built-in (torchvision not importable)"


class Runner:
    """The model, the device-resident images, and `process(indices) -> int32 classes`."""

    def __init__(self, torch: Any, device: str, dtype: str, image_size: int, perf_count: int) -> None:
        self.torch, self.device = torch, torch.device(device)
        self.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
        torch.manual_seed(0)
        net, self.source = resnet50(torch)
        self.net = net.eval().to(self.device, self.dtype, memory_format=torch.channels_last)
        gen = torch.Generator(device=self.device).manual_seed(0)
        self.images = (
            torch.randn(
                perf_count, 3, image_size, image_size, generator=gen, device=self.device, dtype=torch.float32
            )
            .to(self.dtype)
            .contiguous(memory_format=torch.channels_last)
        )
        self.cuda = self.device.type == "cuda"
        self.max_batch = 1
        self._local = threading.local()
        if self.cuda:
            torch.backends.cudnn.benchmark = True

    def _stream(self) -> Any:
        s = getattr(self._local, "stream", None)
        if s is None:
            s = self._local.stream = self.torch.cuda.Stream(device=self.device)
        return s

    def infer(self, indices: np.ndarray) -> np.ndarray:
        torch, n = self.torch, indices.size
        padded = min(self.max_batch, 1 << max(0, math.ceil(math.log2(n)))) if n <= self.max_batch else n
        idx = np.empty(padded, np.int64)
        idx[:n] = indices
        idx[n:] = indices[0]
        with torch.inference_mode():
            if self.cuda:
                with torch.cuda.stream(self._stream()):
                    t = torch.from_numpy(idx).pin_memory().to(self.device, non_blocking=True)
                    out = self.net(self.images.index_select(0, t)).argmax(1).to(torch.int32)
                    host = out.to("cpu", non_blocking=True)
                    torch.cuda.current_stream().synchronize()
            else:
                host = self.net(self.images.index_select(0, torch.from_numpy(idx))).argmax(1).to(torch.int32)
        return host.numpy()[:n]

    def warm_up(self, max_batch: int) -> None:
        """Run every padded batch shape once or twice, so no shape is first seen while timed."""
        self.max_batch = max_batch
        sizes = sorted({min(max_batch, 1 << k) for k in range(max_batch.bit_length() + 1)})
        for b in sizes:
            for _ in range(2):
                self.infer(np.arange(b) % self.images.shape[0])

    def probe(self, batch: int, iters: int) -> float:
        """Samples per second at `batch`, after a warm-up, on a worker thread as the SUT runs it
        (on a busy CPU, torch in the main thread measured 5-10x slower than in a fresh thread)."""
        result: list[float] = []

        def measure() -> None:
            self.warm_up(batch)
            idx = np.arange(batch) % self.images.shape[0]
            t0 = time.perf_counter()
            for _ in range(iters):
                self.infer(idx)
            result.append(batch * iters / (time.perf_counter() - t0))

        t = threading.Thread(target=measure, name=f"probe-{batch}")
        t.start()
        t.join()
        return result[0]


# --- the SUT and QSL both engines drive ------------------------------------------------------------


class TorchSUT:
    def __init__(self, runner: Runner, complete: Complete, workers: int) -> None:
        self.runner = runner
        self.batcher = DynamicBatcher(
            runner.infer, complete, max_batch=runner.max_batch, workers=workers, name="resnet50"
        )

    @property
    def name(self) -> str:
        return f"resnet50-{self.runner.device.type}"

    def issue_query(self, samples: Any) -> None:
        n = len(samples)
        self.batcher.submit(
            np.fromiter((s.id for s in samples), np.int64, n),
            np.fromiter((s.index for s in samples), np.int64, n),
        )

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self.batcher.submit(ids, indices)

    def flush_queries(self) -> None:
        self.batcher.flush()


class ResidentQSL:
    """The images already live on the device; loading only records what the engine asked for."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.loaded = 0

    name = "random-images"

    @property
    def total_sample_count(self) -> int:
        return self.count

    @property
    def performance_sample_count(self) -> int:
        return self.count

    def load_samples(self, indices: Any) -> None:
        self.loaded += len(indices)

    def unload_samples(self, indices: Any) -> None:
        self.loaded -= len(indices)


# --- one run on each engine -------------------------------------------------------------------------


def read_summary(path: Path, percentile: float) -> dict[str, Any]:
    text = path.read_text()

    def num(label: str) -> float | None:
        m = re.search(rf"^{re.escape(label)}\s*:\s*([0-9.eE+-]+)", text, re.M)
        return float(m.group(1)) if m else None

    valid = re.search(r"^Result is\s*:\s*(\w+)", text, re.M)
    return {
        "valid": bool(valid and valid.group(1) == "VALID"),
        "samples_per_s": num("Samples per second"),
        "completed_per_s": num("Completed samples per second"),
        "pct_ns": num(f"{percentile * 100:.2f} percentile latency (ns)"),
    }


def run_engine(
    engine: str, scenario: str, runner: Runner, args: argparse.Namespace, outdir: Path, qps: float
) -> dict[str, Any]:
    outdir.mkdir(parents=True, exist_ok=True)
    fields = {
        "min_duration_ms": args.duration_ms,
        "min_query_count": args.min_queries,
        "offline_expected_qps": qps,
        "server_target_qps": qps,
        "server_target_latency_ns": int(args.latency_ms * 1e6),
        "server_target_latency_percentile": args.percentile,
    }
    qsl = ResidentQSL(args.perf_count)
    if engine == "proctor":
        from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test

        sut = TorchSUT(runner, complete_arrays, args.workers)
        settings = TestSettings(scenario=Scenario(scenario), mode=TestMode.PERFORMANCE_ONLY, **fields)
        try:
            run_test(
                sut,
                qsl,
                settings,
                LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False),
                audit_config=None,
            )
        finally:
            sut.batcher.close()
    else:
        import mlperf_loadgen as lg

        sut = TorchSUT(runner, official_complete, args.workers)
        h_sut = lg.ConstructFastSUT(
            lambda ids, idx: sut.issue_query_arrays(np.asarray(ids, np.int64), np.asarray(idx, np.int64)),
            sut.flush_queries,
        )
        h_qsl = lg.ConstructQSL(
            qsl.total_sample_count, qsl.performance_sample_count, qsl.load_samples, qsl.unload_samples
        )
        settings = lg.TestSettings()
        settings.scenario = getattr(lg.TestScenario, scenario)
        settings.mode = lg.TestMode.PerformanceOnly
        for key, value in fields.items():
            setattr(settings, key, value)
        log = lg.LogSettings()
        log.log_output.outdir = str(outdir)
        log.enable_trace = False
        try:
            lg.StartTestWithLogSettings(h_sut, h_qsl, settings, log, str(outdir / "no-audit.config"))
        finally:
            lg.DestroyQSL(h_qsl)
            lg.DestroySUT(h_sut)
            sut.batcher.close()
    result = read_summary(outdir / "mlperf_log_summary.txt", args.percentile)
    result["mean_batch"] = sut.batcher.samples / max(1, sut.batcher.batches)
    return result


def server_search(
    engine: str, runner: Runner, args: argparse.Namespace, outdir: Path, start: float
) -> tuple[float, list[tuple[float, bool, float | None]]]:
    lo, hi, qps, probes = 0.0, math.inf, max(start, 1.0), []
    for k in range(args.server_probes):
        r = run_engine(engine, "Server", runner, args, outdir / f"server-{k}", qps)
        probes.append((qps, r["valid"], r["pct_ns"]))
        print(
            f"  {engine:8s} Server probe {k + 1}: {qps:10.1f} QPS -> {'VALID' if r['valid'] else 'INVALID'}"
            f" (p{args.percentile * 100:g} {(r['pct_ns'] or 0) / 1e6:.2f} ms, mean batch {r['mean_batch']:.1f})",
            flush=True,
        )
        if r["valid"]:
            lo = max(lo, qps)
            qps = qps * 1.5 if math.isinf(hi) else (lo + hi) / 2
        else:
            hi = min(hi, qps)
            qps = (lo + hi) / 2 if lo else qps / 2
    return lo, probes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto", help="auto | cuda | cpu")
    ap.add_argument("--engines", default="proctor,official")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--outdir", type=Path, default=Path("gpu_offline_server_logs"))
    ap.add_argument("--json", type=Path, help="also write the results here")
    for key, value in SCALE["cuda"].items():
        ap.add_argument(
            f"--{key.replace('_', '-')}",
            type=type(value),
            default=None,
            help=f"GPU default {value}, CPU default {SCALE['cpu'][key]}",
        )
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: this script needs torch (CUDA build for the GPU run)", file=sys.stderr)
        return 2
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    for key, value in SCALE["cuda" if device == "cuda" else "cpu"].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    engines = [e for e in args.engines.split(",") if e]
    if "official" in engines:
        try:
            import mlperf_loadgen  # noqa: F401
        except ImportError:
            print("warning: mlperf_loadgen is not installed; running proctor's engine only", file=sys.stderr)
            engines.remove("official")

    runner = Runner(torch, device, args.dtype, args.image_size, args.perf_count)
    hw = torch.cuda.get_device_name(runner.device) if runner.cuda else "CPU"
    print(
        f"device {hw}; torch {torch.__version__}; ResNet-50 from {runner.source}; {args.dtype}, channels-last; "
        f"{args.perf_count} images {args.image_size}x{args.image_size}",
        flush=True,
    )
    probe = {b: runner.probe(b, 20 if runner.cuda else 8) for b in map(int, args.batches.split(","))}
    batch = max(probe, key=probe.get)
    print(
        "batch probe (samples/s): "
        + ", ".join(f"{b}: {v:.0f}" for b, v in probe.items())
        + f" -> batch {batch}"
    )
    runner.warm_up(batch)

    results: dict[str, dict[str, Any]] = {}
    for engine in engines:
        off = run_engine(engine, "Offline", runner, args, args.outdir / engine / "offline", probe[batch])
        print(
            f"  {engine:8s} Offline: {off['samples_per_s']:.1f} samples/s ({'VALID' if off['valid'] else 'INVALID'},"
            f" mean batch {off['mean_batch']:.1f})",
            flush=True,
        )
        peak, probes = server_search(engine, runner, args, args.outdir / engine, 0.5 * probe[batch])
        results[engine] = {
            "offline_samples_per_s": off["samples_per_s"],
            "offline_valid": off["valid"],
            "server_max_valid_qps": peak,
            "server_probes": probes,
        }

    print(
        f"\nResNet-50 {args.dtype} on {hw}, batch {batch}, Server bound {args.latency_ms:g} ms at "
        f"p{args.percentile * 100:g}, runs of {args.duration_ms} ms"
    )
    print(f"{'engine':10s} {'Offline samples/s':>18s} {'Server max valid QPS':>22s}")
    for engine, r in results.items():
        print(f"{engine:10s} {r['offline_samples_per_s'] or 0:18.1f} {r['server_max_valid_qps']:22.1f}")
    if len(results) == 2:
        p, o = results["proctor"], results["official"]
        off_ratio = (p["offline_samples_per_s"] or 0) / (o["offline_samples_per_s"] or math.nan)
        srv_ratio = (
            p["server_max_valid_qps"] / o["server_max_valid_qps"] if o["server_max_valid_qps"] else math.nan
        )
        print(f"{'ratio':10s} {off_ratio:18.3f} {srv_ratio:22.3f}   (proctor / official)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "device": hw,
                    "torch": torch.__version__,
                    "model_source": runner.source,
                    "dtype": args.dtype,
                    "batch": batch,
                    "batch_probe": probe,
                    "settings": {k: v for k, v in vars(args).items() if k in SCALE["cpu"]},
                    "results": results,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
