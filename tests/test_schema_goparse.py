"""The Go parsers whose messages the API server passes on (sources/schema/goparse.py).

Every expected text below is what Go itself printed (time.Parse with
metav1.Time's and metav1.MicroTime's layouts, base64.StdEncoding as
encoding/json decodes a []byte field), run once and kept here as facts."""

from __future__ import annotations

import pytest

from kschedx.sources.schema.goparse import RFC3339, RFC3339_MICRO, base64_error, go_quote, parse_time_error

LAYOUT = '"2006-01-02T15:04:05Z07:00"'
MICRO = '"2006-01-02T15:04:05.000000Z07:00"'

TIME_FACTS = [
    ("2024-01-01T00:00:00Z", None),
    ("2024-02-29T23:59:59.123+05:30", None),
    ("2024-01-01T00:00:00,5Z", None),
    ("2024-01-01T0:00:00Z", None),
    ("2000-02-29T00:00:00Z", None),
    ("2023-02-29T00:00:00Z", 'parsing time "2023-02-29T00:00:00Z": day out of range'),
    ("1900-02-29T00:00:00Z", 'parsing time "1900-02-29T00:00:00Z": day out of range'),
    ("yesterday", f'parsing time "yesterday" as {LAYOUT}: cannot parse "yesterday" as "2006"'),
    ("2024-1-01T00:00:00Z", f'parsing time "2024-1-01T00:00:00Z" as {LAYOUT}: cannot parse "1-01T00:00:00Z" as "01"'),
    ("2024-01-01", f'parsing time "2024-01-01" as {LAYOUT}: cannot parse "" as "T"'),
    ("2024-01-01 10:00:00", f'parsing time "2024-01-01 10:00:00" as {LAYOUT}: cannot parse " 10:00:00" as "T"'),
    ("2024-01-01T10:00:00", f'parsing time "2024-01-01T10:00:00" as {LAYOUT}: cannot parse "" as "Z07:00"'),
    ("2024-13-01T00:00:00Z", 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2024-00-01T00:00:00Z", 'parsing time "2024-00-01T00:00:00Z": month out of range'),
    ("2024-01-32T00:00:00Z", 'parsing time "2024-01-32T00:00:00Z": day out of range'),
    ("2024-04-31T00:00:00Z", 'parsing time "2024-04-31T00:00:00Z": day out of range'),
    ("2024-01-01T24:00:00Z", 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
    ("2024-01-01T23:60:00Z", 'parsing time "2024-01-01T23:60:00Z": minute out of range'),
    ("2024-01-01T23:59:60Z", 'parsing time "2024-01-01T23:59:60Z": second out of range'),
    ("2024-01-01T00:00:00+25:00", 'parsing time "2024-01-01T00:00:00+25:00": time zone offset hour out of range'),
    ("2024-01-01T00:00:00+05:61", 'parsing time "2024-01-01T00:00:00+05:61": time zone offset minute out of range'),
    ("2024-09-01T00:00:00+25:-0", 'parsing time "2024-09-01T00:00:00+25:-0": time zone offset hour out of range'),
    ("2024-01-01T00:00:00*05:00",
     f'parsing time "2024-01-01T00:00:00*05:00" as {LAYOUT}: cannot parse "*05:00" as "Z07:00"'),
    ("2024-01-01T00:00:00+0500", f'parsing time "2024-01-01T00:00:00+0500" as {LAYOUT}: cannot parse "+0500" as "Z07:00"'),
    ("2024-01-01T00:00:00Zjunk", 'parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"'),
    ("2024-01-01t00:00:00z", f'parsing time "2024-01-01t00:00:00z" as {LAYOUT}: cannot parse "t00:00:00z" as "T"'),
    ("2024-01-01T00:00:00.Z", f'parsing time "2024-01-01T00:00:00.Z" as {LAYOUT}: cannot parse ".Z" as "Z07:00"'),
    ("20a4-01-01T00:00:00Z", f'parsing time "20a4-01-01T00:00:00Z" as {LAYOUT}: cannot parse "20a4-01-01T00:00:00Z" as "2006"'),
    ("\u00e92024-01-01T00:00:00Z",
     f'parsing time "\\xc3\\xa92024-01-01T00:00:00Z" as {LAYOUT}: cannot parse "\\xc3\\xa92024-01-01T00:00:00Z" as "2006"'),
]

MICRO_FACTS = [
    ("2024-01-01T00:00:00.123456Z", None),
    ("2024-01-01T00:00:00.+23456Z", None),
    ("2024-01-01T00:00:00.12345Z",
     f'parsing time "2024-01-01T00:00:00.12345Z" as {MICRO}: cannot parse ".12345Z" as ".000000"'),
    ("2024-01-01T00:00:00.1234567Z",
     f'parsing time "2024-01-01T00:00:00.1234567Z" as {MICRO}: cannot parse "7Z" as "Z07:00"'),
    ("2024-01-01T00:00:00Z", f'parsing time "2024-01-01T00:00:00Z" as {MICRO}: cannot parse "Z" as ".000000"'),
    ("2024-01-01T00:00:00.-23456Z", 'parsing time "2024-01-01T00:00:00.-23456Z": fractional second out of range'),
]

BASE64_FACTS = [
    ("QUJD", None),
    ("QUJDRA==", None),
    ("QUJ=", None),
    ("QUJD\r", None),
    ("QU\nJD", None),
    ("QUJDRA=", "illegal base64 data at input byte 7"),
    ("QUJDR", "illegal base64 data at input byte 4"),
    ("Q", "illegal base64 data at input byte 0"),
    ("QQ==QQ==", "illegal base64 data at input byte 4"),
    ("!!", "illegal base64 data at input byte 0"),
    ("Q===", "illegal base64 data at input byte 1"),
    ("QUJDRA==x", "illegal base64 data at input byte 8"),
    ("QU=D", "illegal base64 data at input byte 2"),
]


@pytest.mark.parametrize(("value", "expected"), TIME_FACTS)
def test_rfc3339_errors_are_go_s(value, expected):
    assert parse_time_error(value, RFC3339) == expected


@pytest.mark.parametrize(("value", "expected"), MICRO_FACTS)
def test_micro_time_errors_are_go_s(value, expected):
    assert parse_time_error(value, RFC3339_MICRO) == expected


@pytest.mark.parametrize(("value", "expected"), BASE64_FACTS)
def test_base64_errors_are_go_s(value, expected):
    assert base64_error(value) == expected


def test_go_quote_escapes_like_time_package():
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("\t") == '"\\x09"'
