"""Read a report back: every `data-key`/`data-value` cell and the ids, with the standard HTML parser."""

from __future__ import annotations

from html.parser import HTMLParser


class ReportParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.values: dict[str, list[tuple[str, str]]] = {}  # section id -> [(key, raw value)]
        self.rules: dict[str, dict[str, str]] = {}  # section id -> rule -> "true"/"false"
        self.verdicts: dict[str, str] = {}  # section id -> first badge
        self.olympic: dict[str, dict[str, str]] = {}
        self.imgs: list[str] = []
        self.body: dict[str, str] = {}
        self._section = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "body":
            self.body = a
        if tag == "section":
            self._section = a.get("id", "")
        if "data-key" in a:
            self.values.setdefault(self._section, []).append((a["data-key"], a.get("data-value", "")))
        if "data-rule" in a:
            self.rules.setdefault(self._section, {})[a["data-rule"]] = a.get("data-passed", "")
        if "data-verdict" in a and self._section not in self.verdicts:
            self.verdicts[self._section] = a["data-verdict"]
        if "data-olympic" in a:
            self.olympic.setdefault(self._section, {})[a["data-run"]] = a["data-olympic"]
        if tag == "img":
            self.imgs.append(a.get("src", ""))

    def value(self, section: str, key: str) -> float | None:
        raw = dict(self.values.get(section, [])).get(key)
        return None if raw in (None, "") else float(raw)

    def column(self, section: str, key: str) -> list[float | None]:
        return [None if v == "" else float(v) for k, v in self.values.get(section, []) if k == key]


def parse(text: str) -> ReportParser:
    p = ReportParser()
    p.feed(text)
    return p
