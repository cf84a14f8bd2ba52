"""Did-you-mean: the names a misspelled kind or field name was probably meant to be.

A candidate is near when, letter case ignored, it is at most a few edits
away (insertions, deletions, substitutions, and swaps of two adjacent
letters, each one edit): one edit for names of up to 4 letters, two up to
10, three beyond. The nearest candidates win; at most three are offered.
"""

from __future__ import annotations


def distance(a: str, b: str, limit: int) -> int:
    """The optimal string alignment distance between a and b (limit + 1
    as soon as it must exceed limit)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    if a == b:
        return 0
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            cost = 0 if ai == b[j - 1] else 1
            value = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ai == b[j - 2] and a[i - 2] == b[j - 1]:
                value = min(value, prev2[j - 2] + 1)
            cur[j] = value
            if value < best:
                best = value
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[len(b)]


def allowed_edits(word: str) -> int:
    n = len(word)
    if n <= 2:
        return 0
    return 1 if n <= 4 else 2 if n <= 10 else 3


def near(word: str, candidates, limit: int | None = None) -> list[str]:
    """The candidates nearest to word (not word itself), nearest first."""
    if limit is None:
        limit = allowed_edits(word)
    folded = word.lower()
    scored = []
    for candidate in candidates:
        if candidate == word:
            continue
        d = distance(folded, candidate.lower(), limit)
        if d <= limit:
            scored.append((d, candidate))
    if not scored:
        return []
    scored.sort()
    best = scored[0][0]
    return [c for d, c in scored if d == best][:3]


def is_typo_of(word: str, candidate: str) -> bool:
    """word is candidate with its letter case changed or two adjacent
    letters swapped: a slip of the keyboard, never a name of its own."""
    if word == candidate or len(word) != len(candidate):
        return False
    if word.lower() == candidate.lower():
        return True
    diff = [i for i, (x, y) in enumerate(zip(word.lower(), candidate.lower())) if x != y]
    return (len(diff) == 2 and diff[1] == diff[0] + 1
            and word[diff[0]].lower() == candidate[diff[1]].lower()
            and word[diff[1]].lower() == candidate[diff[0]].lower())


def one_of(names: list[str], quote: bool = False) -> str:
    shown = [f'"{n}"' if quote else n for n in names]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " or " + shown[-1]
