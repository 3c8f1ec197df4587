"""All YAML goes through here: safe loading (the C loader when present), stable dumping, and the
one escaping filter for scalars written by templates.

Records are Markdown with YAML front matter. `split_front_matter` finds the first closing `---`
so that a body may itself carry `---` lines.
"""
from __future__ import annotations

from majordomus.base.lean import TYPE_CHECKING, json

if TYPE_CHECKING:
    import re
    from typing import Any

# Characters PyYAML refuses raw, or folds as line breaks, inside a double-quoted scalar.
# (compiled on first use: the class spans most of Unicode, and compiling it costs ~4 ms of every
# command that imports this module and writes no scalar)
_UNSAFE_CLASS = "[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
_UNSAFE: re.Pattern[str] | None = None


class YamlError(ValueError):
    """A YAML document that could not be read; the message names the place."""


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _unique_keys_loader() -> Any:
    """A safe loader that refuses a mapping with the same key twice."""
    import yaml

    base = _loader()

    class Strict(base):  # type: ignore[misc,valid-type]
        def get_single_node(self) -> Any:
            node = super().get_single_node()
            if node is not None:
                _refuse_aliases(node)
            return node

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return dict(loader.construct_mapping(node, deep=deep))

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Strict


def _refuse_aliases(root: Any) -> None:
    """Refuse a document that uses an alias (`*name`). A composed alias is the very node it
    names, met a second time: 479 bytes of nested aliases (a "billion laughs") stand for
    billions of values, and every walk of them hangs. No file of ours needs one, so any node
    met twice is refused, in one pass over the distinct nodes (bounded by the text's size)."""
    import yaml

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not accepted here",
                                              node.start_mark)
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)


_STRICT: Any = None


def load(text: str, where: str = "<string>") -> Any:
    """Load one YAML document safely; duplicate keys and tags are refused, naming `where`."""
    global _STRICT
    import yaml

    if _STRICT is None:
        _STRICT = _unique_keys_loader()
    try:
        return yaml.load(text, Loader=_STRICT)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(f"{where}{line}: {problem}") from None


def dump(data: Any) -> str:
    """Dump with a stable order (as given), block style, unicode kept."""
    import yaml

    return str(yaml.dump(data, Dumper=_dumper(), sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=1 << 16))


def _dumper() -> Any:
    """The safe dumper, never writing an anchor or alias (a value met twice is written twice):
    what we write, we would read back, and the loader refuses aliases."""
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Plain(base):  # type: ignore[misc,valid-type]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return Plain


def scalar(value: Any) -> str:
    """One YAML scalar for a template: a double-quoted string that any text survives."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = json.dumps(str(value), ensure_ascii=False)
    if text.isascii() and text.isprintable():  # nothing to escape: the pattern is not even compiled
        return text
    global _UNSAFE
    if _UNSAFE is None:
        import re

        _UNSAFE = re.compile(_UNSAFE_CLASS)
    return _UNSAFE.sub(lambda m: _escape(m.group(0)), text)


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def split_front_matter(text: str) -> tuple[str, str] | None:
    """(front matter, body) of a `---` delimited document, or None when it has none."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            return text[4:-4], ""
        return None
    return text[4:end + 1], text[end + 5:]
