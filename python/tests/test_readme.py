"""The README's Python example prints the output the README shows."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_readme_example_prints_what_the_readme_shows():
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Python\n"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) == 5
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == shown
