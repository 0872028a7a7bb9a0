"""GPT-2's zero-shot tasks (Radford et al. 2019, Sec. 3): LAMBADA, "TL;DR:" summarization, translation prompts.

GPT-2 evaluates a language model on tasks it was never trained for by writing the task
into the text it continues:

- LAMBADA (Sec. 3.3): predict the final word of a passage; accuracy and the final word's
  perplexity (Table 3: 45.99 % / 35.13 for the 117M model ... 63.24 % / 8.63 for 1542M).
  "Adding a stop-word filter as an approximation to this [the word must be the final
  word of the sentence] further increases accuracy to 63.24%": Table 3's accuracies use
  the filter; `lambada_accuracy` reports both, the filtered one as "accuracy" by default.
- Summarization (Sec. 3.6): "we add the text TL;DR: after the article and generate 100
  tokens with Top-k random sampling (Fan et al., 2018) with k = 2 ... We use the first 3
  generated sentences in these 100 tokens as the summary"; ROUGE 1, 2, L F1 (Table 4).
- Translation (Sec. 3.7): "we condition the language model on a context of example pairs
  of the format english sentence = french sentence and then after a final prompt of
  english sentence = we sample from the model with greedy decoding and use the first
  generated sentence as the translation"; BLEU (sacreBLEU here).

Each takes a `GPTCausalLM` (generation through its `generate`, with the key/value cache)
and a tokenizer with `tokenize(str)` / `detokenize(ids)` (`CharTokenizer`, keras-hub's
byte-pair tokenizers). `lambada_accuracy` needs only the causal-LM call
`model(token_ids (B, T)) -> logits (B, T, V)`. With the released GPT-2 weights
(a Hugging Face `gpt2` folder with `vocab.json` and `merges.txt`):

```python
from keras_paperzoo.convert import from_transformers
from keras_paperzoo.models.gpt import GPTCausalLM

backbone, tokenizer = from_transformers("/path/to/gpt2", return_tokenizer=True)
lm = GPTCausalLM(backbone, tokenizer=tokenizer)
lambada_accuracy(lm, tokenizer, lambada_texts)["accuracy"]
summarize_tldr(lm, tokenizer, articles, references=highlights, seed=0)["rouge_avg"]
translate_prompt(lm, tokenizer, english, pairs, references=french)["bleu"]
```
"""

import collections
import re

import numpy as np

from keras_paperzoo.evaluation.bleu import corpus_bleu
from keras_paperzoo.evaluation.few_shot import Scorer, choice_log_likelihoods, decode_ids, encode_text, mean_and_stderr

# The stop-word filter's list. GPT-2 names no list; these are English function words (pronouns,
# articles, auxiliaries, prepositions, conjunctions), a subset of NLTK's English stop words.
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves what which who whom this that these those am is are
    was were be been being have has had having do does did doing a an the and but if or because as until while of
    at by for with about against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each few more most other
    some such no nor not only own same so than too very s t can will just don should now""".split()
)

_WORD = re.compile(r"\s*([\w'\-]*)")  # a decoded continuation's first word
_WORD_ENDED = re.compile(r"\s*(?:[\w'\-]+[^\w'\-]|[^\w\s'\-])")  # ... and a character after it, or no word


def lambada_split(text):
    """(context, final word) of a LAMBADA passage: the text before its last whitespace, and the word after it.

    The target continuation is `" " + word` (lm-evaluation-harness's convention), so a
    byte-pair tokenizer sees the word with its leading space. Example:
    `lambada_split("he turned to look at the door")` -> `("he turned to look at the", "door")`.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            f"A LAMBADA text must be a non-empty string (a context, a space, its final word); got {text!r}."
        )
    parts = text.strip().rsplit(maxsplit=1)
    if len(parts) < 2:
        raise ValueError(
            f"LAMBADA text {text!r} has no context before its final word; a text needs at least two "
            f"whitespace-separated words."
        )
    return parts[0], parts[1]


