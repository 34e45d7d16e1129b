"""Ctrl-C (SIGINT) during a long call raises KeyboardInterrupt within about one FD
gradient's work, writes no results folder, and the next call runs normally. Run in a child
process so that the signal reaches no one else.

Nothing here depends on the machine's load: the signal is sent once the call has used a
tenth of an FD gradient's CPU time (not after a delay on the clock), and the time the call
takes to stop is measured in the process's CPU time too (user + system, all threads: the FD
gradient runs on several). A busy machine slows the child's clock, not its CPU time. The
only clock limits are generous timeouts, which fail only on a hang."""

import re
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    import hybridopt
    # Python installs its KeyboardInterrupt handler only where SIGINT is not ignored at
    # start; a runner that launches its jobs in the background ignores it (bash without job
    # control does), so the handler is installed here whatever the runner did
    signal.signal(signal.SIGINT, signal.default_int_handler)
    p = hybridopt.Problem.from_file(sys.argv[1])
    out = os.path.join(sys.argv[2], "results")
    # one FD gradient's CPU time, by the process's clock
    c0 = time.process_time()
    p.gradient(method="fd")
    full = time.process_time() - c0
    sent = {}
    done = threading.Event()

    def interrupt(start):
        # SIGINT once the optimization has used a tenth of an FD gradient's CPU time:
        # inside the call however loaded the machine is (the deadline bounds a hang)
        deadline = time.monotonic() + 300
        while not done.is_set() and time.monotonic() < deadline:
            if time.process_time() - start >= 0.1 * full:
                sent["cpu"] = time.process_time()
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.002)

    start = time.process_time()
    try:
        threading.Thread(target=interrupt, args=(start,), daemon=True).start()
        p.optimize(gradient="fd", max_iters=50, out=out)
        print("not interrupted")
    except KeyboardInterrupt:
        after = time.process_time() - sent["cpu"]
        print(f"interrupted after {after:.3f} s of CPU time; "
              f"one fd gradient takes {full:.3f} s of CPU time")
    finally:
        done.set()
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
    m = re.fullmatch(r"interrupted after (\S+) s of CPU time; "
                     r"one fd gradient takes (\S+) s of CPU time", lines[0])
    assert m, lines[0]
    after, full = float(m[1]), float(m[2])
    # the optimizer needs many fd gradients; the interruption comes within about one
    assert after < 1.5 * full, (after, full)
    assert lines[1] == "results written: False"
    assert lines[2].startswith("next call: ")
