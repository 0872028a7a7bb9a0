#!/usr/bin/env bash
# The README's install from nothing, as a new JAX user does it (issue 33): a new virtual
# environment, `pip install -e ".[jax]"`, no TensorFlow installed; `paperzoo train gan` for one
# epoch; the saved model loaded in a new process that imports only keras and keras_paperzoo.
# Prints the install time and size (pip's cache makes a second install faster: the line says
# whether the cache held wheels before). Not run by tests/run.sh (minutes, and it downloads).
#
#   bash tests/fresh_install.sh [VENV_DIR]     # default: a temporary folder, removed at the end
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
venv="${1:-$(mktemp -d)/venv}"
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -n "${1:-}" ] || rm -rf "$(dirname "$venv")"' EXIT

cache=$(python3 -m pip cache dir 2>/dev/null || true)
cached=$( [ -n "$cache" ] && [ -d "$cache" ] && du -sh "$cache" 2>/dev/null | cut -f1 || echo none)
python3 -m venv "$venv"
start=$SECONDS
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[jax]" 2>&1 | grep -v "is ignored: it is neither" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fresh_install: pip install failed"; exit 1; }
install_s=$((SECONDS - start))
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "fresh_install: pip install -e \".[jax]\" took ${install_s} s; site-packages $(du -sh "$site" | cut -f1) (pip cache before: $cached)"

"$venv/bin/python" - <<'EOF'
import importlib.util, sys
present = [m for m in ("tensorflow", "tensorflow_text", "tensorflow_datasets") if importlib.util.find_spec(m)]
sys.exit(f"fresh_install: {', '.join(present)} installed by .[jax]" if present else 0)
EOF
echo "fresh_install: no TensorFlow, TF Text or tensorflow-datasets"
[ -x "$venv/bin/tensorboard" ] || { echo "fresh_install: no tensorboard command"; exit 1; }

cd "$work"
start=$SECONDS
KERAS_BACKEND=jax "$venv/bin/paperzoo" train gan --epochs 1 --steps-per-epoch 5 --parzen-samples 100 \
    --output-dir "$work/gan" > "$work/train.log" 2>&1 || { cat "$work/train.log"; exit 1; }
echo "fresh_install: paperzoo train gan --epochs 1 took $((SECONDS - start)) s"
KERAS_BACKEND=jax "$venv/bin/python" -c "
import keras, keras_paperzoo
gan = keras.saving.load_model('$work/gan/model.keras')
samples = gan.generate(4)
print('fresh_install: loaded', type(gan).__name__, 'in a new process; samples', tuple(samples.shape))
"
echo "fresh_install: OK"