def lambada_accuracy(model, tokenizer, texts, stop_word_filter=True, stop_words=STOP_WORDS, max_word_tokens=16,
                     filter_candidates=10, context_length=None):
    """LAMBADA last-word accuracy and perplexity (GPT-2 Sec. 3.3, Table 3), zero-shot.

    Each text is split into its context and final word (`lambada_split`). The word is
    right when greedy decoding from the context reproduces all its tokens (the first
    len(" " + word) generated tokens equal its tokens; lm-evaluation-harness's rule). The
    perplexity is exp(-mean over texts of log P(" " + word | context)), the word's
    log-probability summed over its tokens (Table 3's "PPL").

    Stop-word filter (GPT-2: "Adding a stop-word filter as an approximation to this
    further increases accuracy to 63.24%"; the paper gives neither the list nor the
    procedure). Here: greedy decoding runs to the end of the predicted word; when that
    word is in `stop_words` (lower-cased), decoding restarts at the step where the word's
    first character appeared with the next most likely token there (at most
    `filter_candidates` of them, most likely first), each continued greedily to the end of
    its word; the first that is not a stop word is the prediction. A passage whose true
    final word is a stop word is then always wrong with the filter (rare in LAMBADA).

    Args:
        model: a `GPTCausalLM`, or any causal LM `model(token_ids (B, T)) -> logits (B, T, V)`.
        tokenizer: `tokenize(str)` / `detokenize(ids)` (`CharTokenizer`, keras-hub).
        texts: list of passages, each ending with its target word.
        stop_word_filter: True (Table 3's numbers): "accuracy" is the filtered one.
            Both "accuracy_filtered" and "accuracy_unfiltered" are always reported.
        stop_words: the filter's words (default `STOP_WORDS`).
        max_word_tokens: the longest predicted word decoded, in tokens (at least the
            target's length is always decoded).
        filter_candidates: the alternatives tried at the word's first character.
        context_length: the model's context (default `model.backbone.max_sequence_length`).

    Returns a dict: "accuracy", "accuracy_stderr" (sample std / sqrt(n)),
    "accuracy_filtered", "accuracy_unfiltered" (with their "_stderr"), "perplexity",
    "num_examples", "stop_word_filter", and "records" (per text: context, target,
    prediction, prediction_filtered, log_likelihood, num_tokens, correct_unfiltered,
    correct_filtered).

    Example:

    ```python
    lambada_accuracy(lm, tokenizer, ["the cat sat on the mat", "she opened the door"])["accuracy"]
    ```
    """
    texts = [texts] if isinstance(texts, str) else list(texts)
    if not texts:
        raise ValueError("lambada_accuracy needs at least one text; got an empty list.")
    context = int(context_length or model.backbone.max_sequence_length)
    stop_words = frozenset(w.lower() for w in stop_words)
    examples = []
    for index, text in enumerate(texts):  # every text checked before the model runs
        try:
            prefix, word = lambada_split(text)
        except ValueError as error:
            raise ValueError(f"texts[{index}]: {error}") from None
        prompt_ids, target_ids = encode_text(tokenizer, prefix), encode_text(tokenizer, " " + word)
        if len(prompt_ids) + len(target_ids) > context:
            raise ValueError(
                f"texts[{index}]: its context of {len(prompt_ids)} tokens and final word of {len(target_ids)} need "
                f"{len(prompt_ids) + len(target_ids)} positions, more than the model's context of {context}."
            )
        examples.append((prefix, word, prompt_ids, target_ids))
    candidates = max(2, int(filter_candidates) + 1)  # the greedy token and the alternatives
    vocabulary = getattr(getattr(model, "backbone", None), "vocabulary_size", None)
    scorer = Scorer(model, context, top_k=min(candidates, vocabulary or candidates))
    records = []
    for prefix, word, prompt_ids, target_ids in examples:
        [log_likelihood] = choice_log_likelihoods(model, prompt_ids, [target_ids], scorer)
        limit = min(max(int(max_word_tokens), len(target_ids)), context - len(prompt_ids))
        decode = lambda start: _decode_word(scorer, tokenizer, prompt_ids, start, len(target_ids), limit)  # noqa: E731
        tokens, predicted = decode([])
        filtered_tokens, filtered = tokens, predicted
        if predicted.lower() in stop_words:
            filtered_tokens, filtered = _filter_stop_word(scorer, tokenizer, prompt_ids, tokens, decode, stop_words)
        records.append({
            "context": prefix, "target": word, "prediction": predicted, "prediction_filtered": filtered,
            "log_likelihood": log_likelihood, "num_tokens": len(target_ids),
            "correct_unfiltered": tokens[: len(target_ids)] == target_ids,
            "correct_filtered": filtered_tokens[: len(target_ids)] == target_ids,
        })
    result = {"num_examples": len(records), "stop_word_filter": bool(stop_word_filter)}
    for kind in ("filtered", "unfiltered"):
        mean, stderr = mean_and_stderr([r[f"correct_{kind}"] for r in records])
        result[f"accuracy_{kind}"], result[f"accuracy_{kind}_stderr"] = mean, stderr
    chosen = "filtered" if stop_word_filter else "unfiltered"
    result["accuracy"], result["accuracy_stderr"] = result[f"accuracy_{chosen}"], result[f"accuracy_{chosen}_stderr"]
    result["perplexity"] = float(np.exp(-np.mean([r["log_likelihood"] for r in records])))
    result["records"] = records
    return result


