"""The GIL is released during simulations and sensitivity runs: another Python thread keeps
running while one runs. A GIL-holding call (sorting a list) is the control that shows the
measurement would catch a call that keeps the GIL.

The measurement uses CPU time, not the clock, so that a busy machine cannot fail it: while
the calls run (repeated up to a few tenths of a second of their thread's CPU time), the
other thread runs a pure-Python loop and samples at every iteration the calls' CPU clock
and its own. With the GIL released, both threads are runnable throughout and the scheduler
shares the cores between them alike however loaded the machine is, so the other thread's
CPU time is comparable to the calls'; with the GIL kept, it is close to none, and a
stretch of the call's CPU time passes with no iteration of the other thread. (On the clock,
a busy machine stops both threads alike, which would look like such a stretch.)"""

import random
import sys
import threading
import time

import numpy as np

import hybridopt

# CPU time (s) of repeated calls per measurement: long against the few milliseconds a
# loaded machine's scheduler can keep a runnable thread waiting
CALL_CPU = 0.3

# The other thread's CPU time over the calls', at least: about 1 when the threads share
# the cores alike (0.98–1.04 measured at load 3–7 on 2 cores), close to 0 when a call keeps
# the GIL (0.015–0.03 with the control, the same loads); a call keeping the GIL for half
# its time would give about 0.5
SHARE = 0.25


def progress_during(call, min_cpu=0.0):
    """Runs `call` in a thread (again, until it has used `min_cpu` s of its thread's CPU
    time, at least once) while this thread counts loop iterations, sampling at each the
    calling thread's CPU clock and its own. Returns the calls' CPU time (s), the number of
    calls, the iterations made meanwhile, this thread's CPU time over the calls', and the
    longest stretch of the calls' CPU time between two iterations (s)."""
    span = {}
    started = threading.Event()
    done = threading.Event()

    def work():
        started.set()
        c0 = time.thread_time()
        n = 0
        while n == 0 or time.thread_time() - c0 < min_cpu:
            call()
            n += 1
        span["cpu"] = (c0, time.thread_time())
        span["calls"] = n
        done.set()

    samples = []
    worker = threading.Thread(target=work)
    # hand the GIL over quickly (default 5 ms: this thread would run that long inside the
    # control's window before the sort begins), but not so often that this thread's
    # wake-ups while it waits for a GIL kept add up to CPU time of their own (at 0.1 ms
    # they made 2–8 % of the control's)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-3)
    try:
        worker.start()
        started.wait()
        clock = time.pthread_getcpuclockid(worker.ident)
        while not done.is_set():
            samples.append((time.clock_gettime(clock), time.thread_time()))
            sum(range(200))  # some pure-Python work
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    a, b = span["cpu"]
    inside = [(c, own) for c, own in samples if a < c < b]
    gaps = np.diff([a, *(c for c, _ in inside), b])
    own = inside[-1][1] - inside[0][1] if inside else 0.0
    return b - a, span["calls"], len(inside), own / (b - a), gaps.max()


def test_a_simulation_runs_while_another_thread_progresses(problems):
    p = hybridopt.Problem.from_file(problems / "five_bar_seed.toml")
    q = hybridopt.Problem.from_file(problems / "five_bar_identify.toml")
    p.simulate()  # warm-up
    for name, call in [("simulate", p.simulate),
                       ("direct", lambda: q.gradient(method="direct")),
                       ("fun_and_grad", lambda: p.fun_and_grad(p.x0, method="adjoint"))]:
        cpu, calls, count, share, gap = progress_during(call, CALL_CPU)
        print(f"{name}: {calls} calls, {cpu:.3f} s of CPU time; the other thread "
              f"{count} iterations, {share:.2f}× the calls' CPU time, longest stretch of "
              f"the calls' CPU time without one {gap * 1e3:.1f} ms")
        assert cpu / calls > 0.005, name  # each call long enough to measure
        assert count > 20, (name, count)
        assert share > SHARE, (name, share)
        assert gap < cpu / 3, (name, gap, cpu)


def test_the_measurement_catches_a_call_that_holds_the_gil():
    data = [random.random() for _ in range(1_000_000)]
    cpu, calls, count, share, gap = progress_during(lambda: sorted(data))
    print(f"sorted(): {cpu:.3f} s of CPU time; the other thread {count} iterations, "
          f"{share:.3f}× its CPU time, longest stretch without one {gap * 1e3:.1f} ms")
    assert calls == 1
    assert share < SHARE / 2, share
    assert gap > cpu / 2


def test_parallel_threads_give_the_sequential_results(problems):
    """Four threads evaluate two problems (one shared object) at once: the same numbers
    as one after the other."""
    from concurrent.futures import ThreadPoolExecutor

    a = hybridopt.Problem.from_file(problems / "locking_pendulum.toml")
    b = hybridopt.Problem.from_file(problems / "thrust_control.toml")
    calls = [(a, "adjoint"), (b, "adjoint"), (a, "direct"), (b, "direct")]
    sequential = [p.gradient(method=m).gradient for p, m in calls]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda c: c[0].gradient(method=c[1]).gradient, calls))
    for s, q in zip(sequential, parallel):
        assert np.array_equal(s, q)
