"""Every preset of every backbone and trainer builds (issue 34: a new preset is tested the day it is registered).

The classes are found by walking the subclasses of `Presets` (backbones) and `Trainer`
(trainers) that hold their own `presets`, so no list here needs updating. Everything is built
inside `shapes_only()`: variables get shapes but no values, so ViT-H's 632M parameters cost
milliseconds, and a test reads parameter counts and output shapes only (no forward pass; the
papers' tests run the tiny configurations). Three kinds of preset are not built whole:

- GPT-2 medium and up, every GPT-3 size: GPT-2's scaling of the residual projections reads
  each layer's weights, which compiles initializers for seconds per layer on JAX (gpt2_xl took
  51 s, and even its 1-block twin 12 s); their config and `gpt_parameter_count` are checked, the
  formula itself against the built GPT-2-style presets (gpt2_small, the char presets);
- ResNet-1202 (600 blocks, 12 s to build): built as its 1- and 2-block twins per stage
  (`depth_twins`), the count being the 1-block one plus (n - 1) blocks of each stage;
- BEiT (a subclassed model built by a call, seconds for each) and the trainers whose
  construction compiles on JAX (BYOL's target copy, MoCo's and DenseCL's key encoders, iGPT's
  GPT-2 stack; 10-40 s each under load, DenseCL ResNet-50 35 s), but their tiny presets:
  their config is checked instead, beside `beit_parameter_count` / a built tiny twin.

Run on the torch leg only (`one_leg`): what is checked (preset tables, shape inference,
parameter counts) is the same on every backend, and each model's own tests build and fit
it on every leg; the other legs spent 36 s (JAX) and 14 s (TensorFlow) compiling it again.

The papers' parameter counts are asserted where a preset names a paper model (ResNet-50
25.6M, ViT-B/16 86M, VGG-16 138M, AlexNet 61M, BERT-base 110M, GPT-2 124M, Transformer base 65M),
with the exact figures the papers' own tests assert.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import keras_paperzoo.models  # noqa: F401 (registers every class that imports without keras-hub)
from keras_paperzoo.models.backbone import Presets
from keras_paperzoo.models.trainer import Trainer
from tests.model_tests import shapes_only

pytestmark = pytest.mark.one_leg("torch")


def _import_every_model_module():
    """Every module under keras_paperzoo/models, not only what models/__init__.py writes out (a new paper's
    presets are collected before its import line is written); without keras-hub, the four models that need it
    (BERT, GPT, iGPT, the Transformer) are left out."""
    for module in pkgutil.walk_packages(keras_paperzoo.models.__path__, "keras_paperzoo.models."):
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as error:
            if error.name.split(".")[0] != "keras_hub":
                raise


_import_every_model_module()


def _subclasses(base):
    """The package's classes with their own presets (a test's subclass, such as test_trainer's, is not walked)."""
    found = {}
    for cls in base.__subclasses__():
        if cls.__dict__.get("presets") and cls.__module__.startswith("keras_paperzoo."):
            found[cls.__name__] = cls
        found.update(_subclasses(cls))
    return found


BACKBONES = _subclasses(Presets)
TRAINERS = {name: cls for name, cls in _subclasses(Trainer).items() if name not in BACKBONES}
BACKBONE_PRESETS = [(name, preset) for name, cls in sorted(BACKBONES.items()) for preset in sorted(cls.presets)]
TRAINER_PRESETS = [(name, preset) for name, cls in sorted(TRAINERS.items()) for preset in sorted(cls.presets)]

# Whole-model counts the papers' tests assert (with the 1000-way head where the paper counts one).
FC_1000 = {2048: 2048 * 1000 + 1000, 4096: 4096 * 1000 + 1000, 768: 768 * 1000 + 1000}
PAPER_COUNTS = {  # preset: (trainable parameters + head, the paper's figure, relative tolerance)
    ("ResNetBackbone", "resnet50"): (25_557_032, FC_1000[2048], 25.6e6, 0.005),  # He et al. Table 1 / torchvision
    ("ViTBackbone", "vit_b16"): (86_567_656, FC_1000[768], 86e6, 0.01),  # Dosovitskiy et al. Table 1
    ("VGGBackbone", "vgg16"): (138_357_544, FC_1000[4096], 138e6, 0.005),  # Simonyan & Zisserman Table 2
    ("AlexNetBackbone", "alexnet"): (60_965_224, FC_1000[4096], 60e6, 0.02),  # "60 million parameters"
    ("BertBackbone", "bert_base"): (109_482_240, 0, 110e6, 0.01),  # Devlin et al. Sec. 3
    ("GPTBackbone", "gpt2_small"): (124_439_808, 0, 124e6, 0.005),  # the released GPT-2 (the paper: 117M)
    ("TransformerBackbone", "transformer_base"): (63_082_496, 0, 65e6, 0.03),  # Vaswani et al. Table 3
}

# gpt_parameter_count of the GPT-2 sizes (tests/models/gpt/test_gpt.py) and GPT-3's (test_gpt3_presets.py).
GPT_COUNTS = {
    "gpt2_medium": 354_823_168, "gpt2_large": 774_030_080, "gpt2_xl": 1_557_611_200,
    "gpt3_small": 125_226_240, "gpt3_medium": 355_871_744, "gpt3_large": 760_300_032, "gpt3_xl": 1_315_723_264,
    "gpt3_2.7b": 2_651_553_280, "gpt3_6.7b": 6_658_404_352, "gpt3_13b": 12_853_386_240,
    "gpt3_175b": 174_604_259_328,
}
DEEP_GPT = set(GPT_COUNTS)
# Trainers whose construction compiles initializers on JAX even in shapes_only (20-40 s each under load).
# MoCo's and DenseCL's key encoders likewise (10-35 s for the ResNet-50 and CIFAR presets).
CONFIG_ONLY_TRAINERS = {"BYOL", "IGPT", "MoCo", "DenseCL"}
TINY_TRAINER_PRESETS = {("IGPT", "igpt_mnist_tiny"), ("MoCo", "moco_tiny")}  # built in full instead


