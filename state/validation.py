"""One wording of a pydantic `ValidationError`: its first mistake, as one sentence.

The handover's arguments, a consult's arguments and entries, and the run context are
validated by the pydantic models that describe them; `problem` is the one place their
mistakes are put in words, naming the field, what was wrong and what it takes (read from
the model's JSON schema). An agent sees it as an `ERROR: ...` line (`error_line`); a bad
context raises it as a `ValueError`. A check of a model's own (a did-you-mean, a folder
that does not exist) raises `refusal(sentence)`, reported as it is.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

REFUSED = "refused"
UNKNOWN = ("extra_forbidden", "unexpected_keyword_argument")


def refusal(sentence: str) -> PydanticCustomError:
    """A model's own check failing: `sentence` is reported as it is."""
    return PydanticCustomError(REFUSED, "{sentence}", {"sentence": sentence})


def _schema(model: type[Any]) -> dict[str, Any]:
    """The model's JSON schema: what each field takes (made on a mistake only)."""
    return TypeAdapter(model).json_schema()


def _where(at: str, loc: tuple[int | str, ...]) -> str:
    """`consults[0].question`, `decisions[2]`: the field (and item) a mistake is in."""
    where = at
    for part in loc:
        where += f"[{part}]" if isinstance(part, int) else f".{part}" if where else str(part)
    return where


def _integer(least: int | None) -> str:
    return (
        "an integer" if least is None else "an integer >= 0" if least < 1 else "a positive integer"
    )


def problem(exc: ValidationError, model: type[Any], *, at: str = "", noun: str = "argument") -> str:
    """The first mistake `exc` reports of validating `model`, as one sentence.

    Unknown names come first, all in one sentence; `at` names where the value sits (a
    consult's `consults[0]`); `noun` is what the model's fields are called to its caller.
    """
    schema = _schema(model)
    properties: dict[str, Any] = schema.get("properties", {})
    errors = exc.errors(include_url=False)
    unknown = sorted(str(e["loc"][-1]) for e in errors if e["type"] in UNKNOWN)
    if unknown:
        return (
            f"{at}{': ' if at else ''}unknown {noun}(s) {', '.join(unknown)}; "
            f"{schema['title']} takes: {', '.join(properties)}"
        )
    error = errors[0]
    kind, value, loc, ctx = error["type"], error["input"], error["loc"], error.get("ctx") or {}
    where = _where(at, loc)
    field = properties.get(str(loc[0]), {}) if loc else {}
    got = f"{type(value).__name__} {value!r:.60}"
    if kind == REFUSED:
        return str(ctx["sentence"])
    if kind == "missing":
        return f"{where} is required"
    if not loc:  # not an object at all
        return f"{where or schema['title']} must be an object ({', '.join(properties)}), got {type(value).__name__}"
    if kind == "string_type" or kind == "literal_error" and not isinstance(value, str):
        # a list's item names its type only
        return f"{where} must be a string, got {type(value).__name__ if len(loc) > 1 else got}"
    if kind == "literal_error":
        valid = f"valid {str(loc[0]).rsplit('_', 1)[-1]}s"  # return_condition: valid conditions
        return f"invalid {where} {value!r}; {valid}: {', '.join(field['enum'])}"
    if kind == "list_type":
        return f"{where} must be a list of strings, got {type(value).__name__}"
    if kind == "bool_type":
        return f"{where} must be true or false, got {got}"
    if kind == "int_type":
        return f"{where} must be {_integer(field.get('minimum'))}, got {got}"
    if kind == "greater_than_equal":
        least = ctx["ge"]
        if least > 1 and value >= 1:
            return f"{where} must be at least {least:,}, got {value!r}"
        return f"{where} must be {_integer(least)}, got {value!r}"
    if kind == "less_than_equal":
        return f"{where} must be at most {ctx['le']}, got {value!r}"
    return f"{where}: {error['msg']} (got {got})"


def error_line(exc: ValidationError, model: type[Any], **where: str) -> str:
    """`problem` as the `ERROR: ...` line an agent acts on."""
    return f"ERROR: {problem(exc, model, **where)}"