def _decode_word(scorer, tokenizer, prompt_ids, start, need, limit):
    """Greedy continuation of prompt + `start` until its first word has ended and `need` tokens exist (or `limit`)."""
    generated = list(start)
    while len(generated) < limit:
        if len(generated) >= need and _WORD_ENDED.match(decode_ids(tokenizer, generated)):
            break
        greedy = scorer([prompt_ids + generated])[1]  # (1, L)
        generated.append(int(greedy[0, len(prompt_ids) + len(generated) - 1]))
    return generated, _WORD.match(decode_ids(tokenizer, generated)).group(1)


def _filter_stop_word(scorer, tokenizer, prompt_ids, tokens, decode, stop_words):
    """The stop-word filter: the next most likely tokens where the predicted word's first character appeared."""
    branch = next(s for s in range(len(tokens)) if decode_ids(tokenizer, tokens[: s + 1]).strip())
    top = scorer([prompt_ids + tokens[:branch]])[2][0, len(prompt_ids) + branch - 1]  # (k,), most likely first
    for candidate in top:
        if int(candidate) == tokens[branch]:
            continue
        other, word = decode(tokens[:branch] + [int(candidate)])
        if word.lower() not in stop_words:
            return other, word
    return tokens, _WORD.match(decode_ids(tokenizer, tokens)).group(1)  # every candidate a stop word: unfiltered


# --- generation prompts -------------------------------------------------------------------------

def tldr_prompt(article):
    """GPT-2 Sec. 3.6's summarization prompt: the article, a new line, "TL;DR:"."""
    return f"{article}\nTL;DR:"


def translation_prompt(sentence, examples, separator=" = ", delimiter="\n"):
    """GPT-2 Sec. 3.7's prompt: example pairs "source = target", one a line, then "sentence =".

    Example: `translation_prompt("a cat", [("a dog", "un chien")])` -> `"a dog = un chien\\na cat ="`.
    """
    pairs = [f"{source}{separator}{target}" for source, target in examples]
    return delimiter.join(pairs + [f"{sentence}{separator.rstrip()}"])


