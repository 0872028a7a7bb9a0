"""Recipes: what `paperzoo train NAME` runs. Listing them imports no Keras.

Each is a field of its paper's record (keras_paperzoo/papers.py); `RECIPES` is read from there.

Each recipe declares the `paperzoo train` flags it reads beyond `COMMON_FLAGS` (its
`flags`, argparse names); `paperzoo train` refuses any other flag in one line before
Keras is imported (tests/test_cli.py checks each declared flag is read by the recipe).
"""

import dataclasses

from keras_paperzoo.papers import PAPERS, Recipe  # noqa: F401 (Recipe: the class of every value)

# The flags every recipe reads (`common.start_run` takes --output-dir, --resume, --seed, --data-parallel).
COMMON_FLAGS = ("dataset", "epochs", "steps_per_epoch", "batch_size", "preset", "output_dir", "backend", "seed",
                "resume", "data_parallel", "verbose")
RECIPES = {paper.recipe.name: dataclasses.replace(paper.recipe, paper=paper.citation)
           for paper in PAPERS if paper.recipe is not None}
