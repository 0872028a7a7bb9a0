"""A synthetic 1-D signal with slow, shared structure: the sequence data of CPC's audio preset, without a download.

CPC v1 (van den Oord et al. 2018, Sec. 3.1) learns from raw 16 kHz speech that
what a window shares with its future is slow: the speaker, the phoneme. This
signal has both kinds: each sequence belongs to one of `classes` "speakers",
each with its own fundamental frequency, and is cut into segments ("phonemes")
that each play one random harmonic (1st to `harmonics`-th) of that fundamental
with a random amplitude and phase, plus white noise. The near future shares the
segment's harmonic; the far future shares only the fundamental, so predicting
it means recognising the speaker, which the labels are.

Example:

```python
signals, speakers = synthetic_signal(256, length=1280, seed=0)   # (256, 1280, 1) float32, (256,) int
cpc = CPC.from_preset("cpc_sequence_tiny")
cpc.compile()
cpc.fit(signals, batch_size=8, epochs=5)
```
"""

import numpy as np


def synthetic_signal(count, length=1280, classes=4, segment=320, harmonics=3, noise=0.1, seed=0):
    """(signals (count, length, 1) float32, labels (count,) int64): segments of harmonics of a class's frequency.

    Args:
        count: sequences.
        length: samples per sequence.
        classes: "speakers"; sequence i has class i % classes (balanced).
        segment: samples per "phoneme" segment.
        harmonics: each segment plays the fundamental times 1..harmonics.
        noise: standard deviation of the added white noise (the tones have amplitude 0.5 to 1).
        seed: NumPy seed.
    """
    for name, value, low in (("count", count, 1), ("length", length, 1), ("classes", classes, 1),
                             ("segment", segment, 1), ("harmonics", harmonics, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"synthetic_signal {name} must be an int >= {low}; got {value!r}.")
    if not noise >= 0:
        raise ValueError(f"synthetic_signal noise must be >= 0; got {noise!r}.")
    rng = np.random.default_rng(seed)
    # Fundamentals in cycles per sample, spread so that every harmonic stays below Nyquist / 2.
    fundamentals = np.linspace(0.012, 0.03, classes) if classes > 1 else np.array([0.02])
    labels = np.arange(count) % classes
    segments = -(-length // segment)
    harmonic = rng.integers(1, harmonics + 1, size=(count, segments))  # (count, segments)
    amplitude = rng.uniform(0.5, 1.0, size=(count, segments))
    phase = rng.uniform(0.0, 2 * np.pi, size=(count, segments))
    t = np.arange(length)
    which = t // segment  # (length,): each sample's segment
    frequency = fundamentals[labels][:, None] * harmonic[:, which]  # (count, length)
    signals = amplitude[:, which] * np.sin(2 * np.pi * frequency * t[None, :] + phase[:, which])
    signals = signals + noise * rng.standard_normal(signals.shape)
    return signals[..., None].astype("float32"), labels.astype("int64")
