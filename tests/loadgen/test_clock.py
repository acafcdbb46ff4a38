"""MonotonicClock.sleep_until's adaptive spin, played on a fake host (no wall time measured)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.loadgen.clock import (
    PREEMPTED_NS,
    SPARSE_SPIN_SHARE,
    SPIN_BACKOFF_MAX,
    SPIN_MAX_LATE,
    SPIN_MAX_NS,
    SPIN_MIN_WAITS,
    SPIN_PAD_NS,
    SPIN_WINDOW,
    SPIN_WINDOW_NS,
    ManualClock,
    MonotonicClock,
    host_crowded,
)

US = 1_000
MARGIN = 30 * US
GAP = 500 * US  # between deadlines


class FakeHost:
    """A clock and a sleep: a real sleep wakes `overshoot_ns` past its target; sleep(0) costs 1 us."""

    def __init__(self, overshoot_ns: int = 10 * US) -> None:
        self.t = 0
        self.overshoot_ns = overshoot_ns
        self.sleeps = 0
        self.spins = 0

    def now(self) -> int:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds == 0:
            self.spins += 1
            self.t += 1 * US
            return
        self.sleeps += 1
        self.t += round(seconds * 1e9) + self.overshoot_ns


def waits(clock: MonotonicClock, host: FakeHost, n: int, gap: int = GAP) -> list[int]:
    """n waits `gap` apart; how late each ended."""
    late = []
    for _ in range(n):
        due = host.t + gap
        clock.sleep_until(due)
        late.append(host.t - due)
    return late


def make(overshoot_ns: int = 10 * US, crowded: list[bool | None] | None = None) -> tuple[MonotonicClock, FakeHost]:
    """A clock on a fake host; `crowded[0]` is what the host's load says at each window's end
    (a list, so a test can change it between windows)."""
    host = FakeHost(overshoot_ns)
    load = crowded if crowded is not None else [False]
    return MonotonicClock(MARGIN, now_ns=host.now, sleep=host.sleep, crowded=lambda: load[0]), host


def test_starts_sleeping_to_the_deadline_without_a_spin() -> None:
    clock, host = make()
    late = waits(clock, host, SPIN_WINDOW - 1)
    assert clock.margin_ns == 0
    assert host.spins == 0
    assert set(late) == {10 * US}  # the host's wake-up cost, nothing spun away


def test_a_precise_window_turns_the_spin_on() -> None:
    clock, host = make()
    waits(clock, host, SPIN_WINDOW)
    assert clock.margin_ns == MARGIN
    late = waits(clock, host, 10)
    # sleeps to 30 us before, wakes 10 us later, spins the last 20 us in 1 us steps
    assert late == [0] * 10
    assert host.spins == 10 * 20


def test_preempted_waits_turn_the_spin_off_for_the_next_window() -> None:
    clock, host = make()
    waits(clock, host, SPIN_WINDOW)
    assert clock.margin_ns == MARGIN
    host.overshoot_ns = MARGIN + PREEMPTED_NS + 1  # a time slice lost on every wake
    waits(clock, host, SPIN_MAX_LATE + 1)
    assert clock.margin_ns == MARGIN  # decided per window, never from a few waits
    host.overshoot_ns = 10 * US
    waits(clock, host, SPIN_WINDOW - SPIN_MAX_LATE - 1)
    assert clock.margin_ns == 0
    spins = host.spins
    waits(clock, host, SPIN_WINDOW)  # a failed trial: two precise windows to come back
    assert clock.margin_ns == 0
    waits(clock, host, SPIN_WINDOW)
    assert host.spins == spins
    assert clock.margin_ns == MARGIN


def test_each_failed_trial_doubles_the_precise_windows_needed_up_to_a_cap() -> None:
    clock, host = make()
    needed = []
    for _ in range(9):
        n = 0
        while not clock.precise:
            waits(clock, host, SPIN_WINDOW)
            n += 1
        needed.append(n)
        host.overshoot_ns = MARGIN + PREEMPTED_NS + 1
        waits(clock, host, SPIN_WINDOW)  # one late window while spinning: off again
        host.overshoot_ns = 10 * US
        assert not clock.precise
    assert needed == [1, 2, 4, 8, 16, 32, 64, 64, 64][: len(needed)]
    assert SPIN_BACKOFF_MAX == 64


def test_a_late_window_restarts_the_count_while_off() -> None:
    clock, host = make()
    waits(clock, host, SPIN_WINDOW)
    host.overshoot_ns = MARGIN + PREEMPTED_NS + 1
    waits(clock, host, SPIN_WINDOW)  # off; 2 clean windows needed now
    host.overshoot_ns = 10 * US
    waits(clock, host, SPIN_WINDOW)
    clock.note_late()
    waits(clock, host, SPIN_WINDOW - 1)  # late: the count starts over
    waits(clock, host, SPIN_WINDOW)
    assert not clock.precise
    waits(clock, host, SPIN_WINDOW)
    assert clock.precise


def test_a_window_with_few_late_waits_keeps_spinning() -> None:
    clock, host = make()
    waits(clock, host, SPIN_WINDOW)
    host.overshoot_ns = MARGIN + PREEMPTED_NS + 1
    waits(clock, host, SPIN_MAX_LATE)
    host.overshoot_ns = 10 * US
    waits(clock, host, SPIN_WINDOW - SPIN_MAX_LATE)
    assert clock.margin_ns == MARGIN


@pytest.mark.parametrize("overshoot_ns", [-40 * US, -1, 0, 5 * US, 50 * US, 5_000 * US])
def test_never_returns_before_the_deadline(overshoot_ns: int) -> None:
    clock, host = make(overshoot_ns)
    assert min(waits(clock, host, 2 * SPIN_WINDOW + 3)) >= 0


def test_a_deadline_already_past_returns_at_once_and_teaches_nothing() -> None:
    clock, host = make()
    host.t = 10_000 * US
    for _ in range(3 * SPIN_WINDOW):
        clock.sleep_until(host.t - 1)
    assert (host.sleeps, host.spins, host.t, clock.margin_ns) == (0, 0, 10_000 * US, 0)


def test_real_clock_sleeps_to_the_deadline() -> None:
    clock = MonotonicClock(MARGIN)
    due = clock.now_ns() + 2_000 * US
    clock.sleep_until(due)
    assert clock.now_ns() >= due


def test_manual_clock_jumps() -> None:
    clock = ManualClock(start_ns=100)
    clock.sleep_until(50)
    assert clock.now_ns() == 100
    clock.sleep_until(500)
    clock.advance(7)
    assert clock.now_ns() == 507


def test_on_precise_is_told_each_change_only() -> None:
    clock, host = make()
    told: list[bool] = []
    clock.on_precise = told.append
    waits(clock, host, 3 * SPIN_WINDOW)  # precise, precise, precise
    assert told == [True]
    host.overshoot_ns = MARGIN + PREEMPTED_NS + 1
    waits(clock, host, 2 * SPIN_WINDOW)
    assert told == [True, False]
    assert not clock.precise and clock.margin_ns == 0


def _slack() -> int:
    from proctor.loadgen.issuer import PR_GET_TIMERSLACK, _prctl

    return int(_prctl()(PR_GET_TIMERSLACK, 0, 0, 0, 0))


def test_timer_slack_follows_the_adaptive_spin() -> None:
    from proctor.loadgen.issuer import ISSUE_TIMER_SLACK_NS, _prctl, fine_timer_slack

    if _prctl() is None:
        pytest.skip("prctl timer slack is Linux only")
    before = _slack()
    assert before != ISSUE_TIMER_SLACK_NS
    with fine_timer_slack():  # no adaptive clock: fine for the whole block
        assert _slack() == ISSUE_TIMER_SLACK_NS
    assert _slack() == before
    clock, _ = make()
    with fine_timer_slack(clock):
        assert _slack() == before  # starts sleeping: the thread's own slack
        assert clock.on_precise is not None
        clock.on_precise(True)
        assert _slack() == ISSUE_TIMER_SLACK_NS
        clock.on_precise(False)
        assert _slack() == before
        clock.on_precise(True)
    assert _slack() == before
    assert clock.on_precise is None


def test_arrivals_found_overdue_count_as_late_waits() -> None:
    clock, host = make()
    waits(clock, host, SPIN_WINDOW)
    assert clock.precise
    clock.note_late()  # preempted while running: no sleep saw it
    waits(clock, host, SPIN_WINDOW - 1)
    assert not clock.precise
    for _ in range(SPIN_WINDOW):
        clock.note_late()
    assert not clock.precise


def test_no_spin_margin_never_turns_precise() -> None:
    host = FakeHost()
    clock = MonotonicClock(0, now_ns=host.now, sleep=host.sleep, crowded=lambda: False)
    told: list[bool] = []
    clock.on_precise = told.append
    waits(clock, host, 4 * SPIN_WINDOW)
    assert (told, clock.precise, host.spins) == ([], False, 0)


def test_at_low_rates_a_window_closes_on_time_with_enough_waits() -> None:
    """4 queries/s: a window is a second's waits (at least SPIN_MIN_WAITS), not 256 of them."""
    clock, host = make()
    gap = SPIN_WINDOW_NS // 4  # 250 ms apart
    for _ in range(SPIN_MIN_WAITS - 1):
        clock.sleep_until(host.t + gap)
    assert clock.margin_ns == 0  # over a second, but too few waits to judge
    clock.sleep_until(host.t + gap)
    assert clock.margin_ns == MARGIN  # 10 us wake-ups + the pad: the clock's own margin


