"""ROUGE-1/2/L as the official LLM accuracy scripts compute them, without their dependencies.

The reference scripts (e.g. language/llama2-70b/evaluate-accuracy.py in mlcommons/inference) call
Hugging Face `evaluate.load("rouge")` with `use_stemmer=True, use_aggregator=False`: that is Google's
`rouge_score` with its default tokenizer and NLTK's Porter stemmer (its default NLTK_EXTENSIONS
mode), one F-measure per sample, the mean times 100 rounded to four decimals. This module computes
the same figures:

- tokens: the text lower-cased, every run of characters other than `a-z0-9` a separator; tokens
  longer than three characters are stemmed (Porter, with NLTK's extensions: the irregular forms,
  `ies`/`ied` on four-letter words, `y -> i` only after a consonant, `alli`/`fulli`/`logi` in step
  2, the two-letter `*o` condition);
- ROUGE-N: clipped n-gram overlap, precision over the prediction's n-grams, recall over the
  reference's; ROUGE-L: longest common subsequence over the token lists (bit-parallel, so a
  2,000-token pair costs microseconds, not a 4M-cell table); F = 2PR / (P + R), 0 when P + R = 0.

ROUGE-Lsum (sentence-split with NLTK's punkt) is not computed: no accuracy target of the rules uses it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from proctor.typed_records import record

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")

# NLTK's table of irregular forms: the word maps straight to its stem, the steps are skipped
_IRREGULAR = {
    "skies": "sky",
    "sky": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}
_VOWELS = frozenset("aeiou")


def _cons(word: str, i: int) -> bool:
    """Porter's consonant: not a vowel, and `y` only at the start or after a vowel."""
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _cons(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m: the number of vowel-consonant transitions ([C](VC)^m[V])."""
    shape = "".join("c" if _cons(stem, i) else "v" for i in range(len(stem)))
    return shape.count("vc")


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double_cons(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _cons(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    """*o: consonant-vowel-consonant, the last not w, x or y (NLTK: also a two-letter vowel-consonant)."""
    n = len(word)
    if n >= 3 and _cons(word, n - 3) and not _cons(word, n - 2) and _cons(word, n - 1):
        return word[-1] not in "wxy"
    return n == 2 and not _cons(word, 0) and _cons(word, 1)


def _positive(stem: str) -> bool:
    return _measure(stem) > 0


def _above_one(stem: str) -> bool:
    return _measure(stem) > 1


Rule = tuple[str, str, Callable[[str], bool] | None]


def _apply(word: str, rules: Iterable[Rule]) -> str:
    """The first rule whose suffix the word ends with decides: replaced if its condition holds on
    the stem, else the word is kept (no later rule is tried). Suffix `*d`: a double consonant."""
    for suffix, replacement, condition in rules:
        if suffix == "*d":
            if not _double_cons(word):
                continue
            stem = word[:-2]
        elif word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
        else:
            continue
        return stem + replacement if condition is None or condition(stem) else word
    return word


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return word[:-3] + "ie"
    return _apply(word, (("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)))


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        stem = word[:-3]
        return stem + "ee" if _measure(stem) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            break
    else:
        return word
    last = stem[-1]
    return _apply(
        stem,
        (
            ("at", "ate", None),
            ("bl", "ble", None),
            ("iz", "ize", None),
            ("*d", last, lambda s: last not in "lsz"),
            ("", "e", lambda s: _measure(s) == 1 and _ends_cvc(s)),
        ),
    )


def _step1c(word: str) -> str:
    return _apply(word, (("y", "i", lambda s: len(s) > 1 and _cons(s, len(s) - 1)),))


_STEP2: tuple[Rule, ...] = (
    ("ational", "ate", _positive),
    ("tional", "tion", _positive),
    ("enci", "ence", _positive),
    ("anci", "ance", _positive),
    ("izer", "ize", _positive),
    ("bli", "ble", _positive),
    ("alli", "al", _positive),
    ("entli", "ent", _positive),
    ("eli", "e", _positive),
    ("ousli", "ous", _positive),
    ("ization", "ize", _positive),
    ("ation", "ate", _positive),
    ("ator", "ate", _positive),
    ("alism", "al", _positive),
    ("iveness", "ive", _positive),
    ("fulness", "ful", _positive),
    ("ousness", "ous", _positive),
    ("aliti", "al", _positive),
    ("iviti", "ive", _positive),
    ("biliti", "ble", _positive),
    ("fulli", "ful", _positive),
)


def _step2(word: str) -> str:
    if word.endswith("alli") and _positive(word[:-4]):
        return _step2(word[:-4] + "al")
    # NLTK keeps the 'l' of 'logi' with the stem when measuring (so 'geo', 'theo' work like 'philo')
    return _apply(word, (*_STEP2, ("logi", "log", lambda s: _positive(word[:-3]))))


_STEP3: tuple[Rule, ...] = (
    ("icate", "ic", _positive),
    ("ative", "", _positive),
    ("alize", "al", _positive),
    ("iciti", "ic", _positive),
    ("ical", "ic", _positive),
    ("ful", "", _positive),
    ("ness", "", _positive),
)

_STEP4: tuple[Rule, ...] = (
    tuple(
        (s, "", _above_one)
        for s in ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent")
    )
    + (("ion", "", lambda s: _above_one(s) and s[-1:] in ("s", "t")),)
    + tuple((s, "", _above_one) for s in ("ou", "ism", "ate", "iti", "ous", "ive", "ize"))
)


def _step5a(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            return stem
    return word


def _step5b(word: str) -> str:
    return _apply(word, (("ll", "l", lambda s: _measure(word[:-1]) > 1),))


@lru_cache(maxsize=1 << 16)
def porter_stem(word: str) -> str:
    """Porter's stem of a lower-case word, with NLTK's extensions (NLTK's default mode)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 2:
        return word
    for step in (_step1a, _step1b, _step1c, _step2):
        word = step(word)
    word = _apply(word, _STEP3)
    word = _apply(word, _STEP4)
    return _step5b(_step5a(word))


def tokenize(text: str, stem: bool = True) -> list[str]:
    """rouge_score's default tokenizer: lower-case, split on non-`[a-z0-9]`, stem tokens of 4+ chars."""
    tokens = _NON_ALNUM.sub(" ", text.lower()).split()
    return [porter_stem(t) if stem and len(t) > 3 else t for t in tokens]


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _f(overlap: int, n_pred: int, n_ref: int) -> float:
    precision = overlap / max(n_pred, 1)
    recall = overlap / max(n_ref, 1)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Crochemore et al. 2001): one bit per
    element of `a`, one big-integer step per element of `b`."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def rouge_n(pred: Sequence[str], ref: Sequence[str], n: int) -> float:
    p, r = _ngrams(pred, n), _ngrams(ref, n)
    overlap = sum(min(c, r[g]) for g, c in p.items() if g in r)
    return _f(overlap, sum(p.values()), sum(r.values()))


def rouge_l(pred: Sequence[str], ref: Sequence[str]) -> float:
    if not pred or not ref:
        return 0.0
    return _f(lcs_length(ref, pred), len(pred), len(ref))


@record(frozen=True, slots=True)
class RougeScores:
    """F-measures of one prediction against its reference, each in [0, 1]."""

    rouge1: float
    rouge2: float
    rougeL: float  # noqa: N815 (the name the official scripts print)


def score(prediction: str, reference: str) -> RougeScores:
    pred, ref = tokenize(prediction), tokenize(reference)
    return RougeScores(rouge_n(pred, ref, 1), rouge_n(pred, ref, 2), rouge_l(pred, ref))


def mean_scores(pairs: Iterable[tuple[str, str]]) -> dict[str, float]:
    """{rouge1, rouge2, rougeL}: the mean F-measure x 100, rounded to four decimals as the scripts do."""
    sums = dict.fromkeys(ROUGE_TYPES, 0.0)
    n = 0
    for pred, ref in pairs:
        s = score(pred, ref)
        sums["rouge1"] += s.rouge1
        sums["rouge2"] += s.rouge2
        sums["rougeL"] += s.rougeL
        n += 1
    return {k: round(100.0 * v / n, 4) if n else 0.0 for k, v in sums.items()}


__all__ = [
    "ROUGE_TYPES",
    "RougeScores",
    "lcs_length",
    "mean_scores",
    "porter_stem",
    "rouge_l",
    "rouge_n",
    "score",
    "tokenize",
]
