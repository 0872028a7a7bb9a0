"""Reproductions: what `paperzoo reproduce PAPER --budget B` runs. Listing them imports no Keras.

Each paper maps to one module of this package (its data, model, schedule, evaluation and
report, with the paper's number beside ours) and to four budgets, each the module's
arguments for that budget:

- `smoke`: seconds on the embedded digits or built-in text, for tests (no download);
- `cpu`: the budget that was run on a 2-core CPU (the results in applications/results/);
- `gpu`: a schedule for one accelerator, between the CPU budget and the paper's;
- `paper`: the paper's own schedule, scaled only where its data (ImageNet, WMT, JFT)
  is not offline; `notes` says what.

Arguments given after the budget (`paperzoo reproduce resnet --budget cpu --nets
resnet20_cifar`) are passed to the module and override the budget's.

The module, budgets, notes, required packages and the paper's setting are the `reproduction`
field of the paper's record (keras_paperzoo/papers.py); `REPRODUCTIONS` is read from there,
with the record's name, citation and claim.
"""

import dataclasses

from keras_paperzoo.papers import BUDGETS, PAPERS, Reproduction  # noqa: F401 (the budgets' names, the class)

REPRODUCTIONS = {paper.name: dataclasses.replace(paper.reproduction, name=paper.name, paper=paper.citation,
                                                 claim=paper.claim)
                 for paper in PAPERS if paper.reproduction is not None}
