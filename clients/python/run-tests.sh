#!/usr/bin/env bash
# The Python package's tests, as a user gets the package: a fresh virtual environment in a scratch
# directory, `pip install` of clients/python from this repository, then the tests (unittest, from
# clients/python/tests) against real daemons started from CUED_BINARY, and mypy --strict over the
# package, its examples and its tests when mypy can be installed (PyPI reachable).
#
#   clients/python/run-tests.sh CUED_BINARY [unittest arguments…]
#
# PYTHON names the interpreter (default python3; 3.9 or later). `make test` runs this after the
# Swift tests.
set -euo pipefail

if [[ $# -lt 1 || ! -x "$1" ]]; then
  echo "usage: $0 CUED_BINARY [unittest arguments]   (CUED_BINARY: the cued to test against, e.g. .build/debug/cued)" >&2
  exit 2
fi
cued_binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
here="$(cd "$(dirname "$0")" && pwd)"
repository="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"

scratch="$(mktemp -d /tmp/cued-python-tests.XXXXXX)"
# setuptools builds in the source tree (build/, src/cued.egg-info): none left from an older tree
# goes into the wheel, and none stays behind.
clean() { rm -rf "$scratch" "$here/build" "$here/src/cued.egg-info"; }
clean_tree() { rm -rf "$here/build" "$here/src/cued.egg-info"; }
trap clean EXIT
clean_tree

"$python" -m venv "$scratch/venv" || {
  echo "$python -m venv failed: on Debian, install python3-venv (scripts/install-deps.sh --test does)" >&2
  exit 1
}
venv_python="$scratch/venv/bin/python"
pip=("$venv_python" -m pip --disable-pip-version-check --quiet --no-input)

# As a user installs it. Offline, pip cannot fetch setuptools for an isolated build: then the
# venv's own setuptools builds it (Python 3.11's venv has one).
if ! "${pip[@]}" install "$repository/clients/python" 2>"$scratch/pip.log"; then
  echo "pip install with build isolation failed (offline?); trying the venv's setuptools:" >&2
  tail -n 3 "$scratch/pip.log" >&2
  "${pip[@]}" install --no-build-isolation "$repository/clients/python"
fi

# The tests import the installed package, never the source tree: run them from the scratch
# directory with only the tests folder on the path.
cd "$scratch"
if "${pip[@]}" install mypy 2>"$scratch/mypy-install.log"; then
  mypy=("$venv_python" -m mypy --strict --no-incremental --no-error-summary)
  if ! "${mypy[@]}" -p cued || ! MYPYPATH="$here/tests" "${mypy[@]}" "$here/examples" "$here/tests" \
      "$repository/examples/cued_client.py"; then
    echo "mypy --strict found the issues above" >&2
    exit 1
  fi
  echo "mypy --strict: no issues in the installed package, its examples and its tests"
else
  echo "mypy could not be installed (PyPI unreachable?): the type check is skipped" >&2
fi

CUED_BINARY="$cued_binary" CUED_SOUNDS="$repository/sounds" PYTHONPATH="$here/tests" \
  "$venv_python" -m unittest discover --start-directory "$here/tests" --top-level-directory "$here/tests" "$@"
