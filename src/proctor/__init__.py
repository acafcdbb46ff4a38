"""proctor: run ML benchmarks by the MLPerf Inference and Training rules, measure, and check."""

__version__ = "0.1.0"
__all__ = ["__version__"]
