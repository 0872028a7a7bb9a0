"""Corpus BLEU with sacreBLEU (Post 2018), the score translation papers report.

sacreBLEU scores detokenized (raw) hypotheses against raw references with its own
standard tokenization (13a) and reports the signature that makes numbers comparable.
Vaswani et al. 2017 report tokenized BLEU on WMT14 (multi-bleu.perl), which is not
directly comparable; Multi30k reproductions usually quote sacreBLEU or torchtext BLEU.
sacreBLEU is an optional dependency: `pip install keras-paperzoo[text]`.
"""


def corpus_bleu(hypotheses, references, lowercase=False):
    """sacreBLEU corpus BLEU of hypothesis strings against one reference string each.

    Returns a dict: `bleu` (0-100), `precisions` (1- to 4-gram, %), `brevity_penalty`,
    `hypothesis_length`, `reference_length`, `signature`.

    Example:

    ```python
    corpus_bleu(["A dog runs in the park."], ["A dog runs in the park."])["bleu"]  # 100.0
    ```
    """
    try:
        import sacrebleu
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("corpus_bleu needs sacrebleu: pip install keras-paperzoo[text] (or sacrebleu).") from error
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise ValueError(
            f"corpus_bleu needs one reference per hypothesis; got {len(hypotheses)} hypotheses "
            f"and {len(references)} references."
        )
    if not hypotheses:
        raise ValueError("corpus_bleu needs at least one hypothesis.")
    metric = sacrebleu.metrics.BLEU(lowercase=lowercase)
    score = metric.corpus_score(hypotheses, [references])
    return {
        "bleu": float(score.score),
        "precisions": [float(p) for p in score.precisions],
        "brevity_penalty": float(score.bp),
        "hypothesis_length": int(score.sys_len),
        "reference_length": int(score.ref_len),
        "signature": str(metric.get_signature()),
    }
