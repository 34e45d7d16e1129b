"""Shared fixtures: the repository's problem files and the `hybridopt` command line, whose
output the Python package must reproduce.

The binary is $HYBRIDOPT_BIN, else <target>/release/hybridopt under $CARGO_TARGET_DIR or
the repository's target/ (`cargo build --release` makes it); a missing binary fails the
tests that need it rather than skipping them.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = REPO / "problems"


def _binary():
    if os.environ.get("HYBRIDOPT_BIN"):
        return Path(os.environ["HYBRIDOPT_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "release" / "hybridopt"


class Cli:
    """Runs `hybridopt` and returns its parsed JSON (or its failure)."""

    def __init__(self, binary):
        self.binary = binary

    def run(self, *args, cwd=None):
        return subprocess.run(
            [str(self.binary), *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=300,
        )

    def json(self, *args, cwd=None):
        r = self.run(*args, "--json", cwd=cwd)
        assert r.returncode == 0, f"hybridopt {' '.join(map(str, args))} failed: {r.stderr}"
        return json.loads(r.stdout)

    def error(self, *args, cwd=None):
        """The message of a failing command (stderr after 'error: ')."""
        r = self.run(*args, cwd=cwd)
        assert r.returncode != 0, f"hybridopt {' '.join(map(str, args))} succeeded"
        assert r.stderr.startswith("error: "), r.stderr
        return r.stderr[len("error: "):].rstrip("\n")


@pytest.fixture(scope="session")
def cli():
    b = _binary()
    assert b.is_file(), (
        f"the hybridopt binary is not at {b}: run `cargo build --release` "
        "or set HYBRIDOPT_BIN"
    )
    return Cli(b)


@pytest.fixture(scope="session")
def problems():
    return PROBLEMS
