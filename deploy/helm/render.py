"""Renders and lints a Helm chart offline with Helm's own engine, and prints JSON for the tests.

Helm's Go SDK (v4) comes as a shared library in the helm-python-sdk wheel, which scripts/setup.sh
installs into $STACK_DIR/helm-sdk (no helm binary is available from the package registries here).

    python render.py chart <chart-dir> <release> <namespace> < values.json
        → {"manifests": [{"template", "object"}], "notes": str, "lint": {...}}
          or {"error": "<Helm's message>"} when rendering fails (a `required` or `fail` in a template)
    python render.py yaml <file, or - for standard input>
        → every YAML document as a JSON list (Helm's YAML reader)
"""

from __future__ import annotations

import json
import re
import sys

import helm_python as helm

# Helm logs `required` misses while linting to stderr; the JSON answer already carries them.
helm.disable_logging()

DOC_SEPARATOR = re.compile(r"^---\s*$", re.MULTILINE)


def documents(text: str) -> list[dict]:
    out = []
    for doc in DOC_SEPARATOR.split(text):
        # Comment-only or empty documents (a template whose `if` was false) are not objects.
        if not any(line.strip() and not line.lstrip().startswith("#") for line in doc.splitlines()):
            continue
        obj = helm.values_from_yaml(doc)
        if obj:
            out.append(obj)
    return out


def render_chart(chart_dir: str, release: str, namespace: str, values: dict) -> dict:
    lint = helm.lint(chart_dir, values, strict=True, namespace=namespace)
    try:
        with helm.Chart.load(chart_dir) as chart:
            rendered = chart.render(values, name=release, namespace=namespace, is_install=True)
    except helm.HelmError as e:
        return {"error": str(e), "lint": lint}
    manifests = []
    notes = ""
    for template, text in sorted(rendered.items()):
        if template.endswith("NOTES.txt"):
            notes = text
            continue
        manifests.extend({"template": template, "object": obj} for obj in documents(text))
    return {"manifests": manifests, "notes": notes, "lint": lint}


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[1] == "chart":
        values = json.load(sys.stdin)
        print(json.dumps(render_chart(argv[2], argv[3], argv[4], values)))
        return 0
    if len(argv) == 3 and argv[1] == "yaml":
        if argv[2] == "-":
            text = sys.stdin.read()
        else:
            with open(argv[2], encoding="utf-8") as f:
                text = f.read()
        print(json.dumps(documents(text)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
