#!/usr/bin/env bash
# Builds and tests blockshuffle's Python package (python/) on a machine with
# only the Rust toolchain and Python 3.11: a virtualenv in target/py-venv,
# the package built in release mode by pip (maturin from PyPI, crates from
# crates.io) with its dask extra and the test tools, then pytest: the tests
# in python/tests and the docstrings' examples. Fails if no test ran.
#
#   tools/test-python.sh [PYTEST ARGS...]     e.g. -k dask, -x
#
# PYTHON picks the interpreter (default python3); the build runs at nice 19.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/py-venv"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
# The package (built from source, release profile) with the dask extra, and the test tools.
nice -n 19 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$root/python[dask,test]"

# From the repository root, so that `import blockshuffle` finds the installed
# package, not the source folder python/blockshuffle (which has no extension).
cd "$root"
set +e
"$venv/bin/python" -m pytest -p no:cacheprovider -q \
    --doctest-modules --pyargs blockshuffle python/tests "$@"
status=$?
set -e
# pytest exits 5 when it collected no test: a failure here.
if [[ $status -eq 5 ]]; then
    echo "test-python.sh: no test ran" >&2
    exit 1
fi
exit "$status"
