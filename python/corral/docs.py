"""Documentation generated from the schema: the options section of doc/corral.txt.

`python -m corral.docs` rewrites that section in place; a test fails when it is out of date.
"""

from __future__ import annotations

import sys

from corral import schema

BEGIN = "The list below is generated from the schema by `python -m corral.docs`."
END = "(end of the generated list)"
WIDTH = 78


def _wrap(text: str, indent: str) -> list[str]:
    lines: list[str] = []
    line = indent
    for word in text.split():
        if len(line) + len(word) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += word + " "
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _default(field: schema.Field) -> list[str]:
    if any(field.key in preset for preset in schema.PRESETS.values()):
        return ["set by the mode (|corral-modes|)"]
    value = field.default
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, str):
        return [f'"{value}"']
    if isinstance(value, int):
        return [str(value)]
    if not value:
        return ["[]"]
    return ["["] + [f'  "{item}",' for item in value] + ["]"]


def options_section() -> str:
    out = [BEGIN]
    for field in schema.FIELDS:
        tag = f"*corral-{field.key}*"
        out.append("")
        out.append(f"{field.key}".ljust(WIDTH - len(tag)) + tag)
        out.extend(_wrap(f"Type: {field.expected()}.", "    "))
        out.extend(_wrap(field.doc, "    "))
        default = _default(field)
        if len(default) == 1:
            out.append(f"    Default: {default[0]}")
        else:
            out.append("    Default: >")
            out.extend("      " + line for line in default)
            out.append("<")
    out.append(END)
    return "\n".join(out)


def replace_section(text: str) -> str:
    start = text.index(BEGIN)
    end = text.index(END) + len(END)
    return text[:start] + options_section() + text[end:]


def main(argv: list[str]) -> int:
    path = argv[0] if argv else "doc/corral.txt"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = replace_section(text)
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
