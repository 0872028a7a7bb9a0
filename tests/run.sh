#!/usr/bin/env bash
# The full test suite on TensorFlow, JAX and PyTorch, from a fresh clone.
#
#   bash tests/run.sh
#
# Two environments:
# - .venv-test: keras-paperzoo with its test extras, TensorFlow included (torch pinned to the
#   2.13.0 CPU build that these machines keep on disk: an unpinned torch pulls a CUDA build of
#   several GB);
# - .venv-notf: the same without TensorFlow (keras-hub installed without its tensorflow-text
#   dependency, which is what pulls TensorFlow in), as on a GPU machine whose CUDA pins clash.
# The TensorFlow leg runs every test in .venv-test. The JAX and torch legs run every test in
# .venv-notf, where the tests that run TensorFlow whatever the backend (export, tf.data,
# keras-hub's WordPiece; marked `needs_tensorflow`, tests/conftest.py) skip and any other that
# reaches for TensorFlow fails; then those marked tests alone in .venv-test. Each leg runs in
# PAPERZOO_TEST_WORKERS processes (pytest-xdist; default 2, the cores of the CI machine: JAX and
# TF spend most of a test compiling on one core). Fails if any leg fails. Set PAPERZOO_VENV
# (PAPERZOO_NOTF_VENV) to reuse another environment.
set -uo pipefail
cd "$(dirname "$0")/.."

quiet="is ignored: it is neither"  # pip's notes about this machine's local package folders
venv="${PAPERZOO_VENV:-.venv-test}"
notf="${PAPERZOO_NOTF_VENV:-.venv-notf}"
start=$SECONDS
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || exit 1
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "torch==2.13.0" -e ".[test,jax,torch,tf,export,text]" 2>&1 | grep -v "$quiet"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "install failed"; exit 1; }
[ -x "$notf/bin/python" ] || python3 -m venv "$notf" || exit 1
# keras-hub apart, without its dependencies: its metadata requires tensorflow-text, which pulls TensorFlow in.
{ "$notf/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" -e ".[jax,torch,test]" \
  && "$notf/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "keras-hub>=0.32" ; } 2>&1 \
    | grep -v "$quiet"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "install without TensorFlow failed"; exit 1; }
"$notf/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('tensorflow') is not None)" \
    || { echo "TensorFlow is installed in $notf"; exit 1; }
echo "installed in $((SECONDS - start)) s"

export TF_CPP_MIN_LOG_LEVEL=3 PYTHONWARNINGS=ignore
failed=()
times=()
# Each leg prints its 25 slowest tests, and fails when a test passed over $PAPERZOO_SLOW_LIMIT_S (60) seconds
# without @pytest.mark.slow(reason=...) (tests/conftest.py lists them under "tests over the time limit").
leg() {  # leg NAME BACKEND PYTHON [PYTEST ARGUMENTS]
    local name=$1 backend=$2 python=$3 leg_start=$SECONDS
    shift 3
    echo "=== $name ==="
    KERAS_BACKEND=$backend "$python" -m pytest tests -q -p no:cacheprovider -n "${PAPERZOO_TEST_WORKERS:-2}" \
        --timeout 900 --durations 25 -o console_output_style=classic "$@" || failed+=("$name")
    times+=("$((SECONDS - leg_start)) s  $name")
}
for backend in jax torch; do
    leg "KERAS_BACKEND=$backend, no TensorFlow installed" "$backend" "$notf/bin/python"
    leg "KERAS_BACKEND=$backend, the tests that need TensorFlow" "$backend" "$venv/bin/python" -m needs_tensorflow
done
leg "KERAS_BACKEND=tensorflow" tensorflow "$venv/bin/python"
printf 'leg: %s\n' "${times[@]}"
echo "suite took $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED on: ${failed[*]}"
    exit 1
fi
echo "all three backends passed"
