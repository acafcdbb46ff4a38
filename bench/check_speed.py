"""Time `proctor check submission` against the official submission checker on published trees, and
every command's `--help` (issue 33 §3).

    python bench/check_speed.py v4.1:closed/RedHat v4.1:closed/Cisco v5.1:closed/NVIDIA [-n 5]
    python bench/check_speed.py --help-times [-n 5]
    python bench/check_speed.py v4.1:closed/RedHat --startup [-n 5]
    python bench/check_speed.py v4.1:closed/RedHat v5.1:closed/CoreWeave --instructions

A tree is ROUND:DIVISION/SUBMITTER inside the round's results checkout, named by `--results
ROUND=PATH` or PROCTOR_RESULTS_V41 / _V50 / _V51 (as tests/checks/test_published_rounds.py reads
them); the official checker is the one of a mlcommons/inference checkout at the round's tag
(`--official ROUND=PATH` or PROCTOR_INFERENCE_REPO_V41 / _V50 / _V51).

Per tree, each repeat runs both tools, in alternating order (the official first on even repeats):
- as a user runs them, start-up included: `proctor check submission DIR --round R --json` and
  `python submission_checker.py --input RESULTS --version R --submitter S` (a subprocess each);
- in-process: a fresh child imports the checker, then times one call (proctor's `check_submission`,
  the official's `main()`), so the time excludes the interpreter and the imports at the top but
  includes what loads on first use.
The table gives the medians, and the ratio official / proctor (above 1: proctor is faster), with the
load average before and after. proctor's package and the official's modules are byte-compiled first
(an install's state; see _compile). `--json-out DIR` also keeps proctor's JSON report per tree, to diff the
findings of two versions. No timed assertion anywhere: a shared machine's figures vary.

`--instructions` counts, instead of timing, the machine instructions each tool's run executes, start-up
included (valgrind's callgrind: the same count on every run, whatever the machine's load or a shared
host's neighbours; about 50 times slower, so for small trees).

`--help-times` times `proctor ... --help` for every command and subcommand (goal: <= 0.3 s each).
Each time is given as wall seconds and as the child's CPU seconds (user + system), which a loaded
machine inflates far less than the wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUND_ENV = {"v4.1": "V41", "v5.0": "V50", "v5.1": "V51"}
HELP_GOAL_S = 0.3


def _proctor_cmd() -> list[str]:
    """The `proctor` console script beside this interpreter (what a user runs), else `-m proctor`."""
    script = Path(sys.executable).with_name("proctor")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "proctor"]


def _checker_dir(official: Path) -> Path:
    return official / "tools" / "submission"


def _timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds (user + system) of the child, exit status, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, proc.returncode, proc.stdout


def _official_args(results: Path, version: str, submitter: str, csv: Path) -> list[str]:
    """The official checker on one submitter of a results checkout. A published root also holds
    README.md, run.sh, ... beside the division folders, which the official refuses (before it looks
    at any submitter) unless told to skip that check of the root."""
    return ["--input", str(results), "--version", version, "--submitter", submitter, "--csv", str(csv),
            "--skip-extra-files-in-root-check"]


# --- children: one in-process call each ----------------------------------------------------------
def child_proctor(tree: Path, version: str) -> dict[str, Any]:
    from proctor.checks.submission import check_submission

    t, c = time.perf_counter(), time.process_time()
    report = check_submission(tree, version)
    return {"s": time.perf_counter() - t, "cpu": time.process_time() - c, "valid": report.valid,
            "results": len(report.results)}


def child_official(official: Path, results: Path, version: str, submitter: str, csv: Path) -> dict[str, Any]:
    import logging

    folder = _checker_dir(official)
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    sys.argv = ["submission_checker.py", *_official_args(results, version, submitter, csv)]
    with contextlib.redirect_stdout(io.StringIO()):
        import submission_checker  # type: ignore[import-not-found]

        logging.disable(logging.CRITICAL)
        t, c = time.perf_counter(), time.process_time()
        rc = submission_checker.main()
    return {"s": time.perf_counter() - t, "cpu": time.process_time() - c, "valid": rc == 0}


# --startup's child: run as `python -c`, so nothing but what it names is loaded before proctor. It times
# proctor's imports on the `check submission` path and the first call, and within each the time
# CPython spends making dataclasses (dataclasses._process_class: the generated methods are compiled on
# every start), making proctor's records (typed_records._build, which compiles nothing) and compiling
# regular expressions (re._compile), and counts proctor's modules loaded.
STARTUP_CHILD = """
import dataclasses, json, re, sys, time
spent = {"dataclass": [0, 0.0], "record": [0, 0.0], "re": [0, 0.0]}
def timed(key, fn):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key][0] += 1
            spent[key][1] += time.perf_counter() - t
    return wrapper
