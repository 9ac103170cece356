"""The documentation as a reader meets it: every relative link of the README and docs/ leads to a
file that exists, and docs/ stays a set of pages, not a store of runs: at most 1.75 MB in all, of
which at most 200 kB are measured series and results (what is neither a page nor a figure)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # [text](target), images included
DOCS_LIMIT_BYTES = 1_750_000
SERIES_LIMIT_BYTES = 200_000


def _pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_relative_link_resolves():
    broken = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks are not links
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the page
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "\n".join(broken)


def test_docs_stay_small():
    files = [p for p in (ROOT / "docs").rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert total <= DOCS_LIMIT_BYTES, f"docs/ holds {total} bytes (limit {DOCS_LIMIT_BYTES})"
    series = sum(p.stat().st_size for p in files if p.suffix not in (".md", ".png"))
    assert series <= SERIES_LIMIT_BYTES, (
        f"docs/ holds {series} bytes of series and results (limit {SERIES_LIMIT_BYTES}): "
        "keep runs out of docs/, or gzip the ones a page cites")
