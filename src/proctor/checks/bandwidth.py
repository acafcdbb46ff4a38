"""Minimum datacenter ingress/egress bandwidth from the rules' appendix formulas.

[[appendix-bw]]: minimum bandwidth (bytes/s) = throughput x per-sample input (or output) size, where
the size is a fixed element count x dtype_size (DLRMv3: a fixed byte count of int64 features). Rows
whose size is "negligible" only require a bandwidth "> 0": they report 0 and say so.
"""

from __future__ import annotations

from proctor.rules.inference import BW_EGRESS, BW_INGRESS, Bandwidth, Benchmark
from proctor.typed_records import field, record


@record(frozen=True, slots=True)
class BandwidthRequirement:
    benchmark: str
    throughput: float
    dtype_size: int
    ingress_bytes_per_s: float
    egress_bytes_per_s: float
    ingress_formula: str
    egress_formula: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "benchmark": self.benchmark,
            "throughput": self.throughput,
            "dtype_size": self.dtype_size,
            "ingress_bytes_per_s": self.ingress_bytes_per_s,
            "egress_bytes_per_s": self.egress_bytes_per_s,
            "ingress_formula": self.ingress_formula,
            "egress_formula": self.egress_formula,
            "notes": list(self.notes),
        }


def _side(name: str, bw: Bandwidth, throughput: float, dtype_size: int, notes: list[str]) -> float:
    if bw.negligible:
        notes.append(f"{name}: output/input size is negligible; the rules only require a bandwidth > 0")
    elif bw.note:
        notes.append(f"{name}: {bw.note}")
    return bw.bytes_per_second(throughput, dtype_size)


def minimum_bandwidth(benchmark: Benchmark, throughput: float, dtype_size: int) -> BandwidthRequirement:
    """Raises ValueError when the appendix has no row for the benchmark or inputs are not positive."""
    if benchmark.ingress is None or benchmark.egress is None:
        raise ValueError(f"{benchmark.display}: the bandwidth appendix has no row for this benchmark")
    if throughput < 0:
        raise ValueError("throughput must be >= 0 (samples per second)")
    if dtype_size <= 0:
        raise ValueError("dtype size must be a positive number of bytes")
    notes: list[str] = []
    ingress = _side("ingress", benchmark.ingress, throughput, dtype_size, notes)
    egress = _side("egress", benchmark.egress, throughput, dtype_size, notes)
    return BandwidthRequirement(
        benchmark=benchmark.name,
        throughput=throughput,
        dtype_size=dtype_size,
        ingress_bytes_per_s=ingress,
        egress_bytes_per_s=egress,
        ingress_formula=f"throughput x {benchmark.ingress.formula}"
        if not benchmark.ingress.negligible
        else "> 0",
        egress_formula=f"throughput x {benchmark.egress.formula}"
        if not benchmark.egress.negligible
        else "> 0",
        notes=notes + [f"source: {BW_INGRESS}; {BW_EGRESS}"],
    )
