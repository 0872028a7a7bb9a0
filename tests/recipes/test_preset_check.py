"""`paperzoo train RECIPE --preset NAME` refuses a name that is no model's preset before Keras is imported
(issue 35 item 6): recipes/checks.py runs the preset tables' sources with every non-table import stubbed."""

import inspect
import subprocess
import sys

import pytest

from keras_paperzoo.recipes.checks import preset_names

pytestmark = pytest.mark.backend_free("torch")


def test_every_models_presets_pass_the_check():
    # The sources' tables also hold encoder tables (CPC's ResNet and strided-conv encoders), whose names the check
    # passes on to the recipe; what must hold is that no model's preset is refused before the recipe reads it.
    import keras_paperzoo.models as models

    imported = set()
    for _, cls in inspect.getmembers(models, inspect.isclass):
        presets = getattr(cls, "presets", None)
        if isinstance(presets, dict):
            imported.update(presets)
    assert len(imported) > 100 and imported <= preset_names(), sorted(imported - preset_names())
    assert {name for name in preset_names() - imported if not name.startswith("cpc_")} == set()


def test_an_unknown_preset_is_refused_in_one_line_without_keras():
    code = ("import sys\nfrom keras_paperzoo.cli import main\ncode = main(['train', 'resnet-cifar', '--preset', "
            "'resnet20', '--output-dir', sys.argv[1]])\nprint('EXIT', code, 'keras' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, "/tmp/paperzoo-preset-check-unused"], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip().endswith("EXIT 2 False"), (done.stdout, done.stderr)
    line = done.stderr.strip()
    assert line.count("\n") == 0 and "--preset 'resnet20' is not a preset of any model; nearest: resnet20_cifar, resnet50" in line


def test_a_known_preset_passes_the_check():
    from keras_paperzoo.recipes.checks import check_preset

    class Args:
        recipe, preset = "simclr", "simclr_tiny"

    check_preset(Args)
    Args.preset = "simclr_tinny"
    with pytest.raises(ValueError, match="nearest: simclr_tiny"):
        check_preset(Args)