dataclasses._process_class = timed("dataclass", dataclasses._process_class)
re._compile = timed("re", re._compile)
import proctor.typed_records as records  # a leaf: loads no other proctor module
records._build = timed("record", records._build)
def mine():
    return sum(1 for m in list(sys.modules) if m == "proctor" or m.startswith("proctor."))
def phase(fn):
    before = {k: list(v) for k, v in spent.items()}
    m, t, c = mine(), time.perf_counter(), time.process_time()
    fn()
    return {"s": time.perf_counter() - t, "cpu": time.process_time() - c, "modules": mine() - m,
            **{f"{k}_n": spent[k][0] - before[k][0] for k in spent},
            **{f"{k}_s": spent[k][1] - before[k][1] for k in spent}}
def imports():
    import proctor.cli.main  # noqa: F401
    import proctor.cli.tree_commands  # noqa: F401
    import proctor.checks.loadgen_origin  # noqa: F401
    import proctor.checks.submission  # noqa: F401
def call():
    from pathlib import Path
    from proctor.checks.submission import check_submission
    check_submission(Path(sys.argv[1]), sys.argv[2])
print(json.dumps({"imports": phase(imports), "call": phase(call)}))
"""


def print_startup(trees: list[tuple[str, Path, str]], n: int) -> None:
    """`--startup`: where proctor's start-up goes on the `check submission` path, medians of n children."""
    print(f"proctor check submission, start-up by part (medians of {n} fresh interpreters, CPU seconds); {_load()}")
    for spec, tree, rnd in trees:
        runs = []
        for _ in range(n):
            proc = subprocess.run([sys.executable, "-c", STARTUP_CHILD, str(tree), rnd], capture_output=True,
                                  text=True, check=True)
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        for part, what in (("imports", "imports at start"), ("call", "first call (loads the rest)")):
            med = {k: statistics.median(r[part][k] for r in runs) for k in runs[0][part]}
            print(f"  {spec:28s} {what:28s} {med['cpu']:6.3f} s: {med['modules']:3.0f} proctor modules, "
                  f"{med['dataclass_n']:3.0f} dataclasses made in {med['dataclass_s']:6.3f} s, "
                  f"{med['record_n']:3.0f} records in {med['record_s']:6.3f} s, "
                  f"regular expressions {med['re_s']:6.3f} s")
    print(_load())


def _compile(officials: Any) -> None:
    """Byte-compile proctor's package and the official checker's modules, as an install (or a first
    run) leaves them: with PYTHONDONTWRITEBYTECODE set, every start would compile them again. The
    official's script itself is compiled on every run, as `python submission_checker.py` always does."""
    import compileall

    import proctor

    compileall.compile_dir(str(Path(proctor.__file__).parent), quiet=1)
    for official in officials:
        compileall.compile_dir(str(_checker_dir(official)), quiet=1, maxlevels=0)


# --- the trees table ---------------------------------------------------------------------------------
def _paths(pairs: list[str], env: str) -> dict[str, Path]:
    out = {r: Path(os.environ[f"{env}_{v}"]) for r, v in ROUND_ENV.items() if os.environ.get(f"{env}_{v}")}
    for pair in pairs:
        rnd, _, path = pair.partition("=")
        out[rnd] = Path(path)
    return out