def test_sparse_waits_learn_a_spin_that_covers_the_wake_up() -> None:
    """At 4 queries/s the wake-up from a long sleep is the slow one (150 us here): after one window
    the spin starts that much (its p90, plus the pad) early, and the arrivals leave on time."""
    clock, host = make(overshoot_ns=150 * US)
    gap = SPIN_WINDOW_NS // 4
    late = waits(clock, host, SPIN_MIN_WAITS, gap)
    assert set(late) == {150 * US}
    assert clock.margin_ns == 150 * US + SPIN_PAD_NS
    assert waits(clock, host, 3 * SPIN_MIN_WAITS, gap) == [0] * (3 * SPIN_MIN_WAITS)
    assert clock.margin_ns == 150 * US + SPIN_PAD_NS  # learned from the sleeps to the margin, the same cost


def test_sparse_waits_late_beyond_a_slice_keep_the_spin_on_its_cap() -> None:
    """Preempted wake-ups at a low rate do not turn the spin off (it is a small share of the thread's
    time): they lengthen it, up to SPARSE_SPIN_SHARE of the mean wait."""
    clock, host = make(overshoot_ns=2 * PREEMPTED_NS)
    gap = 20_000 * US  # 50 queries/s: the cap is 1 % of 20 ms
    waits(clock, host, SPIN_MIN_WAITS + 50, gap)
    assert clock.precise and clock.margin_ns == int(gap * SPARSE_SPIN_SHARE)
    host.overshoot_ns = 10 * SPIN_MAX_NS
    waits(clock, host, 2 * SPIN_MIN_WAITS + 100, SPIN_WINDOW_NS)
    assert clock.precise and clock.margin_ns == SPIN_MAX_NS


