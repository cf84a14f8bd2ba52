"""What a field may hold: a type, and for some fields a value rule the API
server enforces (an enumeration, a quantity)."""

from __future__ import annotations

from datetime import datetime

from ...api.quantity import QuantityError, parse_quantity


class Check:
    """One rule. `types` is tested with isinstance() (a bool is not an
    integer, as in JSON); `value_check`, when set, returns why an otherwise
    well-typed value is refused, or None."""

    __slots__ = ("types", "no_bool", "want", "value_check")

    def __init__(self, types: tuple, want: str, *, no_bool: bool = False, value_check=None):
        self.types = types
        self.no_bool = no_bool
        self.want = want
        self.value_check = value_check

    def typed(self, value) -> bool:
        return isinstance(value, self.types) and not (self.no_bool and value.__class__ is bool)

    def accepts(self, value) -> bool:
        return self.typed(value) and (self.value_check is None or self.value_check(value) is None)

    def message(self, value) -> str:
        if self.typed(value):
            return self.value_check(value)
        if isinstance(value, dict):
            got = "a mapping"
        elif isinstance(value, list):
            got = "a list"
        else:
            got = f"{type(value).__name__} {_short(value)}"
        hint = " (quote it in YAML)" if self.types == (str,) and not isinstance(value, (dict, list)) else ""
        return f"must be {self.want}, not {got}{hint}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _quantity(value):
    if isinstance(value, (bool, dict, list)) or not isinstance(value, (str, int, float)):
        got = "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else _short(value)
        return f"invalid quantity {got}: must be a string such as 500m or 2Gi, or a number"
    if isinstance(value, float) and value != value:  # NaN
        return f"invalid quantity {_short(value)}"
    try:
        q = parse_quantity(value)
    except (QuantityError, OverflowError, ValueError) as exc:
        return f"invalid quantity {_short(value)}: {exc}"
    if q.sign() < 0:
        # ValidateNonnegativeQuantity: the API server never stores it.
        return f"invalid quantity {_short(value)}: must be greater than or equal to 0"
    return None


def enum(*values: str) -> Check:
    allowed = frozenset(values)
    supported = ", ".join(f'"{v}"' for v in values)
    return Check((str,), f"one of {supported}",
                 value_check=lambda v: None if v in allowed else f"unsupported value {_short(v)}: supported values: {supported}")


def _non_negative(value):
    return None if value >= 0 else f"invalid value {value}: must be greater than or equal to 0"


STR = Check((str,), "a string")
INT = Check((int,), "an integer", no_bool=True)
NON_NEGATIVE_INT = Check((int,), "an integer", no_bool=True, value_check=_non_negative)
BOOL = Check((bool,), "true or false")
MAP = Check((dict,), "a mapping")
LIST = Check((list,), "a list")
# YAML turns an unquoted 2024-01-01T00:00:00Z into a datetime.
TIME = Check((str, datetime), "an RFC 3339 time")
QUANTITY = Check((object,), "a quantity such as 500m or 2Gi", value_check=_quantity)
INT_OR_STR = Check((int, str), "an integer or a string", no_bool=True)
ANY = Check((object,), "a value")

# The field must be present and not null.
REQUIRED = "required"
