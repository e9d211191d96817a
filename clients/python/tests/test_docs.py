"""The Python examples of docs/CLIENT.md (its Python section) run against a real cued, as written: the
document cannot show code that does not work."""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import unittest
from typing import Dict, List
from unittest import mock

from support import REPOSITORY, SharedDaemon


def python_section() -> str:
    with open(os.path.join(REPOSITORY, "docs", "CLIENT.md")) as file:
        guide = file.read()
    heading = re.search(r"^## \d+\. Python$", guide, re.M)
    assert heading is not None, "docs/CLIENT.md has no Python section"
    return guide[heading.start():]


def blocks(language: str) -> List[str]:
    """The section's blocks of `language` that the document marks to be run (`<!-- example: run …`
    before the fence; Tests/EndToEndTests/ExampleBlocks.swift has the markers): the ones the Swift
    end-to-end suite runs against the source tree, run here against the installed package."""
    return re.findall(r"^<!-- example: run [^\n]*-->\n```%s\n(.*?)^```$" % language, python_section(), re.S | re.M)


shared = SharedDaemon()
setUpModule = shared.start
tearDownModule = shared.stop


class GuideTests(unittest.TestCase):
    def setUp(self) -> None:
        self.daemon = shared.daemon

    def test_every_python_example_runs(self) -> None:
        examples = blocks("python")
        self.assertGreaterEqual(len(examples), 5)
        for example in examples:
            with self.subTest(example=example.splitlines()[2:3]):
                output = io.StringIO()
                namespace: Dict[str, object] = {"__name__": "__docs__"}
                with mock.patch.dict(os.environ, {"CUED_SOCKET": self.daemon.socket}), contextlib.redirect_stdout(output):
                    exec(compile(example, "docs/CLIENT.md", "exec"), namespace)
                self.assertTrue(output.getvalue(), "every example prints what it did")
                self.assertNotIn("cued refused:", output.getvalue(), "each refusal is the one the example expects")

    def test_the_shell_one_liner(self) -> None:
        lines = [line for block in blocks("sh") for line in block.splitlines() if line.startswith("python3 -c ")]
        self.assertEqual(len(lines), 1)
        command = shlex.split(lines[0])
        result = subprocess.run([sys.executable] + command[1:], capture_output=True, text=True, timeout=30,
                                env=dict(os.environ, CUED_SOCKET=self.daemon.socket))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("PlayResult(voice=", result.stdout)


if __name__ == "__main__":
    unittest.main()
