"""`proctor demo`: one benchmark round on the reference workloads, from model to checked result.

The application layer, built only from the APIs a user has (the run session, the audits, the
submission and training packagers, the checkers); no workload depends on it. Inference
(`inference.py`): `digits` in Offline, Server and SingleStream (performance and accuracy runs each,
and the TEST01 and TEST04 compliance audits) through proctor's load generator, the accuracy script,
then `proctor submission package` builds the tree and the submission checker checks it. Training
(`training.py`): N runs of `digits_train`, `proctor training package`, then compliance, seeds, RCP
(the shipped reference RCPs), the olympic score and the package checker. Everything lands in one
folder, in the official layouts:

    <output>/inference/closed/<submitter>/{systems,src,results}/...  (the current round's layout;
                                         the audits and measurements sit in each result's folder)
    <output>/work/runs/digits/<scenario>/  the runs the tree is packaged from
    <output>/training/<submitter>/{systems,benchmarks,results/<system>/digits_train/result_*.txt}
    <output>/work/training_runs/           the runs the training package is made from
    <output>/demo_report.json        the final table as data (`table.py`: one row per result)

The default demo is short on purpose (each performance run lasts seconds, not the rules' 600 s), so
the submission checker must report exactly one broken rule per performance result, `min_duration`
(on the result's run and on its audit runs), and nothing else; `--full` uses the rules' durations and
every check passes. Timed verdicts (a Server latency bound, an audit's performance comparison) are
expected as the run itself measured them. The report says for each row whether that is what
happened (`as_expected`).

Ctrl-C stops within a second (`interrupt.py`): the engine stops issuing and writes the logs marked
incomplete, the run session closes the SUT, and `DemoInterrupted` carries where the partial output
is.
"""

from __future__ import annotations

from proctor.app.demo.inference import SCENARIOS, Sizing, inference_settings, measured_rules, size_inference
from proctor.app.demo.job import run_demo
from proctor.app.demo.options import SUBMITTER, SYSTEM, DemoOptions, Durations
from proctor.app.demo.systems import system_description, training_system_description
from proctor.app.demo.table import (
    DemoInterrupted,
    DemoReport,
    Row,
    closing_lines,
    output_paths,
    render_table,
    verdict_line,
    why_notes,
)
from proctor.app.demo.training import training_check_commands

__all__ = [
    "SCENARIOS",
    "SUBMITTER",
    "SYSTEM",
    "DemoInterrupted",
    "DemoOptions",
    "DemoReport",
    "Durations",
    "Row",
    "Sizing",
    "closing_lines",
    "inference_settings",
    "measured_rules",
    "output_paths",
    "render_table",
    "run_demo",
    "size_inference",
    "system_description",
    "training_check_commands",
    "training_system_description",
    "verdict_line",
    "why_notes",
]
