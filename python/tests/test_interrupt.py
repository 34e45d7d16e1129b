"""Ctrl-C (SIGINT) during a long call raises KeyboardInterrupt within a fraction of the
call's time, writes no results folder, and the next call runs normally. Run in a child
process so that the signal reaches no one else."""

import subprocess
import sys
import textwrap


SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    import hybridopt
    p = hybridopt.Problem.from_file(sys.argv[1])
    out = os.path.join(sys.argv[2], "results")
    t0 = time.perf_counter()
    p.gradient(method="fd")
    full = time.perf_counter() - t0
    threading.Timer(0.1 * full, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.perf_counter()
    try:
        p.optimize(gradient="fd", max_iters=50, out=out)
        print("not interrupted")
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - t0:.3f} s; one fd gradient takes {full:.3f} s")
    print("results written:", os.path.exists(out))
    g = p.gradient(method="fd")
    print("next call:", g.cost)
""")


def test_ctrl_c_interrupts_a_call(problems, tmp_path):
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(problems / "five_bar_seed.toml"),
                        str(tmp_path)], capture_output=True, text=True, timeout=600)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("interrupted after"), lines
    after, full = float(lines[0].split()[2]), float(lines[0].split()[-2])
    # the optimizer needs many fd gradients; the interruption comes within about one
    assert after < 1.5 * full, (after, full)
    assert lines[1] == "results written: False"
    assert lines[2].startswith("next call: ")
