#!/usr/bin/env bash
# Every test of the project: the Rust workspace's (`cargo test --workspace`:
# unit, integration, conformance, CLI and doc tests), then the Python
# package's (tools/test-python.sh: a virtualenv in target/py-venv, the
# package built from source, pytest). Arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo test --workspace
bash tools/test-python.sh "$@"
