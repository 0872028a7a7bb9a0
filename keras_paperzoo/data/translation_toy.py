"""A small German -> English corpus generated from templates: the translation recipe's built-in data.

Sentences like "Eine junge Frau sitzt mit einem Hund im Park." -> "A young woman sits
with a dog in the park.": subject (article and adjective agree with the noun's gender
and number), verb (singular or plural), an optional companion, a place. The pairs are
generated from a seed, so the corpus needs no download and no files in the package;
a small Transformer learns it in minutes on a CPU, which makes it a check of the whole
pipeline (vocabulary, training, beam search, BLEU), not a benchmark.
"""

import numpy as np

# (German with the adjective slot {a}, gender or "pl", English with {a})
_SUBJECTS = [
    ("ein {a}Mann", "m", "a {a}man"),
    ("eine {a}Frau", "f", "a {a}woman"),
    ("ein {a}Kind", "n", "a {a}child"),
    ("ein {a}Hund", "m", "a {a}dog"),
    ("ein {a}Mädchen", "n", "a {a}girl"),
    ("ein {a}Junge", "m", "a {a}boy"),
    ("zwei {a}Männer", "pl", "two {a}men"),
    ("zwei {a}Frauen", "pl", "two {a}women"),
    ("drei {a}Kinder", "pl", "three {a}children"),
    ("zwei {a}Hunde", "pl", "two {a}dogs"),
]
# Adjective stem -> English; German ending after "ein"/"eine"/numeral by gender.
_ADJECTIVES = [("jung", "young"), ("alt", "old"), ("klein", "small"), ("groß", "tall"), ("glücklich", "happy")]
_ENDINGS = {"m": "er", "f": "e", "n": "es", "pl": "e"}
_VERBS = [  # (German singular, German plural, English singular, English plural)
    ("läuft", "laufen", "runs", "run"),
    ("sitzt", "sitzen", "sits", "sit"),
    ("steht", "stehen", "stands", "stand"),
    ("spielt", "spielen", "plays", "play"),
    ("wartet", "warten", "waits", "wait"),
]
_COMPANIONS = [("", ""), ("mit einem Ball", "with a ball"), ("mit einem Hund", "with a dog"),
               ("mit einer Frau", "with a woman"), ("mit zwei Kindern", "with two children")]
_PLACES = [("im Park", "in the park"), ("auf der Straße", "on the street"), ("am Strand", "on the beach"),
           ("im Schnee", "in the snow"), ("vor einem Haus", "in front of a house"), ("im Wasser", "in the water")]


def toy_translation_pair(rng):
    """One (German, English) pair drawn with the numpy Generator `rng`."""
    de_subject, gender, en_subject = _SUBJECTS[rng.integers(len(_SUBJECTS))]
    if rng.random() < 0.5:
        stem, english = _ADJECTIVES[rng.integers(len(_ADJECTIVES))]
        de_adj, en_adj = stem + _ENDINGS[gender] + " ", english + " "
    else:
        de_adj = en_adj = ""
    de_verb_sg, de_verb_pl, en_verb_sg, en_verb_pl = _VERBS[rng.integers(len(_VERBS))]
    plural = gender == "pl"
    de_with, en_with = _COMPANIONS[rng.integers(len(_COMPANIONS))]
    de_place, en_place = _PLACES[rng.integers(len(_PLACES))]
    german = " ".join(w for w in (de_subject.format(a=de_adj), de_verb_pl if plural else de_verb_sg, de_with, de_place) if w)
    english = " ".join(w for w in (en_subject.format(a=en_adj), en_verb_pl if plural else en_verb_sg, en_with, en_place) if w)
    if english.startswith("a ") and en_adj[:1] in ("a", "e", "i", "o", "u") and en_adj:
        english = "an " + english[2:]
    return german[0].upper() + german[1:] + ".", english[0].upper() + english[1:] + "."


def toy_translation_corpus(num_pairs, seed=0):
    """`num_pairs` generated (German, English) pairs as two lists of strings.

    Example: `de, en = toy_translation_corpus(3000, seed=0)`.
    """
    if not isinstance(num_pairs, int) or num_pairs < 1:
        raise ValueError(f"num_pairs must be a positive int; got {num_pairs!r}.")
    rng = np.random.default_rng(seed)
    pairs = [toy_translation_pair(rng) for _ in range(num_pairs)]
    return [p[0] for p in pairs], [p[1] for p in pairs]