def test_sparse_waits_on_a_crowded_host_sleep() -> None:
    load: list[bool | None] = [True]
    clock, host = make(overshoot_ns=150 * US, crowded=load)
    gap = SPIN_WINDOW_NS // 4
    waits(clock, host, 4 * SPIN_MIN_WAITS, gap)
    assert (clock.precise, host.spins) == (False, 0)
    load[0] = False
    waits(clock, host, SPIN_MIN_WAITS, gap)
    assert clock.precise
    load[0] = True
    waits(clock, host, SPIN_MIN_WAITS, gap)
    assert not clock.precise and clock.margin_ns == 0


def test_dense_waits_keep_the_fixed_margin_and_the_strict_windows() -> None:
    """Above 100 queries/s a long wake-up does not lengthen the spin: preempted waits turn it off."""
    clock, host = make(overshoot_ns=150 * US)
    waits(clock, host, SPIN_WINDOW)
    assert clock.margin_ns == MARGIN


def test_a_crowded_host_never_turns_the_spin_on() -> None:
    """Every CPU wanted (a hog per core): the waits are punctual, yet the spin stays off."""
    clock, host = make(crowded=[True])
    late = waits(clock, host, 8 * SPIN_WINDOW)
    assert max(late) < PREEMPTED_NS
    assert (clock.precise, host.spins) == (False, 0)