def _trainable(model):
    return sum(int(np.prod(w.shape)) for w in model.trainable_weights)


def _built(cls, preset, **overrides):
    with shapes_only():
        return cls.from_preset(preset, **overrides)


def depth_twins(cls, preset, key):
    """(trainable, all) counts of `preset` from its 1- and 2-block twins: 1-block + (L - 1) x one block, per stage."""
    config = cls.presets[preset]["config"]
    depth = config[key]
    stages = list(depth) if isinstance(depth, (list, tuple)) else [depth]
    ones = [1] * len(stages)
    as_value = (lambda d: d) if isinstance(depth, (list, tuple)) else (lambda d: d[0])
    base = _built(cls, preset, **{key: as_value(ones)})
    counts = np.array([_trainable(base), base.count_params()])
    total = counts.copy()
    for stage, blocks in enumerate(stages):
        two = list(ones)
        two[stage] = 2
        twin = _built(cls, preset, **{key: as_value(two)})
        total += (blocks - 1) * (np.array([_trainable(twin), twin.count_params()]) - counts)
    return int(total[0]), int(total[1])


def test_every_class_with_presets_is_collected():
    expected = {"AlexNetBackbone", "VGGBackbone", "ResNetBackbone", "ViTBackbone", "BEiTBackbone", "CPCResNet",
                "StridedConvEncoder"}
    assert expected <= set(BACKBONES)
    assert {"SimCLR", "MoCo", "BYOL", "SwAV", "MAE", "CPC", "CMC", "InstDisc", "InvaSpread", "DeepCluster",
            "DenseCL", "GAN", "VisualTokenizer"} <= set(TRAINERS)
    assert len(BACKBONE_PRESETS) >= 47 and len(TRAINER_PRESETS) >= 55


@pytest.mark.parametrize("class_name, preset", BACKBONE_PRESETS, ids=[f"{c}-{p}" for c, p in BACKBONE_PRESETS])
def test_backbone_preset_builds(class_name, preset):
    cls = BACKBONES[class_name]
    config = cls.presets[preset]["config"]
    assert cls.presets[preset]["description"]
    if class_name == "BEiTBackbone" and "tiny" not in preset:
        from keras_paperzoo.models.beit.beit_backbone import beit_parameter_count

        # Config only (a subclassed model built by a call: seconds each); the formula is checked
        # against a built BEiT in tests/models/beit/test_beit_backbone.py and below on the tiny preset.
        assert beit_parameter_count(**config) == {"beit_base_patch16_224": 85_773_504,
                                                  "beit_large_patch16_224": 303_433_216}[preset]
        return
    if class_name == "GPTBackbone" and preset in DEEP_GPT:
        from keras_paperzoo.models.gpt.gpt_backbone import gpt_parameter_count

        # Config only: GPT-2's scaling of the residual projections reads each layer's weights, so even
        # a 1-block twin compiles initializers for seconds on JAX; GPT-3 175B's one block is 1.8B values.
        # The formula is checked against built GPT-2-style models (gpt2_small, the char presets) here.
        assert config["norm_first"] and gpt_parameter_count(**config) == GPT_COUNTS[preset]
        return
    if class_name == "ResNetBackbone" and preset == "resnet1202_cifar":
        trainable, _ = depth_twins(cls, preset, "stage_blocks")
        assert trainable + 64 * 10 + 10 == 19_421_274  # the ResNet tests' count with the 10-way head (paper: 19.4M)
        return
    backbone = _built(cls, preset)
    count = backbone.count_params()
    assert count > 0
    for output in getattr(backbone, "outputs", None) or []:  # (B, ...) with every other size positive or free
        assert output.shape[0] is None and all(d is None or d > 0 for d in output.shape[1:]), output.shape
    if class_name == "BEiTBackbone":
        from keras_paperzoo.models.beit.beit_backbone import beit_parameter_count

        assert count == beit_parameter_count(**config)
    if class_name == "GPTBackbone":
        from keras_paperzoo.models.gpt.gpt_backbone import gpt_parameter_count

        assert count == gpt_parameter_count(**config)
    if (class_name, preset) in PAPER_COUNTS:
        exact, head, paper, tolerance = PAPER_COUNTS[(class_name, preset)]
        assert _trainable(backbone) + head == exact
        assert abs(exact / paper - 1) < tolerance


@pytest.mark.parametrize("class_name, preset", TRAINER_PRESETS, ids=[f"{c}-{p}" for c, p in TRAINER_PRESETS])
def test_trainer_preset_builds(class_name, preset):
    cls = TRAINERS[class_name]
    spec = cls.presets[preset]
    assert spec["description"]
    arguments = set(spec.get("arguments", {}))
    assert arguments <= set(inspect.signature(cls.__init__).parameters), sorted(arguments)
    backbone = spec.get("backbone") or {}
    if backbone.get("preset"):  # the backbone preset exists (its build is tested above)
        backbone_class = cls.backbone_class_for(backbone["preset"])
        if backbone_class is not None:  # (the GAN names its own networks' presets)
            assert backbone["preset"] in backbone_class.presets, backbone
    if class_name in CONFIG_ONLY_TRAINERS and (class_name, preset) not in TINY_TRAINER_PRESETS:
        return
    overrides = {"num_data": 20_000} if "num_data" in inspect.signature(cls.__init__).parameters else {}
    model = _built(cls, preset, **overrides)
    assert model.count_params() > 0
    assert type(model) is cls
