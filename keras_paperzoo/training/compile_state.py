"""Restoring a trainer's compile state from a `.keras` file.

Trainers override `compile()` to supply the paper's optimizer, so Keras's default
`compile_from_config` (which calls the overridden `compile`) would rebuild the
defaults instead of what was saved. `restore_compile` compiles with exactly the
saved arguments and builds the optimizer so its saved variables can be loaded.
"""

import keras

from keras_paperzoo.training.step import MultiOptimizerTrainer


def restore_compile(model, config):
    """`keras.Model.compile(model, **saved)`, then build the optimizer on the model's variables.

    Use as a trainer's `compile_from_config`:

    ```python
    def compile_from_config(self, config):
        restore_compile(self, config)
    ```

    A `MultiOptimizerTrainer` (one optimizer per group, held in an `OptimizerGroup`)
    is restored by its own `compile_from_config`, which routes the saved optimizers
    back to their groups.
    """
    if isinstance(model, MultiOptimizerTrainer):
        MultiOptimizerTrainer.compile_from_config(model, config)
        return
    config = keras.saving.deserialize_keras_object(config)
    keras.Model.compile(model, **config)
    if model.built:
        model.optimizer.build(_variables_trained(model))


def _variables_trained(model):
    """The variables the saved optimizer was built on: the trainable ones, or, for a model saved frozen
    (BEiT's tokenizer inside `BEiT`: trained, then `trainable = False`), those it trained before.

    Keras's `trainable` setter freezes every sublayer, so thawing and freezing again restores the state.
    """
    if model.trainable:
        return model.trainable_variables
    model.trainable = True
    variables = list(model.trainable_variables)
    model.trainable = False
    return variables
