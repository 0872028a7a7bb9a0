"""The backend's global random generator, for the draws no `SeedGenerator` state controls.

On PyTorch, Keras's dropout with an unseeded `SeedGenerator` (every `Dropout` layer built
without a `seed`) takes the fast path `torch.nn.functional.dropout`, which draws from
torch's global generator, not from the layer's seed state. JAX and TensorFlow draw every
Keras random op from a `SeedGenerator` state, so they have nothing to set here.
"""

import keras


def seed_global_generator(seed):
    """Seed the backend's global generator (PyTorch's; a no-op on JAX and TensorFlow) with an int."""
    if keras.backend.backend() == "torch":
        import torch

        torch.manual_seed(int(seed))
