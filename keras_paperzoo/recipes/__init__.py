"""Recipes: what `paperzoo train NAME` runs. Listing them imports no Keras."""

import dataclasses
import importlib


@dataclasses.dataclass(frozen=True)
class Recipe:
    name: str
    paper: str
    description: str
    module: str

    def load(self):
        return importlib.import_module(self.module)


RECIPES = {
    "gan": Recipe(
        "gan",
        "Goodfellow et al. 2014, Generative Adversarial Nets",
        "GAN on images (MLP generator, maxout discriminator, Algorithm 1); Parzen log-likelihood.",
        "keras_paperzoo.recipes.gan",
    ),
}
