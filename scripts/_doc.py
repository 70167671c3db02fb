"""The generated blocks of docs/validation.md: one place that swaps a block between its
markers (the validation scripts' --render-only and full runs)."""


def place(text: str, block: str, begin: str, end: str) -> str:
    """``text`` with what lies between ``begin`` and ``end`` replaced by ``block``."""
    if begin not in text or end not in text:
        raise SystemExit(f"docs/validation.md has no {begin} ... {end} markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}\n{end}{tail}"
