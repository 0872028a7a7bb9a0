"""The reference scale: lightly's and solo-learn's published CIFAR-10 figures (not our data, backbone or budget).

- lightly: https://docs.lightly.ai/self-supervised-learning/getting_started/benchmarks.html
  (source: github.com/lightly-ai/lightly, docs/source/getting_started/benchmarks.rst, read at
  commit 0243660b): CIFAR-10, the CIFAR variant of ResNet-18 (3 x 3 stem, no max-pool), batch
  512, 200 and 800 epochs, kNN (k = 200) top-1 on the test set, the best over all epochs.
- solo-learn: https://github.com/vturrisi/solo-learn (README.md, "Results / CIFAR-10", read at
  commit 0126879f): ResNet-18, 1000 epochs, online linear top-1 (Acc@1).

Methods neither table has are "-" (InstDisc, InvaSpread, CMC, CPC, DenseCL, BEiT, iGPT; MAE is
only in lightly's ImageNet tables).
"""

LIGHTLY_URL = "https://docs.lightly.ai/self-supervised-learning/getting_started/benchmarks.html"
SOLO_LEARN_URL = "https://github.com/vturrisi/solo-learn"
LIGHTLY = {  # kNN top-1 (%), CIFAR-10, ResNet-18, batch 512: {method: (200 epochs, 800 epochs)}
    "moco_v2": (84.7, 89.9),  # "Moco" (memory bank 8192 at batch 512)
    "simclr": (84.8, 87.9),
    "byol": (86.8, 91.0),
    "swav": (84.2, 88.4),
}
SOLO_LEARN = {  # linear top-1 (%, online), CIFAR-10, ResNet-18, 1000 epochs
    "moco_v2": 91.88,  # "MoCo V2+"
    "simclr": 90.74,
    "byol": 92.58,
    "swav": 89.17,
}
SETTINGS = {
    "lightly": "lightly, CIFAR-10, ResNet-18 (CIFAR stem), batch 512, 200 / 800 epochs, kNN k = 200 top-1 "
               f"(best epoch): {LIGHTLY_URL}",
    "solo_learn": f"solo-learn, CIFAR-10, ResNet-18, 1000 epochs, online linear top-1: {SOLO_LEARN_URL} (README)",
}


def cells(name):
    """(lightly "200 ep / 800 ep" kNN, solo-learn linear) for the table, "-" where none is published."""
    lightly = LIGHTLY.get(name)
    solo = SOLO_LEARN.get(name)
    return (f"{lightly[0]} / {lightly[1]}" if lightly else "-", f"{solo}" if solo else "-")
