"""Restoring a trainer's compile state from a `.keras` file.

Trainers override `compile()` to supply the paper's optimizer, so Keras's default
`compile_from_config` (which calls the overridden `compile`) would rebuild the
defaults instead of what was saved. `restore_compile` compiles with exactly the
saved arguments and builds the optimizer so its saved variables can be loaded.
"""

import keras


def restore_compile(model, config):
    """`keras.Model.compile(model, **saved)`, then build the optimizer on the model's variables.

    Use as a trainer's `compile_from_config`:

    ```python
    def compile_from_config(self, config):
        restore_compile(self, config)
    ```
    """
    config = keras.saving.deserialize_keras_object(config)
    keras.Model.compile(model, **config)
    if model.built:
        model.optimizer.build(model.trainable_variables)
