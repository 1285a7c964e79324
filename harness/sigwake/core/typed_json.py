"""Dataclasses to JSON data and back, by their type hints: one codec for every stored record, so no record
writes its own to_json/from_json. Enums are stored as their values; a field missing from the data takes its
default (what an added field needs); a field the data has that the class does not is an error."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")


def to_data(value: Any) -> Any:
    """JSON data (dicts, lists, strings, numbers, None) for a dataclass and what it holds."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    return value


def from_data(cls: type[T], data: Any) -> T:
    """An instance of dataclass `cls` from `data`; TypeError or ValueError when the data does not fit."""
    return _read(cls, data, cls.__name__)


def _read(hint: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if data is None and type(None) in options:
            return None
        for option in (o for o in options if o is not type(None)):
            try:
                return _read(option, data, where)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{where}: {data!r} is none of {hint}")
    if origin in (list, tuple):
        if not isinstance(data, list):
            raise TypeError(f"{where}: a list expected, not {type(data).__name__}")
        (item, *_) = typing.get_args(hint) or (Any,)
        read = [_read(item, v, f"{where}[{i}]") for i, v in enumerate(data)]
        return read if origin is list else tuple(read)
    if origin is dict:
        if not isinstance(data, dict):
            raise TypeError(f"{where}: an object expected, not {type(data).__name__}")
        _, item = typing.get_args(hint) or (str, Any)
        return {k: _read(item, v, f"{where}.{k}") for k, v in data.items()}
    if hint is Any:
        return data
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(data, dict):
            raise TypeError(f"{where}: an object expected, not {type(data).__name__}")
        hints = typing.get_type_hints(hint)
        known = {f.name for f in dataclasses.fields(hint) if f.init}
        extra = sorted(set(data) - known)
        if extra:
            raise TypeError(f"{where}: no field {', '.join(extra)} in {hint.__name__}")
        return hint(**{name: _read(hints[name], value, f"{where}.{name}") for name, value in data.items()})
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(data)
    if hint is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if isinstance(hint, type) and not isinstance(data, hint):
        raise TypeError(f"{where}: {hint.__name__} expected, not {type(data).__name__} {data!r}")
    return data
