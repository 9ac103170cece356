"""Building blocks of chainrt's HTML reports: one page skeleton with a readable style, tables
with a caption and (optionally) the named definition of the measure they show, and figures with
a caption saying what to look at. Everything is escaped; no script, no external resource."""

from __future__ import annotations

import html
import re

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#1b1b1b;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}
p.meta{color:#555;margin-top:0}
table{border-collapse:collapse;margin:.6em 0 1.4em;font-size:.92em}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.3em .6em} th{background:#f0f3f7;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fde8e8} tr.warn td{background:#fff6dc}
p.def{font-size:.9em;color:#333;background:#f7f7f7;border-left:3px solid #7a9cc6;padding:.4em .7em;margin:.2em 0 .3em}
figure{margin:1.2em 0} figure img{max-width:100%;border:1px solid #e3e3e3}
figcaption{font-size:.92em;color:#333;margin-top:.3em}
ul.findings li{margin:.3em 0}
"""


_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def plain(text: str) -> str:
    """Text as a page or a terminal line may show it: terminal escape sequences (the colours of a
    captured Fast DDS or ROS 2 message) and other control characters removed."""
    text = _ANSI.sub("", str(text))
    return "".join(ch for ch in text if ch in "\n\t" or (ord(ch) >= 0x20 and ord(ch) != 0x7F))


def esc(x) -> str:
    return html.escape(plain(str(x)))


def page(title: str, body: str, subtitle: str = "") -> str:
    sub = f'<p class="meta">{esc(subtitle)}</p>' if subtitle else ""
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{CSS}</style></head><body>\n<h1>{esc(title)}</h1>{sub}\n{body}\n</body></html>\n")


def table(headers: list[str], rows: list[list], caption: str, definition: tuple[str, str] | None = None,
          row_class: list[str] | None = None) -> str:
    """A table; cells that are numbers (or '-') are right-aligned. ``definition``: (name, text),
    printed above the table as the one definition of the measure it shows."""
    d = ""
    if definition:
        d = f'<p class="def"><b>{esc(definition[0])}</b>: {esc(definition[1])}</p>'
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for i, r in enumerate(rows):
        cls = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        cells = "".join(f'<td class="num">{esc(v)}</td>' if _numeric(v) else f"<td>{esc(v)}</td>" for v in r)
        body.append(f"<tr{cls}>{cells}</tr>")
    return (f"{d}<table><caption>{esc(caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


_NUMBER = re.compile(r"^(-|[-+]?\d[\d.,]*( ?(%|x))?( \(.*\))?)$")


def _numeric(v) -> bool:
    """A number, a figure such as '1.10 (target <= 1.15)', or '-' (no figure): right-aligned."""
    return isinstance(v, (int, float)) or bool(_NUMBER.match(str(v).strip()))


def figure(src: str, caption: str, alt: str) -> str:
    return (f'<figure><img src="{esc(src)}" alt="{esc(alt)}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def section(title: str, *parts: str) -> str:
    return f"<h2>{esc(title)}</h2>\n" + "\n".join(p for p in parts if p)


def para(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def items(lines: list[str]) -> str:
    return '<ul class="findings">' + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"
