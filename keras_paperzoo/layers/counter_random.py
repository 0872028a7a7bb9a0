"""Counter-based random numbers that are the same on TensorFlow, JAX and PyTorch.

`keras.random` draws different numbers on each backend for one seed. The masking
layers (`RandomMasking`, `BlockwiseMasking`) and iGPT's BERT mask instead hash
(seed, counter, index) with MurmurHash3's finaliser (`fmix32`) in
wrapping int32 `keras.ops`: the layer's `keras.random.SeedGenerator` supplies
(seed, counter) per call as it does for every Keras random op, so runs stay seeded,
resumable and JAX-traceable, and one seed gives one mask on every backend.

```python
generator = keras.random.SeedGenerator(0)
stream = seed_stream(generator)                                    # () int32, one per call
u = unit_uniform(hashed_bits(stream, keras.ops.arange(10, dtype="int32")))  # (10,) in [0, 1)
```
"""

from keras import ops

# MurmurHash3 fmix32 multipliers, as signed int32 (0x85EBCA6B, 0xC2B2AE35).
_FMIX_C1 = 0x85EBCA6B - (1 << 32)
_FMIX_C2 = 0xC2B2AE35 - (1 << 32)
GOLDEN = 0x9E3779B9 - (1 << 32)


def logical_right_shift(x, bits):
    """x >>> bits on int32 (each backend's `>>` is arithmetic on signed ints)."""
    return ops.bitwise_and(ops.right_shift(x, bits), (1 << (32 - bits)) - 1)


def fmix32(x):
    """MurmurHash3's 32-bit finaliser on int32 tensors (a bijection with full avalanche)."""
    x = ops.bitwise_xor(x, logical_right_shift(x, 16))
    x = ops.multiply(x, ops.convert_to_tensor(_FMIX_C1, "int32"))
    x = ops.bitwise_xor(x, logical_right_shift(x, 13))
    x = ops.multiply(x, ops.convert_to_tensor(_FMIX_C2, "int32"))
    return ops.bitwise_xor(x, logical_right_shift(x, 16))


def seed_stream(seed_generator):
    """() int32: the hash of the generator's next (seed, counter), as `RandomMasking.sort_keys` derives it."""
    state = ops.cast(seed_generator.next(), "int32")  # (seed, counter), as for keras.random
    return fmix32(ops.bitwise_xor(fmix32(state[0]), fmix32(ops.add(state[1], GOLDEN))))


def hashed_bits(stream, index):
    """int32 hashes of an int32 `index` tensor under `stream` (any shape)."""
    return fmix32(ops.add(index, stream))


def unit_uniform(bits):
    """Uniform float32 in [0, 1) from the top 24 bits of int32 hashes (exact in float32)."""
    return ops.cast(logical_right_shift(bits, 8), "float32") * (2.0 ** -24)
