"""The report of a whole-catalog run (``dcnsim reproduce --all``): one self-contained HTML
page, ``<out>/index.html``, built from the sweep folders the run left.

Per id: its title and source, the verdict of ``docs/validation.md`` (``validation``), the
figures the report wrote (embedded as base64 data URIs), the report's printed tables
(``report.txt``, with the source's numbers where the report prints them), ``results.csv``,
the provenance of the last run (``run.json``) and the cost of all its points. A table of
contents comes first. The page loads nothing from elsewhere (no script, no web font, no
CDN), so the file alone can be mailed.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._tables import human, write_text_atomic
from .provenance import RUN_JSON, now
from .reports import RESULTS_FILE
from .runs import POINTS_DIR
from .validation import UNRATED, VERDICTS, Entry

INDEX_FILE = "index.html"
REPORT_TEXT = "report.txt"  # what a report printed, kept by the command line
MAX_ROWS = 200  # rows of results.csv shown per id
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}
VERDICT_COLOURS = {"reproduced": "#1a7f37", "partial": "#9a6700", "direction only": "#0969da",
                   "differs": "#cf222e", "not yet": "#6e7781", "no verdict": "#6e7781"}
# The page may load nothing but its own inline style and data: images.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 0 16px 48px; color: #1f2328; background: #fff; }
h1 { font-size: 24px; margin: 24px 0 4px; } h2 { font-size: 19px; margin: 0 0 6px; }
h3 { font-size: 15px; margin: 14px 0 4px; } h2 code { font-size: 18px; }
.meta, .note { color: #57606a; } code, pre { font: 12px/1.35 ui-monospace, monospace; }
pre { background: #f6f8fa; padding: 8px; overflow: auto; border-radius: 6px; }
table { border-collapse: collapse; margin: 4px 0; } .scroll { overflow: auto; }
th, td { border: 1px solid #d0d7de; padding: 2px 6px; text-align: right; }
th { background: #f6f8fa; } td.l, th.l { text-align: left; }
section.experiment { border-top: 2px solid #d0d7de; padding-top: 14px; margin-top: 22px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
         font-size: 12px; white-space: nowrap; }
.failed { color: #cf222e; font-weight: 600; }
img.figure { max-width: 100%; height: auto; border: 1px solid #d0d7de; margin: 4px 0; }
blockquote { margin: 4px 0; padding: 4px 10px; border-left: 4px solid #d0d7de;
             color: #424a53; }
"""


@dataclass
class Item:
    """One catalog id of the run: where its sweep folder is and how its run went."""

    ident: str
    title: str
    source: str = ""  # the scenario's [meta] source
    folder: Path | None = None  # its sweep folder (None: nothing was written)
    error: str | None = None  # why it failed (None: it ran and reported)
    wall_s: float | None = None  # wall time of this id in the catalog run


@dataclass(frozen=True)
class Cost:
    """The compute a sweep folder holds: its points and their engine time and events."""

    points: int
    engine_s: float  # the sum of the points' wall times (each point runs on one core)
    events: int


def cost(folder: Path) -> Cost:
    """Sum the ``run.json`` of every point of a sweep folder."""
    points, seconds, events = 0, 0.0, 0
    for path in sorted((folder / POINTS_DIR).glob(f"*/{RUN_JSON}")):
        meta = _json(path)
        points += 1
        wall = meta.get("wall_s")
        seconds += float(wall) if isinstance(wall, (int, float)) else 0.0
        count = meta.get("events")
        events += count if isinstance(count, int) and not isinstance(count, bool) else 0
    return Cost(points, seconds, events)


