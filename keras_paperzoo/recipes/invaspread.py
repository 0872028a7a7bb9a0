"""`paperzoo train invaspread`: InvaSpread self-supervised embedding learning, then kNN and linear probe.

`--preset` picks the configuration (`INVASPREAD_PRESETS`): `invaspread_resnet20_cifar`
(default: the CIFAR ResNet-20 with the authors' CIFAR-10 settings), `invaspread_cifar_resnet18`
(the authors' CIFAR-10 network: CIFAR ResNet-18, linear 512 -> 128 embedding),
`invaspread_tiny` (tests). The images go to the model raw; it draws two views of
each image with the authors' transform (crop of area 0.2-1, colour jitter 0.4,
grayscale 0.2, flip), embeds the 2N views with one network (linear layer to 128-d,
L2-normalised) and minimises the instance-wise softmax loss over the batch: each
view's positive is the other view of its image, its 2N - 2 negatives the views of
the other images (tau 0.1). `InvaSpread.compile()` gives the authors' optimizer for
this run: SGD lr 0.03, momentum 0.9, weight decay 5e-4, the rate x0.1, x0.05 and
x0.01 at epochs 120, 160 and 200 of 301 (here at the same fractions of the run).
The data, the evaluations (kNN every epoch and at initialisation, linear probe
before and after) and the files are the self-supervised recipes'
(`recipes/self_supervised.py`).

What is evaluated: `knn_acc` and the probe use h, backbone + pooling (`encoder.keras`),
as for the other self-supervised recipes. The paper's kNN number is on the 128-d
normalised embedding f (the authors' `kNN` runs on the network's output); the
trained model's `embedding_network` (in `model.keras`) gives f, and it is what
`paperzoo export model.keras` deploys (images normalised by `input_mean` /
`input_std` -> f, for cosine retrieval as in the paper's unseen-category tests).

CPU-budget choices (named, not the authors'): 30 epochs of `digits` (330 updates at
batch 128) against their 301 epochs of CIFAR-10; `digits` upsampled to 16 x 16 and
cropped to at least half their area.
"""

from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "invaspread_resnet20_cifar"
PAPER = ("InvaSpread (Ye et al. 2019, Table 1), CIFAR-10, ResNet-18, 128-d embedding, kNN (k = 200) on the "
         "embedding: 83.6 %; the authors' code trains 301 epochs at batch 128")


def _describe(model):
    return {"temperature": model.temperature, "embedding_dim": model.embedding_dim,
            "original_view": model.original_view}


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.invaspread import INVASPREAD_PRESETS, InvaSpread

    return Pretraining("invaspread", InvaSpread, INVASPREAD_PRESETS, DEFAULT_PRESET, PAPER, describe=_describe)


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
