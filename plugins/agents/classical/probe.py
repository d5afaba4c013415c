"""In-sandbox script of the ``proxy-probe`` agent: ``python3 probe.py`` (standard library only).

A minimal LLM-agent stand-in for testing and measuring the harness itself
(parallel episodes, rate limits, resume): it sends ``--turns`` OpenAI Chat
Completions requests to the model proxy (``--base-url``), one after another,
then submits the last allowed label for every test sample (``results.json``)
or a rule that always predicts it (``rule.py``).  It never reads the model's
answers beyond checking the HTTP status: a failed request exits with code 3.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

RULE = '''LABEL = {label!r}


def predict(df) -> list:
    return [LABEL]
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="probe.py")
    parser.add_argument("--task-info", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="probe")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--prompt-file", default=None)
    args = parser.parse_args(argv)
    info = json.loads(args.task_info)
    url = args.base_url.rstrip("/") + "/v1/chat/completions"
    messages = [{"role": "user", "content": Path(args.prompt_file).read_text() if args.prompt_file else "go"}]
    for turn in range(args.turns):
        body = json.dumps({"model": args.model, "messages": messages}).encode()
        request = urllib.request.Request(url, body, {"content-type": "application/json",
                                                     "authorization": "Bearer sk-dummy"})
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                answer = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            print(f"probe: request {turn + 1} failed: {exc}", file=sys.stderr)
            return 3
        text = (answer.get("choices") or [{}])[0].get("message", {}).get("content") or ""
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "continue"}]
    label = info["labels"][-1]
    root = Path(".")
    if info.get("submission") == "programmatic":
        (root / "rule.py").write_text(RULE.format(label=label))
    else:
        results = {p.name: [label] for p in sorted((root / "test_samples").glob("*.parquet"))}
        (root / "results.json").write_text(json.dumps(results))
    print(f"probe: {args.turns} model request(s), submitted {label!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
