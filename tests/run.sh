#!/usr/bin/env bash
# The full test suite on TensorFlow, JAX and PyTorch, from a fresh clone.
#
#   bash tests/run.sh
#
# Creates .venv-test, installs keras-paperzoo with its test extras (torch pinned to
# the 2.13.0 CPU build that these machines keep on disk: an unpinned torch pulls a
# CUDA build of several GB), then runs pytest once per backend, in PAPERZOO_TEST_WORKERS
# processes (pytest-xdist; default 2, the cores of the CI machine: JAX and TF spend most
# of a test compiling on one core). Fails if any backend fails. Set PAPERZOO_VENV to
# reuse another environment.
set -uo pipefail
cd "$(dirname "$0")/.."

venv="${PAPERZOO_VENV:-.venv-test}"
start=$SECONDS
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || exit 1
fi
# (pip's notes about this machine's local package folders are filtered out)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "torch==2.13.0" -e ".[test,jax,torch,export,text]" 2>&1 | grep -v "is ignored: it is neither"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "install failed"; exit 1; }
echo "installed in $((SECONDS - start)) s"

export TF_CPP_MIN_LOG_LEVEL=3 PYTHONWARNINGS=ignore
failed=()
for backend in tensorflow jax torch; do
    echo "=== KERAS_BACKEND=$backend ==="
    KERAS_BACKEND=$backend "$venv/bin/python" -m pytest tests -q -p no:cacheprovider \
        -n "${PAPERZOO_TEST_WORKERS:-2}" --timeout 900 --durations 15 -o console_output_style=classic \
        || failed+=("$backend")
done
echo "suite took $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED on: ${failed[*]}"
    exit 1
fi
echo "all three backends passed"