def first_sentences(text, count=3):
    """The first `count` sentences of `text` (ended by . ! or ? and whitespace, or by a new line), joined by a space."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]
    return " ".join(sentences[:count])


def summarize_tldr(model, tokenizer, articles, references=None, max_new_tokens=100, top_k=2, seed=None,
                   num_sentences=3, batch_size=8):
    """Zero-shot summaries by the "TL;DR:" prompt (GPT-2 Sec. 3.6, Table 4), with ROUGE when references are given.

    Each article becomes `tldr_prompt(article)`; `max_new_tokens` (100) tokens are drawn
    by top-k random sampling with k = `top_k` (2), through `model.generate`
    (`keras_hub.samplers.TopKSampler(k, seed)`, key/value cache); the summary is the first
    `num_sentences` (3) sentences of the generated text (`first_sentences`). Where a
    prompt leaves fewer than `max_new_tokens` positions of the model's context, fewer are
    generated ("num_generated" in the result).

    Args:
        model: a `GPTCausalLM` (anything with its `generate(token id lists, max_length,
            sampler, strip_prompt)`).
        tokenizer: `tokenize(str)` / `detokenize(ids)`.
        articles: list of article strings.
        references: optional reference summaries, one per article: then ROUGE-1, -2, -L F1.
        seed: the sampler's seed.

    Returns a dict: "prompts", "generations" (the sampled text), "summaries",
    "num_generated", and with references "rouge1", "rouge2", "rougeL" (mean F1 over
    articles, in %) and "rouge_avg" (their mean, Table 4's R-AVG).
    """
    articles = _strings(articles, "articles")
    prompts = [tldr_prompt(a) for a in articles]
    import keras_hub  # (here: keras-hub is installed apart, see keras_paperzoo.optional)

    sampler = keras_hub.samplers.TopKSampler(k=int(top_k), seed=seed)
    generations, counts = _generate(model, tokenizer, prompts, max_new_tokens, sampler, "articles", batch_size)
    result = {"prompts": prompts, "generations": generations,
              "summaries": [first_sentences(g, num_sentences) for g in generations], "num_generated": counts}
    if references is not None:
        result.update(corpus_rouge(result["summaries"], _strings(references, "references", len(articles))))
    return result


def translate_prompt(model, tokenizer, sentence, examples, references=None, max_new_tokens=64, separator=" = ",
                     batch_size=8):
    """Zero-shot translation by example pairs in the context (GPT-2 Sec. 3.7), with BLEU when references are given.

    The prompt is `translation_prompt(sentence, examples)` ("english sentence = french
    sentence" lines, then "sentence ="); greedy decoding (`model.generate`, keras-hub's
    greedy sampler, stopping at a new-line token when the tokenizer has one) up to
    `max_new_tokens` or the context; the translation is the generated text up to the end
    of its line, stripped. (GPT-2 keeps "the first generated sentence"; the line is the
    unit of one example pair here, so it ends there.) The paper's direction is either
    (English -> French, Table 3's 5 BLEU; French -> English, 11.5 BLEU): swap the pairs.

    Args:
        model: a `GPTCausalLM`.
        tokenizer: `tokenize(str)` / `detokenize(ids)`.
        sentence: a source sentence or a list of them.
        examples: the (source, target) pairs put in every prompt.
        references: optional target sentences (one per sentence): then sacreBLEU.

    Returns a dict: "prompts", "translations", and with references "bleu" (0-100) and
    "bleu_signature".
    """
    sentences = _strings([sentence] if isinstance(sentence, str) else sentence, "sentence")
    examples = [(str(s), str(t)) for s, t in examples]
    prompts = [translation_prompt(s, examples, separator=separator) for s in sentences]
    newline = encode_text(tokenizer, "\n")
    stop = newline if len(newline) == 1 and newline[0] != 0 else None  # id 0 is `generate`'s padding: never a stop
    generations, _ = _generate(model, tokenizer, prompts, max_new_tokens, "greedy", "sentence", batch_size, stop)
    result = {"prompts": prompts, "translations": [g.split("\n")[0].strip() for g in generations]}
    if references is not None:
        references = _strings([references] if isinstance(references, str) else references, "references",
                              len(sentences))
        bleu = corpus_bleu(result["translations"], references)
        result["bleu"], result["bleu_signature"] = bleu["bleu"], bleu["signature"]
    return result


def _generate(model, tokenizer, prompts, max_new_tokens, sampler, name, batch_size, stop_token_ids=None):
    """(texts, generated token counts): `model.generate` on the prompts' ids, batches of prompts, sampler restored."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive int; got max_new_tokens={max_new_tokens!r}.")
    context = int(model.backbone.max_sequence_length)
    rows = [encode_text(tokenizer, p) for p in prompts]
    for index, row in enumerate(rows):
        if len(row) >= context:
            raise ValueError(
                f"{name}[{index}]: its prompt of {len(row)} tokens leaves no position to generate in the model's "
                f"context of {context} tokens; a prompt needs fewer than {context}."
            )
    saved = model.sampler, model.generate_function  # `generate(sampler=...)` replaces the model's
    texts, counts = [], []
    try:
        for begin in range(0, len(rows), int(batch_size)):
            batch = rows[begin : begin + int(batch_size)]
            max_length = min(context, max(len(r) for r in batch) + int(max_new_tokens))
            outputs = model.generate(batch, max_length=max_length, sampler=sampler, strip_prompt=True,
                                     stop_token_ids=stop_token_ids)
            for ids in outputs:
                ids = [t for t in ids[: int(max_new_tokens)] if stop_token_ids is None or t not in stop_token_ids]
                texts.append(decode_ids(tokenizer, ids))
                counts.append(len(ids))
    finally:
        model.sampler, model.generate_function = saved
    return texts, counts


def _strings(values, name, count=None):
    values = list(values)
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ValueError(f"{name} must be a non-empty list of non-empty strings; got {values!r:.200}.")
    if count is not None and len(values) != count:
        raise ValueError(f"{name} needs one entry per input: {count}; got {len(values)}.")
    return values


# --- ROUGE (Lin 2004) ----------------------------------------------------------------------------

def rouge_tokens(text):
    """Lower-cased alphanumeric words (rouge-score's default tokenizer, no stemming)."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).split()


def _f1(overlap, hypothesis_count, reference_count):
    if overlap == 0:
        return 0.0
    precision, recall = overlap / hypothesis_count, overlap / reference_count
    return 2 * precision * recall / (precision + recall)


def rouge_n(hypothesis, reference, n):
    """ROUGE-N F1: clipped n-gram overlap, precision over the hypothesis' n-grams, recall over the reference's."""
    hyp, ref = _ngrams(rouge_tokens(hypothesis), n), _ngrams(rouge_tokens(reference), n)
    overlap = sum((hyp & ref).values())  # clipped counts: min of the two
    return _f1(overlap, sum(hyp.values()), sum(ref.values()))


def _ngrams(words, n):
    return collections.Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def rouge_l(hypothesis, reference):
    """ROUGE-L F1: longest common subsequence of the two word sequences (rouge-score's "rougeL")."""
    hyp, ref = rouge_tokens(hypothesis), rouge_tokens(reference)
    table = np.zeros((len(hyp) + 1, len(ref) + 1), "int64")  # LCS lengths of prefixes
    for i, a in enumerate(hyp):
        for j, b in enumerate(ref):
            table[i + 1, j + 1] = table[i, j] + 1 if a == b else max(table[i, j + 1], table[i + 1, j])
    return _f1(int(table[-1, -1]), len(hyp), len(ref))


def corpus_rouge(hypotheses, references):
    """Mean ROUGE-1, -2, -L F1 over (hypothesis, reference) pairs, in %, and their mean "rouge_avg"."""
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"corpus_rouge needs one reference per hypothesis (at least one); got "
                         f"{len(hypotheses)} and {len(references)}.")
    scores = {
        "rouge1": np.mean([rouge_n(h, r, 1) for h, r in zip(hypotheses, references)]),
        "rouge2": np.mean([rouge_n(h, r, 2) for h, r in zip(hypotheses, references)]),
        "rougeL": np.mean([rouge_l(h, r) for h, r in zip(hypotheses, references)]),
    }
    scores = {k: 100.0 * float(v) for k, v in scores.items()}
    scores["rouge_avg"] = float(np.mean(list(scores.values())))
    return scores
