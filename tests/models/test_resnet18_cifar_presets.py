"""The CIFAR ResNet-18 that seven self-supervised presets share (`resnet18_cifar`), once.

Before issue 34 each preset file held its own copy of the dict; these tests pin what
the copies said, and the parameter counts they built (measured from the copies).
"""

import pytest

import keras
from keras.src.backend.common import global_state

from keras_paperzoo.models import BYOL, CMC, InstDisc, InvaSpread, MoCo, SimCLR, SwAV
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar

# What each copied dict held (keys in its order).
COPIED = {"stage_blocks": [2, 2, 2, 2], "stage_filters": [64, 128, 256, 512], "stem": "cifar",
          "stem_filters": 64, "shortcut": "B", "image_shape": (32, 32, 3)}
PRESETS = [
    (SimCLR, "simclr_cifar_resnet18", COPIED),
    (BYOL, "byol_cifar_resnet18", COPIED),
    (MoCo, "moco_cifar_resnet18", COPIED),
    (InstDisc, "instdisc_cifar_resnet18", COPIED),
    (InvaSpread, "invaspread_cifar_resnet18", COPIED),
    (SwAV, "swav_cifar_resnet18", {**COPIED, "image_shape": (None, None, 3)}),
    (CMC, "cmc_cifar_resnet18", {**COPIED, "stage_filters": [32, 64, 128, 256]}),
]


@pytest.mark.parametrize("trainer, name, copied", PRESETS, ids=[p[1] for p in PRESETS])
def test_each_preset_builds_the_copied_backbone(trainer, name, copied):
    backbone = trainer.presets[name]["backbone"]
    assert backbone["preset"] == "resnet18"
    assert backbone["overrides"] == copied
    assert list(backbone["overrides"]) == list(copied)


def test_a_fresh_dict_each_call_with_overrides_replacing_entries():
    first, second = resnet18_cifar(), resnet18_cifar()
    assert first == second == COPIED and first is not second and first["stage_blocks"] is not second["stage_blocks"]
    first["stage_blocks"].append(2)  # one preset's edit leaves the others' alone
    assert resnet18_cifar()["stage_blocks"] == [2, 2, 2, 2]
    assert resnet18_cifar(image_shape=(None, None, 3))["image_shape"] == (None, None, 3)


def test_parameter_counts_stay_those_of_the_copies():
    # Counted from the copied dicts before they were replaced: ResNet-18 with a 3x3 stem of 64
    # (11,178,432 weights, BN statistics included), and CMC's half-width L and ab encoders.
    # Shapes only (variables never filled, ~10x cheaper to build, as the ResNet tests' `shapes_only`).
    try:
        with keras.StatelessScope(initialize_variables=False):
            simclr = SimCLR.build_backbones(SimCLR.presets["simclr_cifar_resnet18"]["backbone"], {})
            cmc = CMC.build_backbones(CMC.presets["cmc_cifar_resnet18"]["backbone"], {})
    finally:
        global_state.set_global_attribute("uninitialized_variables", [])
    assert simclr["backbone"].count_params() == 11_178_432
    assert cmc["backbone"].count_params() == 2_811_072
    assert cmc["ab_backbone"].count_params() == 2_811_648