def _size(tree: Path) -> tuple[int, int]:
    """(files, bytes) below the tree (links not followed)."""
    files = size = 0
    for folder, _, names in os.walk(tree):
        for name in names:
            p = os.path.join(folder, name)
            if os.path.isfile(p) and not os.path.islink(p):
                files += 1
                size += os.path.getsize(p)
    return files, size


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def bench_tree(spec: str, results: dict[str, Path], officials: dict[str, Path], n: int,
               json_out: Path | None) -> dict[str, Any]:
    rnd, _, rel = spec.partition(":")
    root = results[rnd]
    tree = root / rel
    official = officials.get(rnd)
    submitter = Path(rel).name
    times: dict[str, list[float]] = {k: [] for k in ("p_sub", "o_sub", "p_in", "o_in")}
    cpus: dict[str, list[float]] = {k: [] for k in times}
    verdict: dict[str, Any] = {}
    me = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "summary.csv"
        for i in range(n):
            order = ("o", "p") if i % 2 == 0 else ("p", "o")
            for who in order:
                if who == "p":
                    s, c, rc, out = _timed([*_proctor_cmd(), "check", "submission", str(tree), "--round", rnd, "--json"])
                    times["p_sub"].append(s)
                    cpus["p_sub"].append(c)
                    verdict["proctor_rc"] = rc
                    if json_out is not None and i == 0:
                        json_out.mkdir(parents=True, exist_ok=True)
                        (json_out / f"{rnd}_{rel.replace('/', '_')}.json").write_text(out)
                    _, _, _, out = _timed([sys.executable, me, "--child", "proctor", str(tree), rnd])
                    child = json.loads(out.strip().splitlines()[-1])
                    times["p_in"].append(child["s"])
                    cpus["p_in"].append(child["cpu"])
                    verdict["results"] = child["results"]
                elif official is not None:
                    s, c, rc, _ = _timed([sys.executable, "submission_checker.py",
                                          *_official_args(root, rnd, submitter, csv)], cwd=_checker_dir(official))
                    times["o_sub"].append(s)
                    cpus["o_sub"].append(c)
                    verdict["official_rc"] = rc
                    _, _, _, out = _timed([sys.executable, me, "--child", "official", str(official), str(root), rnd,
                                           submitter, str(csv)])
                    child = json.loads(out.strip().splitlines()[-1])
                    times["o_in"].append(child["s"])
                    cpus["o_in"].append(child["cpu"])
    files, size = _size(tree)
    med = {k: statistics.median(v) if v else None for k, v in times.items()}
    med_cpu = {f"{k}_cpu": statistics.median(v) if v else None for k, v in cpus.items()}
    return {"tree": f"{rnd} {rel}", "files": files, "mb": size / 1e6, **med, **med_cpu, **verdict}


def _ratio(official: float | None, ours: float | None) -> str:
    return f"{official / ours:5.2f}x" if official and ours else "   n/a"


def _secs(v: float | None) -> str:
    return f"{v:7.3f}" if v is not None else "    n/a"


def print_trees(rows: list[dict[str, Any]], n: int) -> None:
    print(f"medians of {n} runs each, order alternated; ratio = official / proctor (> 1: proctor faster); "
          "wall seconds, then CPU seconds (user + system: what the machine's load changes least)")
    for what, suffix in (("wall", ""), ("CPU", "_cpu")):
        head = (f"{what:4s} {'tree':30s} {'results':>7s} {'files':>6s} {'MB':>7s} | {'proctor':>7s} {'official':>8s} "
                f"{'ratio':>6s} | {'in-proc':>7s} {'official':>8s} {'ratio':>6s} | exit p/o")
        print(head)
        print("-" * len(head))
        for r in rows:
            p_sub, o_sub, p_in, o_in = (r[k + suffix] for k in ("p_sub", "o_sub", "p_in", "o_in"))
            print(f"{what:4s} {r['tree']:30s} {r.get('results', 0):7d} {r['files']:6d} {r['mb']:7.1f} | "
                  f"{_secs(p_sub)} {_secs(o_sub):>8s} {_ratio(o_sub, p_sub):>6s} | {_secs(p_in)} "
                  f"{_secs(o_in):>8s} {_ratio(o_in, p_in):>6s} | {r.get('proctor_rc', '?')}/{r.get('official_rc', '-')}")


# --- instructions executed ----------------------------------------------------------------------------
def _instructions(cmd: list[str], cwd: Path | None = None) -> int:
    """The instructions `cmd` executes, counted by valgrind's callgrind (its summary line)."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd], cwd=cwd,
                          capture_output=True, text=True, check=False)
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise SystemExit(f"valgrind printed no count for {' '.join(cmd)}: {proc.stderr[-300:]}")


def print_instructions(trees: list[str], results: dict[str, Path], officials: dict[str, Path]) -> None:
    """`--instructions`: each tool's run of each tree once under callgrind; ratio = official / proctor."""
    print("instructions executed (valgrind callgrind; start-up included); ratio = official / proctor")
    print(f"{'tree':34s} {'proctor':>14s} {'official':>14s} {'ratio':>6s}")
    for spec in trees:
        rnd, _, rel = spec.partition(":")
        with tempfile.TemporaryDirectory() as tmp:
            ours = _instructions([*_proctor_cmd(), "check", "submission", str(results[rnd] / rel), "--round", rnd,
                                  "--json"])
            theirs = None
            if rnd in officials:
                args = _official_args(results[rnd], rnd, Path(rel).name, Path(tmp) / "summary.csv")
                theirs = _instructions([sys.executable, "submission_checker.py", *args], _checker_dir(officials[rnd]))
        print(f"{rnd + ' ' + rel:34s} {ours:14,d} {theirs or 0:14,d} {_ratio(theirs, ours):>6s}")