def test_an_unknown_load_leaves_the_choice_to_lateness() -> None:
    clock, host = make(crowded=[None])
    waits(clock, host, SPIN_WINDOW)
    assert clock.precise


def test_a_host_crowded_while_spinning_turns_the_spin_off_and_backs_off() -> None:
    load: list[bool | None] = [False]
    clock, host = make(crowded=load)
    waits(clock, host, SPIN_WINDOW)
    assert clock.precise
    load[0] = True
    waits(clock, host, SPIN_WINDOW)
    assert not clock.precise
    load[0] = False
    waits(clock, host, SPIN_WINDOW)  # one clean window is no longer enough: the trial failed
    assert not clock.precise
    waits(clock, host, SPIN_WINDOW)
    assert clock.precise


@pytest.mark.parametrize(
    ("text", "cpus", "expected"),
    [
        (b"0.91 1.21 1.34 1/65 2345\n", 2, False),
        (b"2.10 2.05 1.90 2/70 2345\n", 2, False),  # every runnable task has a CPU
        (b"3.00 2.90 2.00 3/70 2345\n", 2, True),
        (b"3.00 2.90 2.00 3/70 2345\n", 4, False),
        (b"", 2, None),
        (b"0.1 0.1 0.1 x/70 1\n", 2, None),
        (b"0.1 0.1 0.1\n", 2, None),
    ],
)
def test_host_crowded_reads_the_runnable_count(tmp_path, text: bytes, cpus: int, expected: bool | None) -> None:
    f = tmp_path / "loadavg"
    f.write_bytes(text)
    assert host_crowded(cpus, str(f)) is expected


def test_host_crowded_without_the_file_is_unknown(tmp_path) -> None:
    assert host_crowded(2, str(tmp_path / "absent")) is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.binary(max_size=300), cpus=st.integers(min_value=1, max_value=512))
def test_host_crowded_on_any_bytes_gives_a_verdict_or_none(tmp_path, text: bytes, cpus: int) -> None:
    f = tmp_path / "loadavg"
    f.write_bytes(text)
    assert host_crowded(cpus, str(f)) in (True, False, None)


def test_a_sparse_spin_runs_the_warm_up_once_first_and_starts_earlier_for_it() -> None:
    from proctor.loadgen.clock import WARM_LEAD_NS

    clock, host = make(overshoot_ns=150 * US)
    calls: list[int] = []
    clock.on_spin = lambda: calls.append(host.t)
    gap = SPIN_WINDOW_NS // 4
    waits(clock, host, SPIN_MIN_WAITS, gap)
    assert calls == []  # the first window sleeps to each arrival: no spin, no warm-up
    assert clock.margin_ns == 150 * US + SPIN_PAD_NS + WARM_LEAD_NS
    late = waits(clock, host, 5, gap)
    assert late == [0] * 5 and len(calls) == 5  # once per arrival, inside the spin, which still ends on time


def test_dense_waits_never_run_the_warm_up() -> None:
    clock, host = make()
    calls: list[int] = []
    clock.on_spin = lambda: calls.append(host.t)
    waits(clock, host, 3 * SPIN_WINDOW)
    assert clock.precise and calls == []


def test_warm_spins_hooks_a_warmable_sut_for_the_run_only() -> None:
    from proctor.loadgen.issuer import warm_spins

    class Warmable:
        def __init__(self) -> None:
            self.n = 0

        def issue_query(self, samples: list) -> None: ...

        def warm_issue(self) -> None:
            self.n += 1

    class Plain:
        def issue_query(self, samples: list) -> None: ...

    clock = MonotonicClock(MARGIN)
    sut = Warmable()
    with warm_spins(clock, sut):  # type: ignore[arg-type]
        assert clock.on_spin is not None
        clock.on_spin()
    assert clock.on_spin is None and sut.n == 1
    with warm_spins(clock, Plain()):  # type: ignore[arg-type]
        assert clock.on_spin is None
    with warm_spins(ManualClock(), sut):  # type: ignore[arg-type]
        pass
