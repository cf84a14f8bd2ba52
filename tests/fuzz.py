"""The fuzzing suite's engine: hostile variants of good inputs, and the one
rule every run must keep.

Each input is a good one (a golden fixture, a kubeconfig, objects served by
the test API server) changed in one or a few random places: a value replaced
by one of the wrong type at any depth, a huge or negative number, a
non-ASCII or very long string; a key deleted; a list or mapping emptied; an
object or list item duplicated. The rule (`assert_clean`): the exit code is
one of those the command documents for such input, no traceback, and an error
is one line on stderr.

tests/test_fuzz.py runs a fixed-seed slice bounded in examples and seconds;
KSCHEDX_FUZZ_EXAMPLES, KSCHEDX_FUZZ_SECONDS and KSCHEDX_FUZZ_SEED make the
long run the README documents.
"""

from __future__ import annotations

import copy
import os
import time

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("KSCHEDX_FUZZ_EXAMPLES", "40"))
SECONDS = float(os.environ.get("KSCHEDX_FUZZ_SECONDS", "25"))
SEED = os.environ.get("KSCHEDX_FUZZ_SEED")
# A file to which each property appends how many inputs it ran (the long
# run's count in the README comes from it).
LOG = os.environ.get("KSCHEDX_FUZZ_LOG")

# Hypothesis has no time limit of its own, and a property that stops
# drawing once time is up makes it report inconsistent data generation. So
# a run is a series of short hypothesis runs (BATCH examples each), each
# with its own fixed seed, until EXAMPLES inputs ran or SECONDS passed: CI's
# slice (seed 0) is the same inputs on every run, and any failing batch is
# reproducible from its seed, which the failure report names.
BATCH = 10


class Budget:
    """How long a property runs: batches of examples until EXAMPLES inputs
    ran or `seconds` passed."""

    def __init__(self, seconds: float = SECONDS):
        self.seconds = seconds
        self.runs = 0

    def count(self) -> None:
        """The first statement of a property: one more input tried."""
        self.runs += 1

    def run(self, prop, what: str, **strategies) -> None:
        """Run `prop` as a hypothesis test over `strategies` (given's keyword
        arguments), batch after batch."""
        base = int(SEED) if SEED is not None else 0
        start = time.monotonic()
        batch = 0
        while self.runs < EXAMPLES and time.monotonic() - start < self.seconds:
            size = min(BATCH, EXAMPLES - self.runs)
            batch_seed = base * 1_000_003 + batch
            test = settings(max_examples=size, deadline=None, database=None, derandomize=False,
                            suppress_health_check=list(HealthCheck), print_blob=True)(given(**strategies)(prop))
            try:
                seed(batch_seed)(test)()
            except BaseException as exc:
                if hasattr(exc, "add_note"):
                    exc.add_note(f"fuzz batch seed {batch_seed} (KSCHEDX_FUZZ_SEED={base}, batch {batch})")
                raise
            batch += 1
        record(what, self)


def record(what: str, budget: Budget) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{what}\t{budget.runs}\n")


SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**30]),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x2FFFF, blacklist_categories=("Cs",)),
            max_size=12),
    st.sampled_from(["", "x" * 70_000, "ü" * 5_000, "-1", "1e400", "1Ei" * 3, "9" * 40, "nan", "null"]),
    st.none(),
)
WRONG = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=6), SCALARS, max_size=3),
    st.just([[]]),
    st.just({"a": {"b": [1]}}),
)


def paths(value, prefix=()):
    """Every place in a document, parents before children."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, prefix + (i,))


def _parent(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    return doc


def mutate(data, docs: list, protect=("kind", "apiVersion")) -> list[str]:
    """Change `docs` (a list of objects) in place in one to three places; the
    changes, for the failure report."""
    done = []
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        i = data.draw(st.integers(0, len(docs) - 1), label="document")
        places = [p for p in paths(docs[i]) if p and p[-1] not in protect]
        op = data.draw(st.sampled_from(["wrong", "wrong", "wrong", "delete", "empty", "duplicate"]), label="op")
        if op == "duplicate" and data.draw(st.booleans(), label="whole object"):
            docs.append(copy.deepcopy(docs[i]))
            done.append(f"duplicate document {i}")
            continue
        if not places:
            continue
        path = data.draw(st.sampled_from(places), label="place")
        parent = _parent(docs[i], path)
        key = path[-1]
        if op == "wrong":
            # A copy: st.just() hands out the same object each time, and a
            # value drawn twice into one document would then contain itself.
            parent[key] = copy.deepcopy(data.draw(WRONG, label="value"))
        elif op == "delete":
            del parent[key]
        elif op == "empty":
            parent[key] = type(parent[key])() if isinstance(parent[key], (list, dict, str)) else None
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[key] = [copy.deepcopy(parent[key])] * 2
        done.append(f"{op} document {i} at {'.'.join(map(str, path))}")
    return done


def assert_clean(result, allowed: set[int], what: str) -> None:
    """The rule: a documented exit code, no traceback, an error in one line;
    objects the API server would refuse (strict input) a line per problem,
    each a `kschedx: error:` line, at most MAX_ERROR_LINES and the count."""
    err = result.stderr
    out = result.stdout
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), f"{what}: raised {exc!r}"
    assert result.exit_code in allowed, f"{what}: exit {result.exit_code}: {err[-2000:]}"
    assert "Traceback" not in err and "Traceback" not in out, f"{what}: {err[-2000:]}"
    if result.exit_code not in (0, 1):
        from kschedx.sources.strict import MAX_ERROR_LINES

        lines = err.strip().splitlines()
        if len(lines) > 1:
            assert len(lines) <= MAX_ERROR_LINES + 1 and all(
                line.startswith("kschedx: error: ") for line in lines), f"{what}: {err[-2000:]}"
        assert len(lines) >= 1 and lines[0].startswith("kschedx: "), f"{what}: {err[-2000:]}"
