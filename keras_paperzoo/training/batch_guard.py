"""The smallest batch, checked inside the training step (`SelfSupervisedTrainer.train_step`).

JAX traces the step per batch shape and PyTorch runs it eagerly, so the batch size
is a Python int there and a batch too small raises a ValueError before any update.
TensorFlow traces a `PyDataset` or a generator with an unknown batch dimension
(`None`): there the step carries an assertion instead, and `tensorflow_batch_errors`
turns its failure back into the same one-line ValueError. Under XLA
(`jit_compile=True`, TensorFlow's default on a GPU) assertions are dropped: NumPy
data and `EpochShuffledBatches` are checked before `fit` starts on every backend
(`Trainer.check_fit_data`), a `tf.data` pipeline on an XLA-compiled step is not.
"""

import contextlib
import re

import keras

MARK = "paperzoo-batch-guard: "


def check_batch_dimension(leaf, minimum, refuse):
    """Refuse `leaf`'s batch (its first dimension) when below `minimum`.

    Args:
        leaf: a tensor of the batch. minimum: the smallest batch.
        refuse: `refuse(batch)` raises the ValueError naming the batch size and the rule
            (`batch` is None inside TensorFlow's graph, where the message is built once).
    """
    batch = leaf.shape[0]
    if isinstance(batch, int):
        if batch < minimum:
            refuse(batch)
        return
    if keras.backend.backend() == "tensorflow" and minimum > 1:
        import tensorflow as tf

        try:
            refuse(None)
        except ValueError as error:
            message = str(error)
        tf.debugging.assert_greater_equal(tf.shape(leaf)[0], minimum, message=MARK + message)


@contextlib.contextmanager
def tensorflow_batch_errors():
    """Around `fit`: TensorFlow's failed batch assertion (`check_batch_dimension`) raised as a one-line ValueError."""
    if keras.backend.backend() != "tensorflow":
        yield
        return
    import tensorflow as tf

    try:
        yield
    except tf.errors.InvalidArgumentError as error:
        text = str(error)
        if MARK not in text:
            raise
        message, _, condition = text.split(MARK, 1)[1].partition("] [Condition")
        message = message.splitlines()[0].replace("\\'", "'")
        batch = re.search(r"\[x \([^)]*\) = \] \[(\d+)\]", condition)  # the batch size TensorFlow saw
        if batch:
            message = message.replace("a smaller batch", f"a batch of {batch.group(1)}")
        raise ValueError(message) from None
