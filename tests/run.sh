#!/usr/bin/env bash
# The full test suite on TensorFlow, JAX and PyTorch, from a fresh clone.
#
#   bash tests/run.sh
#
# Creates .venv-test, installs keras-paperzoo with its test extras (torch pinned to
# the 2.13.0 CPU build that these machines keep on disk: an unpinned torch pulls a
# CUDA build of several GB), then runs pytest once per backend, in PAPERZOO_TEST_WORKERS
# processes (pytest-xdist; default 2, the cores of the CI machine: JAX and TF spend most
# of a test compiling on one core), then tests/test_no_tensorflow.py on JAX and torch in
# .venv-notf, an environment without TensorFlow. Fails if any leg fails. Set PAPERZOO_VENV
# (PAPERZOO_NOTF_VENV) to reuse another environment.
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
    # PAPERZOO_TF_FREE_LEG_FOLLOWS: tests/test_no_tensorflow.py runs below, where TensorFlow is not installed
    # at all; its run here (TensorFlow only hidden from the child) would repeat it (134 s on torch).
    KERAS_BACKEND=$backend PAPERZOO_TF_FREE_LEG_FOLLOWS=1 "$venv/bin/python" -m pytest tests -q -p no:cacheprovider \
        -n "${PAPERZOO_TEST_WORKERS:-2}" --timeout 900 --durations 15 -o console_output_style=classic \
        || failed+=("$backend")
done
# The TF-free leg: JAX and torch where TensorFlow is not installed (keras-hub without its
# tensorflow-text dependency, which is what pulls TensorFlow in): the package imports, trains,
# saves and refuses export in one line (tests/test_no_tensorflow.py).
notf="${PAPERZOO_NOTF_VENV:-.venv-notf}"
[ -x "$notf/bin/python" ] || python3 -m venv "$notf" || exit 1
{ "$notf/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" "jax>=0.4.30" \
      "keras>=3.15" "numpy>=1.26" "scikit-learn>=1.3" "pillow>=10" regex sentencepiece tokenizers "pytest>=8" "pytest-timeout>=2" \
  && "$notf/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "keras-hub>=0.32" -e . ; } 2>&1 \
    | grep -v "is ignored: it is neither\|which is not installed\|dependency conflicts\|pip's dependency resolver"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "install without TensorFlow failed"; failed+=("tf-free install"); }
"$notf/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('tensorflow') is not None)" \
    || { echo "TensorFlow is installed in $notf"; failed+=("tf-free"); }
for backend in jax torch; do
    echo "=== KERAS_BACKEND=$backend, no TensorFlow installed ==="
    KERAS_BACKEND=$backend "$notf/bin/python" -m pytest tests/test_no_tensorflow.py -q -p no:cacheprovider \
        --timeout 900 -o console_output_style=classic || failed+=("$backend without TensorFlow")
done
echo "suite took $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED on: ${failed[*]}"
    exit 1
fi
echo "all three backends passed"