def figures(folder: Path) -> list[Path]:
    """The figures a report wrote into a sweep folder (top level only)."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_TYPES
                  and p.is_file() and not p.name.startswith("."))


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _anchor(ident: str) -> str:
    return "id-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in ident)


def _badge(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#6e7781")
    return f'<span class="badge" style="background:{colour}">{_e(verdict)}</span>'


def _seconds(value: float) -> str:
    if value < 1:
        return f"{value:.2f} s"
    if value < 60:
        return f"{value:.1f} s"
    minutes, secs = divmod(round(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d} min"


def _count(value: int) -> str:
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return str(value)


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    mime = IMAGE_TYPES[path.suffix.lower()]
    return (f'<img class="figure" alt="{_e(path.name)}" src="data:{mime};base64,{data}">')


def _results_table(path: Path) -> str:
    """``results.csv`` as an HTML table (numbers in the report's short spelling)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except OSError:
        return ""
    if not rows:
        return ""
    header, body = rows[0], rows[1:]
    shown = body[:MAX_ROWS]
    out = ['<div class="scroll"><table class="results"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for row in shown:
        out.append("<tr>" + "".join(_cell(c) for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    if len(body) > len(shown):
        out.append(f'<p class="note">first {len(shown)} of {len(body)} rows; all in '
                   f"<code>{_e(path.name)}</code></p>")
    return "".join(out)


def _cell(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return f'<td class="l">{_e(text)}</td>'
    shown = human(value) if math.isfinite(value) else text
    if shown.endswith(".0") and "." not in text:
        shown = shown[:-2]  # integers stay integers
    return f"<td>{_e(shown)}</td>"


def _verdict_block(entry: Entry | None, doc_name: str) -> str:
    if entry is None:
        return (f"<p>{_badge(UNRATED)} <span class='note'>not in {_e(doc_name)}</span></p>")
    said = f" — “{_e(entry.status)}”" if entry.status else ""
    where = f"{doc_name}#{entry.anchor}"
    parts = [f"<p>{_badge(entry.verdict)}{said} <span class='note'>({_e(entry.form)} of "
             f"<code>{_e(where)}</code>, section “{_e(entry.heading)}”)</span></p>"]
    if entry.excerpt:
        parts.append(f"<blockquote>{_e(entry.excerpt)}</blockquote>")
    return "".join(parts)


_META_FIELDS = (("dcnsim", "dcnsim"), ("git_commit", "commit"), ("engine", "engine"),
                ("quick", "quick"), ("status", "status"), ("executor", "ran on"),
                ("host", "host"), ("platform", "platform"), ("started_at", "started"),
                ("finished_at", "finished"))


def _metadata(folder: Path, spent: Cost) -> str:
    meta = _json(folder / RUN_JSON)
    rows = [(label, meta[key]) for key, label in _META_FIELDS if key in meta]
    if "wall_s" in meta:
        rows.append(("wall time of the last run", _seconds(float(meta["wall_s"]))
                     + f" (ran {meta.get('ran', '?')} points, reused {meta.get('reused', '?')})"))
    if "events" in meta:
        rows.append(("events of the last run", _count(int(meta["events"]))))
    rows.append(("cost of all points", f"{_seconds(spent.engine_s)} of engine time "
                 f"(one core per point), {_count(spent.events)} events, {spent.points} points"))
    if not meta:
        rows.insert(0, ("run.json", "missing"))
    body = "".join(f'<tr><th class="l">{_e(k)}</th><td class="l">{_e(_text(v))}</td></tr>'
                   for k, v in rows)
    return f'<table class="meta">{body}</table>'


def _text(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _section(item: Item, entry: Entry | None, doc_name: str) -> str:
    anchor = _anchor(item.ident)
    verdict = entry.verdict if entry is not None else UNRATED
    out = [f'<section class="experiment" id="{anchor}" data-id="{_e(item.ident)}" '
           f'data-verdict="{_e(verdict)}">',
           f"<h2><code>{_e(item.ident)}</code> — {_e(item.title)}</h2>"]
    if item.source:
        out.append(f'<p class="meta">source: {_e(item.source)}</p>')
    out.append(_verdict_block(entry, doc_name))
    if item.error is not None:
        out.append(f'<p class="failed">failed: {_e(item.error)}</p>')
    folder = item.folder
    if folder is None or not folder.is_dir():
        out.append('<p class="note">no results</p></section>')
        return "\n".join(out)
    images = figures(folder)
    if images:
        out.append("<h3>Figure" + ("s" if len(images) > 1 else "") + "</h3>")
        out.extend(_image(p) for p in images)
    report = folder / REPORT_TEXT
    if report.is_file():
        out.append("<h3>Report (as printed; “ours (source)” where the source gives a "
                   "number)</h3>")
        out.append(f"<pre>{_e(report.read_text(encoding='utf-8'))}</pre>")
    table = _results_table(folder / RESULTS_FILE)
    if table:
        out.append(f"<h3>Results (<code>{_e(RESULTS_FILE)}</code>)</h3>")
        out.append(table)
    out.append("<h3>Run</h3>")
    out.append(f'<p class="note">folder <code>{_e(folder)}</code></p>')
    out.append(_metadata(folder, cost(folder)))
    out.append("</section>")
    return "\n".join(out)


def _summary(items: Sequence[Item], verdicts: Mapping[str, Entry]) -> str:
    counts = {v: 0 for v in VERDICTS}
    for item in items:
        entry = verdicts.get(item.ident)
        counts[entry.verdict if entry is not None else UNRATED] += 1
    parts = [f"{_badge(v)} {n}" for v, n in counts.items() if n]
    failed = sum(1 for item in items if item.error is not None)
    if failed:
        parts.append(f'<span class="failed">{failed} failed</span>')
    return " &nbsp; ".join(parts)


def _contents(items: Sequence[Item], verdicts: Mapping[str, Entry],
              costs: Mapping[str, Cost | None]) -> str:
    out = ['<table class="toc"><thead><tr><th>#</th><th class="l">id</th>'
           '<th class="l">title</th><th class="l">verdict</th><th>points</th>'
           '<th>engine time</th><th class="l">run</th></tr></thead><tbody>']
    for n, item in enumerate(items, 1):
        entry = verdicts.get(item.ident)
        spent = costs.get(item.ident)
        state = ('<span class="failed">failed</span>' if item.error is not None else "ok")
        out.append(
            f'<tr><td>{n}</td><td class="l"><a href="#{_anchor(item.ident)}">'
            f"<code>{_e(item.ident)}</code></a></td><td class='l'>{_e(item.title)}</td>"
            f"<td class='l'>{_badge(entry.verdict if entry else UNRATED)}</td>"
            f"<td>{spent.points if spent else ''}</td>"
            f"<td>{_seconds(spent.engine_s) if spent else ''}</td><td class='l'>{state}</td>"
            "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def render(items: Sequence[Item], verdicts: Mapping[str, Entry], *, quick: bool,
           doc: Path | None, wall_s: float | None = None, generated_at: str | None = None
           ) -> str:
    """The whole page, as text."""
    doc_name = "docs/validation.md"
    costs = {item.ident: cost(item.folder) if item.folder is not None and item.folder.is_dir()
             else None for item in items}
    total = sum(c.engine_s for c in costs.values() if c is not None)
    scale = ("quick (each scenario's [quick] table: same code path, smaller scale; the "
             "source's numbers and the docs' verdicts are for the full-scale experiment)"
             if quick else "full scale")
    lines = [f"generated {_e(generated_at or now())}", f"scale: {_e(scale)}",
             f"{len(items)} ids; engine time of all points {_e(_seconds(total))}"]
    if wall_s is not None:
        lines.append(f"wall time of this run {_e(_seconds(wall_s))}")
    lines.append("verdicts from " + (f"<code>{_e(doc)}</code>" if doc is not None else
                                     f"nowhere: {_e(doc_name)} was not found"))
    head = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>dcnsim catalog{' (quick)' if quick else ''}</title>"
            f"<style>{STYLE}</style></head><body>")
    body = [head, f"<h1>dcnsim: the catalog{' (quick)' if quick else ''}</h1>",
            f'<p class="meta">{"<br>".join(lines)}</p>',
            f"<p>{_summary(items, verdicts)}</p>",
            '<nav id="contents"><h2>Contents</h2>', _contents(items, verdicts, costs), "</nav>"]
    body.extend(_section(item, verdicts.get(item.ident), doc_name) for item in items)
    body.append("</body></html>\n")
    return "\n".join(body)


def write_index(out_root: Path, items: Iterable[Item], verdicts: Mapping[str, Entry], *,
                quick: bool, doc: Path | None, wall_s: float | None = None) -> Path:
    """Write ``<out_root>/index.html`` (atomically); returns its path."""
    path = out_root / INDEX_FILE
    write_text_atomic(path, render(list(items), verdicts, quick=quick, doc=doc,
                                   wall_s=wall_s))
    return path
