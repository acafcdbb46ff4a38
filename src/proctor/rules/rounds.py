"""The submission rounds proctor knows and what each one fixes apart from the benchmark table: a
module of its own so the command line's `--round` options load without the tables."""

from __future__ import annotations

# Seeds come from the round's mlperf.conf ("announced four weeks before the submission deadline",
# §Non-determinism is restricted); the checker compares effective_*_rng_seed against them.
SEEDS: dict[str, tuple[int, int, int]] = {
    "v4.1": (3066443479025735752, 10688027786191513374, 14962580496156340209),
    "v6.0": (2465351861681999779, 14276810075590677512, 3936089224930324775),
    "v6.1": (2085463073848966840, 2747215439041700203, 16159082839903944936),
}
CURRENT_ROUND = "v6.1"
SEED_KEYS = ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")


__all__ = ["CURRENT_ROUND", "SEEDS", "SEED_KEYS"]
