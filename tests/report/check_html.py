#!/usr/bin/env python3
"""Every NAME.report.html in DIR is self-contained: no reference to anything outside the file
(no src, no href but an empty data: icon, no url(), no @import), and it carries the memory map
inline with one buffer rectangle per placed buffer."""
import html.parser
import json
import pathlib
import re
import sys


class References(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.outside = []
        self.buffer_rects = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("src", "href", "xlink:href", "action", "poster", "srcset"):
            if key in attrs and not attrs[key].startswith("data:"):
                self.outside.append(f"<{tag} {key}={attrs[key]!r}>")
        if tag == "rect" and "buffer" in attrs.get("class", "").split():
            self.buffer_rects += 1


def main(folder):
    failures = []
    pages = sorted(pathlib.Path(folder).glob("*.report.html"))
    if not pages:
        failures.append(f"no pages in {folder}")
    for page in pages:
        text = page.read_text()
        report = json.loads(page.with_name(page.name.replace(".report.html", ".report.json")).read_text())
        parser = References()
        parser.feed(text)
        failures += [f"{page.name}: refers outside the file: {ref}" for ref in parser.outside]
        for pattern in (r"url\(", r"@import", r"https?://(?!www\.w3\.org/2000/svg)"):
            if re.search(pattern, text):
                failures.append(f"{page.name}: contains {pattern}")
        placed = sum(1 for b in report["buffers"] if b["offset"] is not None)
        if parser.buffer_rects != placed:
            failures.append(f"{page.name}: {parser.buffer_rects} buffer rectangles for {placed} placed buffers")
        print(f"{page.name}: self-contained, {parser.buffer_rects} buffer rectangles")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
