"""The Go parsers whose error texts the API server's decoder passes on
unchanged: time.Parse with metav1.Time's and metav1.MicroTime's layouts,
time.ParseDuration (metav1.Duration) and encoding/base64 ([]byte fields).

Each function returns None for a value Go accepts, else Go's message, word
for word, so that a problem reads as the API server's answer would.
"""

from __future__ import annotations

import re  # noqa: F401 - used by parse_duration_error (compiled there, on first use)

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# The layouts as Go's nextStdChunk splits them: (literal prefix, element).
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00")),
    RFC3339_MICRO: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"),
                    ("", ".000000"), ("", "Z07:00")),
}

_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def go_quote(s: str) -> str:
    """time's quote(): bytes outside printable ASCII as \\xNN."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if code >= 0x80 or code < 0x20:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            if ch in '"\\':
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)


def _digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _getnum(s: str, fixed: bool):
    if not _digit(s, 0):
        return None, s
    if not _digit(s, 1):
        if fixed:
            return None, s
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _skip(value: str, prefix: str):
    while prefix:
        if prefix[0] == " ":
            if value and value[0] != " ":
                return value, False
            prefix = prefix.lstrip(" ")
            value = value.lstrip(" ")
            continue
        if not value or value[0] != prefix[0]:
            return value, False
        prefix, value = prefix[1:], value[1:]
    return value, True


def _atoi(s: str):
    """time's atoi: an optional sign, then nothing but ASCII digits (none is 0); None if not."""
    negative = False
    if s and s[0] in "+-":
        negative = s[0] == "-"
        s = s[1:]
    if s and not (s.isascii() and s.isdigit()):
        return None
    value = int(s) if s else 0
    return -value if negative else value


def _nanos(value: str, nbytes: int):
    """parseNanoseconds: (ok, range error)."""
    if value[0] not in ".,":
        return False, ""
    ns = _atoi(value[1:min(nbytes, 10)])
    if ns is None:
        return False, ""
    if ns < 0:
        return True, "fractional second"
    return True, ""


def parse_time_error(value: str, layout: str = RFC3339) -> str | None:
    """time.Parse(layout, value)'s error text, or None when it parses."""
    chunks = _CHUNKS[layout]
    original = value
    year = month = day = 0

    def bad(elem: str, rest: str) -> str:
        return (f"parsing time {go_quote(original)} as {go_quote(layout)}: "
                f"cannot parse {go_quote(rest)} as {go_quote(elem)}")

    def out_of_range(what: str) -> str:
        return f"parsing time {go_quote(original)}: {what} out of range"

    for index, (prefix, elem) in enumerate(chunks):
        value, ok = _skip(value, prefix)
        if not ok:
            return bad(prefix, value)
        hold = value
        failed = False
        range_error = ""
        if elem == "2006":
            p = value[:4]
            if len(value) < 4 or not _digit(value, 0) or not p.isdigit() or not p.isascii():
                failed = True
            else:
                year, value = int(p), value[4:]
        elif elem == "01":
            month, value = _getnum(value, True)
            if month is None:
                failed = True
            elif not 1 <= month <= 12:
                range_error = "month"
        elif elem == "02":
            day, value = _getnum(value, True)
            failed = day is None
        elif elem == "15":
            hour, value = _getnum(value, False)
            if hour is None:
                failed = True
            elif hour >= 24:
                range_error = "hour"
        elif elem == "04":
            minute, value = _getnum(value, True)
            if minute is None:
                failed = True
            elif minute >= 60:
                range_error = "minute"
        elif elem == "05":
            second, value = _getnum(value, True)
            if second is None:
                failed = True
            elif second >= 60:
                range_error = "second"
            elif len(value) >= 2 and value[0] in ".," and _digit(value, 1) and chunks[index + 1][1] != ".000000":
                # a fractional second the layout does not name: taken all the same
                n = 2
                while _digit(value, n):
                    n += 1
                ok, range_error = _nanos(value, n)
                failed = not ok
                value = value[n:]
        elif elem == ".000000":
            ndigit = 7
            if len(value) < ndigit:
                failed = True
            else:
                ok, range_error = _nanos(value, ndigit)
                failed = not ok
                value = value[ndigit:]
        elif elem == "Z07:00":
            if value[:1] == "Z":
                value = value[1:]
            elif len(value) < 6 or value[3] != ":":
                failed = True
            else:
                sign, hh, mm, value = value[0], value[1:3], value[4:6], value[6:]
                hr, _ = _getnum(hh, True)
                mn, _ = _getnum(mm, True) if hr is not None else (None, "")
                failed = hr is None or mn is None or sign not in "+-"
                # the ranges are checked whatever failed, a failed number counting 0
                if (hr or 0) > 24:
                    range_error = "time zone offset hour"
                if (mn or 0) > 60:
                    range_error = "time zone offset minute"
        if range_error:
            return out_of_range(range_error)
        if failed:
            return bad(elem, hold)
    if value:
        return f"parsing time {go_quote(original)}: extra text: {go_quote(value)}"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS[month - 1]
    if day < 1 or day > days:
        return out_of_range("day")
    return None


_DURATION = r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0"


def parse_duration_error(value: str) -> str | None:
    """time.ParseDuration's error for the common case (the unit-less and
    overflow texts are not reproduced: "invalid duration" says it)."""
    if re.fullmatch(_DURATION, value):
        return None
    return f"time: invalid duration {go_quote(value)}"


_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(value: str) -> str | None:
    """base64.StdEncoding.Decode's error text, or None."""
    src = value.encode("utf-8", "surrogatepass")
    n = len(src)
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return _corrupt(si - j)
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in (10, 13):
                continue
            if c != 61:  # '='
                return _corrupt(si - 1)
            if j < 2:
                return _corrupt(si - 1)
            if j == 2:
                while si < n and src[si] in (10, 13):
                    si += 1
                if si == n:
                    return _corrupt(n)
                if src[si] != 61:
                    return _corrupt(si - 1)
                si += 1
            while si < n and src[si] in (10, 13):
                si += 1
            if si < n:
                return _corrupt(si)
            return None


def _corrupt(offset: int) -> str:
    return f"illegal base64 data at input byte {offset}"
