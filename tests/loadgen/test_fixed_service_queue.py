"""FixedServiceQueue (suts/synthetic.py): the find-peak bench's SUT. Its finish times are virtual
(max(arrival, previous finish) + service), so a burst of k queries spans at least k service times
and completes in arrival order whatever the machine's load."""

from __future__ import annotations

import threading

from proctor.suts.synthetic import FixedServiceQueue


def test_a_burst_is_served_one_after_another_in_order() -> None:
    done: list[int] = []
    lock = threading.Lock()

    def complete(item: int) -> None:
        with lock:
            done.append(item)

    q = FixedServiceQueue(0.002, complete)
    finishes = []
    for k in range(5):
        q.put(k)
        finishes.append(q._last_finish)
    q.close()  # completes what is queued first
    assert done == [0, 1, 2, 3, 4]
    steps = [b - a for a, b in zip(finishes, finishes[1:], strict=False)]
    # each finish is at least one service time after the previous one (exactly one when the next
    # query arrived before it), never earlier, however late the completing thread woke
    assert q.service_ns == 2_000_000
    assert all(s >= q.service_ns for s in steps)
