"""One tiny instance of every trainer family with a batch of its inputs: the table that the
cross-cutting tests (no TensorFlow, mixed precision) run every trainer through.

`TRAINERS[name]()` returns (model, x, y, batch_size): a fresh model (not compiled), NumPy
inputs `model.fit(x, y, ...)` takes (y None for the self-supervised and GAN trainers), and a
batch size that divides the number of examples. Which instances exist is the papers' records'
(`Paper.tiny` in keras_paperzoo/papers.py): one built from a preset there, or one built by the
function of its name here.
"""

import numpy as np

from keras_paperzoo.papers import PAPERS

IMAGES = 16  # images per fit; 16 x 16 RGB


def _images(n=IMAGES, size=16, channels=3, seed=0):
    return np.random.default_rng(seed).random((n, size, size, channels)).astype("float32")  # (N, H, W, C)


def gan():
    from keras_paperzoo.models.gan import GAN

    return GAN.from_preset("gan_mnist_small", image_shape=(8, 8, 1), seed=0), _images(size=8, channels=1), None, 8


def resnet():
    from keras_paperzoo.models import ImageClassifier, ResNetBackbone

    backbone = ResNetBackbone.from_preset("resnet20_cifar", stage_blocks=(1, 1, 1), image_shape=(16, 16, 3))
    return ImageClassifier(backbone, 10), _images(), np.arange(IMAGES) % 10, 8


def vit():
    from keras_paperzoo.models import ImageClassifier, ViTBackbone

    backbone = ViTBackbone.from_preset("vit_ti16", image_shape=(16, 16, 3), patch_size=8, num_layers=1)
    return ImageClassifier(backbone, 10), _images(), np.arange(IMAGES) % 10, 8


def _ssl(cls_name, preset, indexed=False, **overrides):
    def build():
        from keras_paperzoo.data.indexed import with_index
        from keras_paperzoo.papers import trainer_class

        model = trainer_class(cls_name).from_preset(preset, **overrides)
        images = _images()
        return model, (with_index(images) if indexed else images), None, 8

    build.__name__ = preset
    return build


def gpt():
    from keras_paperzoo.models import GPTBackbone, GPTCausalLM

    backbone = GPTBackbone.from_preset("gpt_char_tiny", num_layers=1)
    ids = np.random.default_rng(0).integers(0, backbone.vocabulary_size, size=(IMAGES, 17)).astype("int32")
    return GPTCausalLM(backbone), ids[:, :-1], ids[:, 1:], 8


def bert():
    from keras_paperzoo.models import BertBackbone, BertPretrainer

    backbone = BertBackbone.from_preset("bert_tiny", num_layers=1, vocabulary_size=100, max_sequence_length=16)
    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(0, 100, size=(IMAGES, 16)).astype("int32"),
         "segment_ids": np.zeros((IMAGES, 16), "int32"), "padding_mask": np.ones((IMAGES, 16), "int32"),
         "mask_positions": np.tile(np.arange(1, 4, dtype="int32"), (IMAGES, 1))}
    y = {"mask_ids": rng.integers(0, 100, size=(IMAGES, 3)).astype("int32"),
         "mask_weights": np.ones((IMAGES, 3), "float32"),
         "next_sentence_labels": rng.integers(0, 2, size=(IMAGES,)).astype("int32")}
    return BertPretrainer(backbone), x, y, 8


def transformer():
    from keras_paperzoo.models import TransformerBackbone, TransformerTranslator

    # (no dropout: TensorFlow draws its masks in the compute dtype, so a policy would change the masks, not just the rounding)
    backbone = TransformerBackbone(vocabulary_size=40, num_layers=1, hidden_dim=16, intermediate_dim=32, num_heads=2,
                                   dropout=0.0)
    rng = np.random.default_rng(0)
    source = rng.integers(4, 40, size=(IMAGES, 9)).astype("int32")
    target = rng.integers(4, 40, size=(IMAGES, 8)).astype("int32")  # (N, T): the decoder sees <s> + target[:-1]
    decoder_ids = np.concatenate([np.full((IMAGES, 1), 2, "int32"), target[:, :-1]], axis=1)
    return TransformerTranslator(backbone), {"encoder_token_ids": source, "decoder_token_ids": decoder_ids}, target, 8


def igpt():
    from keras_paperzoo.models import GPTBackbone, IGPT

    backbone = GPTBackbone(vocabulary_size=9, num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32,
                           max_sequence_length=16, dropout=0.0)
    model = IGPT(backbone, seed=0)
    kernel = model.logits_projection.kernel  # zero-initialised (released code): make the first loss depend on the input
    kernel.assign(np.random.default_rng(1).normal(size=kernel.shape).astype("float32"))
    ids = np.random.default_rng(0).integers(0, 8, size=(IMAGES, 16)).astype("int32")  # (N, 4 x 4 palette ids)
    return model, ids, None, 8


def visual_tokenizer():
    from keras_paperzoo.models import VisualTokenizer

    model = VisualTokenizer(image_shape=(16, 16, 1), patch_size=2, vocabulary_size=16, hidden_dim=8, num_res_blocks=1,
                            temperature_steps=40, kl_warmup_steps=20, seed=0)
    return model, _images(channels=1), None, 8


def beit():
    from keras_paperzoo.models import BEiT, BEiTBackbone

    tokenizer, images, _, _ = visual_tokenizer()  # untrained: its ids are as good a target as trained ones here
    backbone = BEiTBackbone(image_shape=(16, 16, 1), patch_size=2, num_layers=1, hidden_dim=16, num_heads=2, mlp_dim=32)
    return BEiT(backbone, tokenizer, seed=0), images, None, 8


def _from_record(tiny):
    """A paper record's tiny instance (keras_paperzoo.papers.Tiny): its preset, or the builder of its name above."""
    return _ssl(tiny.trainer, tiny.preset, tiny.indexed, **tiny.overrides) if tiny.preset else globals()[tiny.name]


# Every paper record's tiny instances, by name (a new paper's trainer is in the table the day its record is).
TRAINERS = {tiny.name: _from_record(tiny) for paper in PAPERS for tiny in paper.tiny}
