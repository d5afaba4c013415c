"""Write plugins/tasks/tracebench/report/paper_values.json: the TraceBench paper's own numbers for the tables
``harness report --paper`` puts beside the reproduced ones, read from the paper's text copy.

usage: python scripts/make_paper_values.py PAPER_TXT   (the team's copy: shared/seeds/000_35a535caa2113a87.txt)

The text copy carries no page numbers, so each table is cited by its number, caption and the section it
appears under (the nearest heading above it).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "plugins" / "tasks" / "tracebench" / "report" / "paper_values.json"
#: paper table -> the report's table key
KEYS = {1: "table1", 2: "table2-high", 23: "table23",
        24: "per-simulator-main-low-direct", 25: "per-simulator-main-low-programmatic",
        26: "per-simulator-main-high-direct", 27: "per-simulator-main-high-programmatic",
        28: "per-simulator-no-examples-high-direct", 29: "per-simulator-no-examples-high-programmatic",
        30: "per-simulator-no-context-high-direct", 31: "per-simulator-no-context-high-programmatic"}
#: the column headers the text copy spreads over two or three rows, as the report names them
HEADERS = {1: ["Agent"] + [f"{n} noise, {s}, {split}" for n in ("low", "high")
                           for s, split in (("direct", "episode"), ("programmatic", "episode"),
                                            ("programmatic", "held-out"))],
           2: ["Agent (ablation)", "direct, episode", "programmatic, episode", "programmatic, held-out"]}
HEADING = re.compile(r"^(\d+(\.\d+)*\.?|[A-K](\.\d+)*\.?)\s+[A-Z][^\t]{2,80}$")


def clean(text: str) -> str:
    text = re.sub(r"\$\\mathcal\{S\}_\{\\mathrm\{direct\}\}\$", "direct", text)
    text = re.sub(r"\$\\mathcal\{S\}_\{\\mathrm\{prog\}\}\$", "programmatic", text)
    text = re.sub(r"\$\\mathcal\{S\}_\{\\mathrm\{direct\}\}-\\mathcal\{S\}_\{\\mathrm\{prog\}\}\$",
                  "direct − programmatic", text)
    text = re.sub(r"\$([0-9.]+)\\pm ([0-9.]+)\$", r"\1 ± \2", text)
    text = text.replace("$\\mid$", "|")
    return re.sub(r"\s+", " ", text).replace(" - ", " − ").strip()   # the copy's en spaces are plain spaces


def tables(lines: list[str]) -> list[dict]:
    out = []
    captions = [i for i, line in enumerate(lines) if re.match(r"^Table \d+\. ", line)]
    for n, start in enumerate(captions):
        number = int(re.match(r"^Table (\d+)\.", lines[start]).group(1))
        if number not in KEYS:
            continue
        end = captions[n + 1] if n + 1 < len(captions) else len(lines)
        section = next((lines[i].strip() for i in range(start - 1, -1, -1) if HEADING.match(lines[i].strip())), "")
        header: list[str] = []
        sections: list[dict] = []
        for line in lines[start + 1:end]:
            if not line.strip():
                continue
            cells = [clean(c) for c in line.split("\t")]
            if "\t" not in line:
                if len(line) > 100:   # running text after the table
                    if sections:
                        break
                    continue
                sections.append({"title": clean(line), "rows": []})
            elif cells[0] == "" and len([c for c in cells if c]) == 1 and not header:
                sections.append({"title": cells[-1] if cells[-1] else "", "rows": []})
            elif cells[0] == "" or cells[0] in ("Contrast",):
                if cells[0] == "" and len([c for c in cells if c]) == 1:
                    sections.append({"title": [c for c in cells if c][0], "rows": []})
                else:
                    header = [c for c in cells]
            else:
                if not sections:
                    sections.append({"title": "", "rows": []})
                sections[-1]["rows"].append([c for c in cells])
        columns = len(HEADERS.get(number, header))
        for part in sections:  # a cell the paper leaves out (exploration in held-out columns) is a dash
            part["rows"] = [[row[0]] + [c or "–" for c in row[1:]] + ["–"] * (columns - len(row))
                            for row in part["rows"]]
        out.append({"key": KEYS[number], "table": f"Table {number}", "section": section,
                    "caption": clean(lines[start].split(". ", 1)[1]).split(". ")[0] + ".",
                    "page": None, "header": HEADERS.get(number, ["Agent", *header[1:]] if header and not header[0] else header), "sections": [s for s in sections if s["rows"]]})
    return out


def main(path: str) -> None:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    data = {"source": "TraceBench: Controlled Evaluation of LLM Agents for Time-Series Root-Cause Attribution "
                      "(the team's text copy, shared/seeds/000_35a535caa2113a87.txt)",
            "pages": "the text copy carries no page numbers: each table is cited by number, caption and section",
            "tables": tables(lines)}
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(data['tables'])} table(s) to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
