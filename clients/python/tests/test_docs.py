"""The Python examples of docs/CLIENT.md (its Python section) and of the package's README run against a
real cued, as written: the documents cannot show code that does not work."""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, List, Tuple
from unittest import mock

from support import REPOSITORY, SharedDaemon


def python_section() -> str:
    with open(os.path.join(REPOSITORY, "docs", "CLIENT.md")) as file:
        guide = file.read()
    heading = re.search(r"^## \d+\. Python$", guide, re.M)
    assert heading is not None, "docs/CLIENT.md has no Python section"
    return guide[heading.start():]


def readme() -> str:
    with open(os.path.join(REPOSITORY, "clients", "python", "README.md")) as file:
        return file.read()


def marked(text: str, language: str) -> List[Tuple[str, str]]:
    """The blocks of `language` that the text marks to be run (`<!-- example: run …` before the
    fence; Tests/EndToEndTests/ExampleBlocks.swift has the markers), each with its marker's options:
    the ones the Swift end-to-end suite runs against the source tree, run here against the installed
    package."""
    return re.findall(r"^<!-- example: run ([^\n]*)-->\n```%s\n(.*?)^```$" % language, text, re.S | re.M)


def blocks(language: str) -> List[str]:
    """The guide's Python section's blocks of `language` marked to be run."""
    return [code for _, code in marked(python_section(), language)]


def stand_ins(options: str, directory: str) -> None:
    """The marker's `files=`: stand-ins for the reader's sound files, copies of a fixture, as the
    Swift suite makes them (relative paths only here)."""
    found = re.search(r"\bfiles=(\S+)", options)
    for path in found.group(1).split(",") if found else []:
        fixture = os.path.join(REPOSITORY, "Tests", "Fixtures", "tone-48000-stereo.ogg")
        shutil.copy(fixture, os.path.join(directory, path))


shared = SharedDaemon()
setUpModule = shared.start
tearDownModule = shared.stop


class GuideTests(unittest.TestCase):
    def setUp(self) -> None:
        self.daemon = shared.daemon

    def test_every_python_example_runs(self) -> None:
        examples = [("docs/CLIENT.md", options, code) for options, code in marked(python_section(), "python")]
        self.assertGreaterEqual(len(examples), 5)
        package = [("clients/python/README.md", options, code) for options, code in marked(readme(), "python")]
        self.assertGreaterEqual(len(package), 3)
        for document, options, example in examples + package:
            with self.subTest(document=document, example=example.splitlines()[2:3]):
                output = self.run_example(document, options, example)
                if document == "docs/CLIENT.md":
                    self.assertTrue(output, "every example of the guide prints what it did")
                self.assertNotIn("cued refused:", output, "each refusal is the one the example expects")
                printed = re.search(r"\bprints='([^']*)'", options)
                if printed:
                    self.assertIn(printed.group(1), output)

    def run_example(self, document: str, options: str, example: str) -> str:
        """Runs a block in a scratch working directory with its stand-in files; what it printed."""
        output = io.StringIO()
        namespace: Dict[str, object] = {"__name__": "__docs__"}
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="cued-py-docs-") as work:
            stand_ins(options, work)
            os.chdir(work)
            try:
                with mock.patch.dict(os.environ, {"CUED_SOCKET": self.daemon.socket}), contextlib.redirect_stdout(output):
                    exec(compile(example, document, "exec"), namespace)
            finally:
                os.chdir(here)
        return output.getvalue()

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