# --- --help of every command -----------------------------------------------------------------------
def command_paths() -> list[list[str]]:
    """Every command and subcommand, as the words before `--help`."""
    import typer

    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    out: list[list[str]] = [[]]

    def walk(cmd: Any, path: list[str]) -> None:
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if getattr(sub, "hidden", False):
                continue
            out.append([*path, name])
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


def print_help_times(n: int) -> None:
    paths = command_paths()
    print(f"`proctor ... --help`, median of {n} (goal <= {HELP_GOAL_S} s); {_load()}")
    worst = 0.0
    for path in paths:
        runs: list[float] = []
        cpu: list[float] = []
        for _ in range(n):
            s, c, rc, _ = _timed([*_proctor_cmd(), *path, "--help"])
            if rc != 0:
                sys.exit(f"proctor {' '.join(path)} --help exited {rc}")
            runs.append(s)
            cpu.append(c)
        med = statistics.median(runs)
        worst = max(worst, med)
        print(f"  {'proctor ' + ' '.join([*path, '--help']):56s} {med:6.3f} s wall {statistics.median(cpu):6.3f} s CPU"
              f"{'  OVER' if med > HELP_GOAL_S else ''}")
    print(f"slowest {worst:.3f} s; {_load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", help="ROUND:DIVISION/SUBMITTER, e.g. v4.1:closed/RedHat")
    ap.add_argument("-n", type=int, default=5, help="repeats per tool and tree")
    ap.add_argument("--results", action="append", default=[], metavar="ROUND=PATH",
                    help="a checkout of mlcommons/inference_results_ROUND")
    ap.add_argument("--official", action="append", default=[], metavar="ROUND=PATH",
                    help="a mlcommons/inference checkout at the round's tag (v4.1, v5.0.1, v5.1.1)")
    ap.add_argument("--json-out", type=Path, help="keep proctor's --json report of each tree here")
    ap.add_argument("--help-times", action="store_true", help="time every command's --help instead")
    ap.add_argument("--startup", action="store_true",
                    help="instead of the table: where proctor's start-up goes on each tree (imports, first call, "
                         "dataclasses made, regular expressions compiled)")
    ap.add_argument("--instructions", action="store_true",
                    help="instead of timing: the instructions each tool executes (valgrind; small trees)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "proctor":
            res = child_proctor(Path(rest[0]), rest[1])
        else:
            res = child_official(Path(rest[0]), Path(rest[1]), rest[2], rest[3], Path(rest[4]))
        print(json.dumps(res))
        return
    if args.help_times:
        print_help_times(args.n)
        return
    if not args.trees:
        ap.error("name at least one tree (ROUND:DIVISION/SUBMITTER) or --help-times")
    results, officials = _paths(args.results, "PROCTOR_RESULTS"), _paths(args.official, "PROCTOR_INFERENCE_REPO")
    for spec in args.trees:
        rnd = spec.partition(":")[0]
        if rnd not in results:
            ap.error(f"{spec}: no results checkout for {rnd}; give --results {rnd}=PATH")
        if not (results[rnd] / spec.partition(":")[2]).is_dir():
            ap.error(f"{spec}: no such folder in {results[rnd]}")
    _compile(officials.values())
    if args.startup:
        print_startup([(spec, results[spec.partition(":")[0]] / spec.partition(":")[2], spec.partition(":")[0])
                       for spec in args.trees], args.n)
        return
    if args.instructions:
        print_instructions(args.trees, results, officials)
        return
    print(_load())
    rows = [bench_tree(spec, results, officials, args.n, args.json_out) for spec in args.trees]
    print_trees(rows, args.n)
    print(_load())


if __name__ == "__main__":
    main()
