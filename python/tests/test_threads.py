"""The GIL is released during simulations and sensitivity runs: another Python thread keeps
running while one runs. A GIL-holding call (sorting a list) is the control that shows the
measurement would catch a call that keeps the GIL."""

import random
import sys
import threading
import time

import numpy as np

import hybridopt


def progress_during(call):
    """Runs `call` in a thread while this thread counts loop iterations; returns the call's
    duration, the iterations made during it, and the longest gap between them (s)."""
    span = {}
    done = threading.Event()

    def work():
        span["start"] = time.perf_counter()
        call()
        span["end"] = time.perf_counter()
        done.set()

    ticks = []
    worker = threading.Thread(target=work)
    # hand the GIL over quickly (default 5 ms), so that the gaps measure the call alone
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        worker.start()
        while not done.is_set():
            ticks.append(time.perf_counter())
            sum(range(200))  # some pure-Python work
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    a, b = span["start"], span["end"]
    inside = [t for t in ticks if a < t < b]
    gaps = np.diff([a, *inside, b])
    return b - a, len(inside), gaps.max()


def test_a_simulation_runs_while_another_thread_progresses(problems):
    p = hybridopt.Problem.from_file(problems / "five_bar_seed.toml")
    q = hybridopt.Problem.from_file(problems / "five_bar_identify.toml")
    p.simulate()  # warm-up
    for name, call in [("simulate", p.simulate),
                       ("direct", lambda: q.gradient(method="direct")),
                       ("fun_and_grad", lambda: p.fun_and_grad(p.x0, method="adjoint"))]:
        duration, count, gap = progress_during(call)
        print(f"{name}: {duration:.3f} s, {count} iterations of the other thread, "
              f"longest gap {gap * 1e3:.1f} ms")
        assert duration > 0.02, name
        assert count > 20, (name, count)
        assert gap < duration / 3, (name, gap, duration)


def test_the_measurement_catches_a_call_that_holds_the_gil():
    data = [random.random() for _ in range(400_000)]
    duration, count, gap = progress_during(lambda: sorted(data))
    print(f"sorted(): {duration:.3f} s, {count} iterations, longest gap {gap * 1e3:.1f} ms")
    assert gap > duration / 2


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
