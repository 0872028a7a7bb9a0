"""GPT-3's optimizer and learning-rate schedule (Brown et al. 2020, Appendix B and Table 2.1).

Appendix B: "Adam with beta_1 = 0.9, beta_2 = 0.95, and epsilon = 10^-8, we clip the
global norm of the gradient at 1.0, and we use cosine decay for learning rate down to
10% of its value, over 260 billion tokens (after 260 billion tokens, training
continues at 10% of the original learning rate). There is a linear LR warmup over
the first 375 million tokens. ... All models use weight decay of 0.1". The peak
learning rate and the batch size (tokens) of each size are Table 2.1's (the
presets' "training" entry). All models train on 300 billion tokens.

Deviations: the batch-size warmup ("from a small value (32k tokens) to the full value
over the first 4-12 billion tokens") is not reproduced (a `fit` batch size is fixed);
biases and LayerNorm gains are exempt from weight decay as in GPT-1's recipe
(`SelectiveDecayAdamW`; the GPT-3 paper does not say).

Example:

```python
lm = GPTCausalLM(GPTBackbone.from_preset("gpt3_small"))
lm.compile(optimizer=gpt3_optimizer("gpt3_small"))                   # the paper's 300B tokens: 600k steps
lm.compile(optimizer=gpt3_optimizer("gpt3_small", total_steps=5000))  # the same shape over 5000 updates
```
"""

from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS
from keras_paperzoo.training.schedules import WarmupCosineDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

TRAINING_TOKENS = 300e9  # Table 2.1 caption: "trained for a total of 300 billion tokens"
WARMUP_TOKENS = 375e6
DECAY_TOKENS = 260e9  # cosine to 10 % over these, then constant
FINAL_FRACTION = 0.1


def gpt3_optimizer(preset, total_steps=None, peak_learning_rate=None, batch_size_tokens=None, weight_decay=0.1):
    """GPT-3's AdamW and schedule for a `gpt3_*` preset.

    Args:
        preset: a `GPT_PRESETS` name with a "training" entry (`gpt3_small` ... `gpt3_175b`).
        total_steps: the run's updates: warmup and cosine take the paper's fractions of
            it (375M / 300B and 260B / 300B). None: the paper's run, 300B tokens in
            batches of `batch_size_tokens`.
        peak_learning_rate, batch_size_tokens: Table 2.1's for the preset when None.
        weight_decay: 0.1 (Appendix B).
    """
    training = GPT_PRESETS.get(preset, {}).get("training")
    if training is None:
        known = sorted(name for name, p in GPT_PRESETS.items() if "training" in p)
        raise ValueError(f"gpt3_optimizer needs a GPT-3 preset; got {preset!r}, known: {', '.join(known)}.")
    peak = float(peak_learning_rate or training["peak_learning_rate"])
    batch = float(batch_size_tokens or training["batch_size_tokens"])
    if total_steps is None:
        warmup, decay_end = round(WARMUP_TOKENS / batch), round(DECAY_TOKENS / batch)
    else:
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be a positive int (updates); got total_steps={total_steps!r}.")
        warmup = round(total_steps * WARMUP_TOKENS / TRAINING_TOKENS)
        decay_end = max(1, round(total_steps * DECAY_TOKENS / TRAINING_TOKENS))
    schedule = WarmupCosineDecay(peak, warmup_steps=warmup, total_steps=decay_end, alpha=FINAL_FRACTION)
    return SelectiveDecayAdamW(schedule, weight_decay=weight_decay, beta_1=0.9, beta_2=0.95, epsilon=1e-8,
                               global_clipnorm=1.0)
