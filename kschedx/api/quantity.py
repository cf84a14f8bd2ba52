"""Kubernetes ``resource.Quantity`` as kube-scheduler v1.35 sees it.

Behaviour follows k8s.io/apimachinery/pkg/api/resource at v1.35, including
its quirks, because the scheduler's decisions and messages depend on them:

* Upstream keeps a quantity either as an int64 mantissa with a base-10 scale
  (``int64Amount``) or as an arbitrary-precision ``inf.Dec``.  The value is
  the same either way, but ``ScaledValue`` rounds differently on the two paths
  (the Dec path turns e.g. -0.5 into 1, and wraps int64 silently).  We
  therefore remember which backend upstream would use (``_dec``) and mirror
  both roundings; all arithmetic itself is exact on Python ints.
* ``String()`` returns the parsed text verbatim when upstream's "looks
  canonical" check passes ("+1", "1.050", "5." stay as written), and v1.35
  drops the suffix of DecimalSI values beyond 10^18 ("1000E" prints "1") and
  of BinarySI values beyond 2^60 (fixed upstream after v1.35).
* Overflow (decided): an int64-backed ``ScaledValue`` that overflows returns 0,
  a Dec-backed one wraps modulo 2^64, as upstream on amd64.  Realistic
  requests and capacities never get near int64, so this only matters for
  absurd inputs; it is mirrored rather than "fixed" so results never differ.
* Not replicated: exponents beyond +-10000 and more than 1000 mantissa digits
  are rejected with QuantityError.  Upstream accepts them but then needs
  10^exponent-sized integers (it hangs or exhausts memory), so does Python.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + _SPLIT_RE + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_MAX_EXPONENT = 10_000
_MAX_DIGITS = 1_000

# Same language and the same greedy split as upstream's hand-written scanner
# (which is laxer than the regexp its error message quotes: "-", "." and "Ki"
# all parse as zero there).
_SCAN = re.compile(r"([+-]?)(0*)([0-9]*)(\.[0-9]*)?([eEinumkKMGTP]*[+-]?[0-9]*)").fullmatch
_GO_PARSE_INT = re.compile(r"[+-]?[0-9]+").fullmatch

_SUFFIXES = {
    "": (10, 0, DECIMAL_SI),
    "n": (10, -9, DECIMAL_SI),
    "u": (10, -6, DECIMAL_SI),
    "m": (10, -3, DECIMAL_SI),
    "k": (10, 3, DECIMAL_SI),
    "M": (10, 6, DECIMAL_SI),
    "G": (10, 9, DECIMAL_SI),
    "T": (10, 12, DECIMAL_SI),
    "P": (10, 15, DECIMAL_SI),
    "E": (10, 18, DECIMAL_SI),
    "Ki": (2, 10, BINARY_SI),
    "Mi": (2, 20, BINARY_SI),
    "Gi": (2, 30, BINARY_SI),
    "Ti": (2, 40, BINARY_SI),
    "Pi": (2, 50, BINARY_SI),
    "Ei": (2, 60, BINARY_SI),
}
_DEC_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN_SUFFIX = {1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}

# Go's strings.TrimSpace set (unicode.IsSpace); str.strip() would also eat \x1c-\x1f.
_GO_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


class QuantityError(ValueError):
    """A value that is not a valid Kubernetes quantity."""


def _wrap64(v: int) -> int:
    return ((v - _INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + _INT64_MIN


def _wrap_neg(v: int) -> int:
    # int64 negation: -MinInt64 wraps to itself.
    return v if v == _INT64_MIN else -v


def _strip10(u: int, e: int) -> tuple[int, int]:
    if u == 0:
        return 0, 0
    while u % 1_000_000_000 == 0:
        u //= 1_000_000_000
        e += 9
    while u % 10 == 0:
        u //= 10
        e += 1
    return u, e


def _itoa(n: int) -> str:
    # str() refuses ints over 4300 digits; only absurd sums get there.
    if n.bit_length() < 14_000:
        return str(n)
    if n < 0:
        return "-" + _itoa(-n)
    half = int(n.bit_length() * 0.30103) // 2
    hi, lo = divmod(n, 10**half)
    return _itoa(hi) + _itoa(lo).zfill(half)


def _go_pow10_int64(n: int) -> int:
    # int64(math.Pow10(n)): exact up to 10^18; beyond, amd64's conversion of an
    # out-of-range float yields MinInt64.
    return 10**n if n <= 18 else _INT64_MIN


def _int_add(a: int, ae: int, b: int, be: int):
    """int64Amount.Add: the int64 sum at the smaller scale, or None on overflow."""
    if b == 0:
        return a, ae
    if a == 0:
        return b, be
    if ae != be:
        if ae < be:
            a, ae, b, be = b, be, a, ae
        d = ae - be
        if d > 18:
            return None
        a *= 10**d
        if not _INT64_MIN <= a <= _INT64_MAX:
            return None
    c = a + b
    if not _INT64_MIN <= c <= _INT64_MAX:
        return None
    return c, be


class Quantity:
    """Immutable, exact quantity; value is ``_u * 10**_e``."""

    __slots__ = ("_u", "_e", "_dec", "_fmt", "_s")

    def __init__(self) -> None:
        # Go's zero value, Quantity{}.
        self._u, self._e, self._dec, self._fmt, self._s = 0, 0, False, DECIMAL_SI, None

    # -- construction ---------------------------------------------------
    @classmethod
    def parse(cls, s: str) -> "Quantity":
        """ParseQuantity: strict, no whitespace trimming."""
        if type(s) is not str:
            raise QuantityError(f"quantity must be a string, not {type(s).__name__}")
        return _parse_cached(s)

    @classmethod
    def from_int(cls, n: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """NewQuantity(n, fmt)."""
        return cls.from_scaled(n, 0, fmt)

    @classmethod
    def from_milli(cls, n: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """NewMilliQuantity(n, fmt)."""
        return cls.from_scaled(n, -3, fmt)

    @classmethod
    def from_scaled(cls, n: int, scale: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """n * 10**scale, like NewScaledQuantity but with a chosen format.

        Values beyond int64 (impossible in Go) are kept exactly on the Dec backend.
        """
        if type(n) is bool or not isinstance(n, int) or type(scale) is bool or not isinstance(scale, int):
            raise QuantityError("quantity mantissa and scale must be integers")
        n = int(n)
        return _make(n, scale, not _INT64_MIN <= n <= _INT64_MAX, fmt, None)

    # -- accessors --------------------------------------------------------
    @property
    def format(self) -> str:
        return self._fmt

    def is_zero(self) -> bool:
        return self._u == 0

    def sign(self) -> int:
        return (self._u > 0) - (self._u < 0)

    def as_fraction(self) -> Fraction:
        """The exact value."""
        return Fraction(self._u * 10**self._e) if self._e >= 0 else Fraction(self._u, 10**-self._e)

    def value(self) -> int:
        return self.scaled_value(0)

    def milli_value(self) -> int:
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """ScaledValue: the value in units of 10**scale, rounded up (see module doc)."""
        u, e = self._u, self._e
        if not self._dec:
            # int64Amount.AsScaledInt64: round away from zero; overflow gives 0.
            if e < scale:
                d = scale - e
                if d > 19:
                    return (u > 0) - (u < 0)
                q, r = divmod(abs(u), 10**d)
                if r:
                    q += 1
                return q if u >= 0 else -q
            d = e - scale
            if u == 0 or d > 18:
                return 0
            v = u * 10**d
            return v if _INT64_MIN <= v <= _INT64_MAX else 0
        # inf.Dec path (scaledValue in scale_int.go).
        dif = scale - e
        if dif == 0:
            return _wrap64(u)
        if dif < 0:
            return _wrap64(_wrap64(u) * _go_pow10_int64(-dif))
        if u < _INT64_MAX and dif < 19:
            # int64 division truncates toward zero, then adds one for any
            # remainder: ceil for positives, but -1.5 becomes 0 (v1.35 bug).
            w, div = _wrap64(u), 10**dif
            q = abs(w) // div
            if w < 0:
                q = -q
            return q + 1 if w != q * div else q
        q, r = divmod(u, 10**dif)
        return _wrap64(_wrap64(q) + 1) if r else _wrap64(q)

    # -- arithmetic -------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._fmt if self._u == 0 else self._fmt
        if not (self._dec or other._dec):
            r = _int_add(self._u, self._e, other._u, other._e)
            if r is not None:
                return _make(r[0], r[1], False, fmt, None)
        return _dec_add(self._u, self._e, other._u, other._e, fmt)

    def __radd__(self, other):
        # Lets sum() start from 0, which behaves like Go's zero Quantity.
        if type(other) is int and other == 0:
            return _ZERO + self
        return NotImplemented

    def __sub__(self, other):
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._fmt if self._u == 0 else self._fmt
        if not (self._dec or other._dec):
            r = _int_add(self._u, self._e, _wrap_neg(other._u), other._e)
            if r is not None:
                return _make(r[0], r[1], False, fmt, None)
        return _dec_add(self._u, self._e, -other._u, other._e, fmt)

    def __neg__(self):
        return _make(-self._u if self._dec else _wrap_neg(self._u), self._e, self._dec, self._fmt, None)

    # -- comparison -------------------------------------------------------
    def cmp(self, other: "Quantity") -> int:
        a, ae, b, be = self._u, self._e, other._u, other._e
        if ae != be:
            sa, sb = (a > 0) - (a < 0), (b > 0) - (b < 0)
            if sa != sb or sa == 0:
                return (sa > sb) - (sa < sb)
            if ae > be:
                a *= 10 ** (ae - be)
            else:
                b *= 10 ** (be - ae)
        return (a > b) - (a < b)

    def __eq__(self, other):
        if not isinstance(other, Quantity):
            return NotImplemented
        if self._e == other._e:
            return self._u == other._u
        return self.cmp(other) == 0

    def __lt__(self, other):
        return self.cmp(other) < 0 if isinstance(other, Quantity) else NotImplemented

    def __le__(self, other):
        return self.cmp(other) <= 0 if isinstance(other, Quantity) else NotImplemented

    def __gt__(self, other):
        return self.cmp(other) > 0 if isinstance(other, Quantity) else NotImplemented

    def __ge__(self, other):
        return self.cmp(other) >= 0 if isinstance(other, Quantity) else NotImplemented

    def __hash__(self):
        return hash(_strip10(self._u, self._e))

    # -- text -------------------------------------------------------------
    def __str__(self) -> str:
        s = self._s
        if s is None:
            s = self._s = self._canonical()
        return s

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def _canonical(self) -> str:
        """CanonicalizeBytes: largest exponent/suffix with an integral mantissa."""
        u, e, fmt = self._u, self._e, self._fmt
        if u == 0:
            return "0"
        if fmt == BINARY_SI:
            if e < 0:
                n, r = divmod(u, 10**-e)
            else:
                n, r = u * 10**e, 0
            # Below 1024 or fractional, BinarySI would round: print DecimalSI.
            if r or -1024 < n < 1024:
                fmt = DECIMAL_SI
            else:
                k = 0
                while n % 1024 == 0:
                    n //= 1024
                    k += 1
                return _itoa(n) + _BIN_SUFFIX.get(k, "")
        elif fmt != DECIMAL_SI:
            fmt = DECIMAL_EXPONENT
        m, e = _strip10(u, e)
        r = e % 3
        if r:
            m *= 10**r
            e -= r
        if fmt == DECIMAL_SI:
            return _itoa(m) + _DEC_SUFFIX.get(e, "")
        return _itoa(m) + (f"e{e}" if e else "")


_new = object.__new__


def _make(u: int, e: int, dec: bool, fmt: str, s):
    q = _new(Quantity)
    q._u = u
    q._e = e
    q._dec = dec
    q._fmt = fmt
    q._s = s
    return q


def _dec_add(a: int, ae: int, b: int, be: int, fmt: str) -> Quantity:
    # inf.Dec.Add keeps the finer of the two scales.
    if ae > be:
        return _make(a * 10 ** (ae - be) + b, be, True, fmt, None)
    return _make(a + b * 10 ** (be - ae), ae, True, fmt, None)


_ZERO = Quantity()


def _exponent_suffix(suffix: str) -> tuple[int, int, str]:
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_PARSE_INT(suffix, 1):
        n = int(suffix[1:])
        if _INT64_MIN <= n <= _INT64_MAX:
            # v1.35 narrows the int64 exponent to int32 without a range check.
            return 10, ((n + (1 << 31)) & 0xFFFFFFFF) - (1 << 31), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _parse(s: str) -> Quantity:
    if not s:
        raise QuantityError(ERR_FORMAT_WRONG)
    if s == "0":
        return _make(0, 0, False, DECIMAL_SI, s)
    m = _SCAN(s)
    if m is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    sign, zeros, num, frac, suffix = m.groups()
    spec = _SUFFIXES.get(suffix)
    base, exponent, fmt = spec if spec is not None else _exponent_suffix(suffix)
    denom = frac[1:] if frac else ""
    digits = (num or "0") + denom
    if len(digits) > _MAX_DIGITS or not -_MAX_EXPONENT <= exponent <= _MAX_EXPONENT:
        raise QuantityError(
            f"quantity {s!r} is outside the range kschedx evaluates exactly "
            f"(at most {_MAX_DIGITS} digits and exponents within +-{_MAX_EXPONENT})"
        )
    negative = sign == "-"

    # int64Amount fast path, taken only when upstream is sure it cannot overflow.
    if base == 10:
        precision, scale, mult = 18 - len(digits), exponent - len(denom), 1
    elif not denom:
        precision = 15 - len(num or "0") - exponent * 3 // 10 - 1
        scale, mult = 0, 1 << exponent
    else:
        precision = -1
    if precision >= 0 and scale >= -9:
        v = int(digits)
        q = _make(-v * mult if negative else v * mult, scale, False, fmt, None)
        # Upstream reuses the input text as String() when it "looks canonical".
        if fmt == BINARY_SI:
            if v & 7:
                q._s = s
        elif scale % 3 == 0 and digits[0] != "0" and not digits.endswith("000"):
            q._s = s
        return q

    # inf.Dec path.
    if not (zeros or num or denom):
        raise QuantityError(ERR_NUMERIC)
    u, inf_scale = int(digits), len(denom)
    if base == 10:
        inf_scale -= exponent
    else:
        u <<= exponent
    if u:
        # Round up to whole nanos, so any non-zero request gets something.
        if inf_scale <= 9:
            u *= 10 ** (9 - inf_scale)
        else:
            u = -(-u // 10 ** (inf_scale - 9))
        inf_scale = 9
        if fmt == BINARY_SI:
            if u > _INT64_MAX * 1_000_000_000:
                u, inf_scale = _INT64_MAX, 0
            elif u < 1_000_000_000:
                fmt = DECIMAL_SI
    return _make(-u if negative else u, -inf_scale, True, fmt, None)


_parse_cached = lru_cache(maxsize=65536)(_parse)


def _go_json_float(f: float) -> str:
    """The text encoding/json writes for a float64 (what the API server reads)."""
    if f != f or f in (float("inf"), float("-inf")):
        raise QuantityError(ERR_FORMAT_WRONG)
    r = repr(f)
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        # Go's 'e' form matches repr except it writes e-7, not e-07.
        return re.sub(r"e-0(\d)$", r"e-\1", r)
    t = format(Decimal(r), "f")
    return t.rstrip("0").rstrip(".") if "." in t else t


def parse_quantity(v) -> Quantity:
    """A quantity from a decoded YAML/JSON value, as the API server would read it.

    Strings are trimmed like Quantity.UnmarshalJSON does; ints and floats are
    read from the text encoding/json would give them.  Unlike the API server
    (where JSON null decodes to zero), null is an error here.
    """
    t = type(v)
    if t is str:
        return _parse_cached(v.strip(_GO_SPACE))
    if t is Quantity:
        return v
    if t is bool or v is None or not isinstance(v, (int, float, str)):
        raise QuantityError(f"quantity must be a string or a number, not {t.__name__ if v is not None else 'null'}")
    if isinstance(v, int):
        try:
            text = str(v)
        except ValueError:  # more than 4300 digits
            raise QuantityError(f"quantity {t.__name__} has too many digits") from None
        return _parse_cached(text)
    if isinstance(v, float):
        return _parse_cached(_go_json_float(v))
    return _parse_cached(str(v).strip(_GO_SPACE))
