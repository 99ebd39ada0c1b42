import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';

/** The command line of the sandbox model's (deterministic, not AI) Python projects: run() is pure, main() does the file. */

export function cliFile(spec: GenerationSpec, sqlite: boolean): SandboxFile {
  const E = spec.entity.pascal;
  const pkg = spec.resource.snake;
  const f = spec.field;
  const env = `${pkg.toUpperCase()}_${sqlite ? 'DB' : 'FILE'}`;
  const one = withArticle(spec.entity.words);
  const load = sqlite
    ? `    store = ${E}Store(os.environ.get("${env}", "${pkg}.db"))
    try:
        print_result(run(argv, store))
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    finally:
        store.close()
    return 0`
    : `    path = os.environ.get("${env}", "${pkg}.json")
    initial: List[${E}] = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            initial = [${E}(**item) for item in json.load(file)]
    store = ${E}Store(initial)
    before = store.list()
    try:
        print_result(run(argv, store))
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    if store.list() != before:
        with open(path, "w", encoding="utf-8") as file:
            json.dump([item.to_dict() for item in store.list()], file, indent=2)
    return 0`;
  return {
    path: `${pkg}/cli.py`, lang: 'python',
    content: `"""Command line for ${spec.resource.words}: add, list, show, rename, remove (kept in ${sqlite ? 'a SQLite file' : 'a JSON file'})."""
from __future__ import annotations

import json
import os
import sys
from typing import List, Optional

from .store import ${E}, ${E}Store, parse_${spec.entity.snake}_input

USAGE = """usage: python3 -m ${pkg} <command>
  add <${f}...>           add ${one}
  list [--json]          list every ${spec.entity.words}
  show <id>              show one ${spec.entity.words}
  rename <id> <${f}...>  change the ${f} of ${one}
  remove <id>            remove ${one}"""


class UsageError(Exception):
    """Misuse of the command line: main() prints it and exits with status 2."""


def _format(item: ${E}) -> str:
    return f"{item.id}\\t{item.${f}}"


def _id(rest: List[str]) -> int:
    if not rest or not rest[0].isdigit() or int(rest[0]) < 1:
        raise UsageError(f"not an id: {rest[0] if rest else '(missing)'}")
    return int(rest[0])


def _input(words: List[str]) -> str:
    parsed = parse_${spec.entity.snake}_input({"${f}": " ".join(words)})
    if isinstance(parsed, str):
        raise UsageError(parsed)
    return parsed["${f}"]


def run(argv: List[str], store: ${E}Store) -> str:
    """Runs one command and returns what to print; pure apart from the store, so tests need no files."""
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "add":
        return _format(store.create(_input(rest)))
    if command == "list":
        items = store.list()
        if "--json" in rest:
            return json.dumps([item.to_dict() for item in items], indent=2)
        return "\\n".join(_format(item) for item in items)
    if command in ("show", "rename", "remove"):
        item_id = _id(rest)
        if command == "remove":
            if not store.remove(item_id):
                raise UsageError(f"no ${spec.entity.words} {item_id}")
            return f"removed {item_id}"
        found = store.get(item_id) if command == "show" else store.update(item_id, _input(rest[1:]))
        if found is None:
            raise UsageError(f"no ${spec.entity.words} {item_id}")
        return _format(found)
    raise UsageError(USAGE)


def print_result(output: str) -> None:
    if output:
        print(output)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
${load}


if __name__ == "__main__":
    raise SystemExit(main())
`,
  };
}

export function cliTest(spec: GenerationSpec): SandboxFile {
  const E = spec.entity.pascal;
  const pkg = spec.resource.snake;
  return {
    path: `tests/test_${pkg}_cli.py`, lang: 'python',
    content: `import json
import unittest

from ${pkg} import ${E}Store
from ${pkg}.cli import UsageError, run


class CliTest(unittest.TestCase):
    def test_commands(self) -> None:
        store = ${E}Store()
        self.assertEqual(run(["add", "buy", "milk"], store), "1\\tbuy milk")
        self.assertEqual(run(["add", "walk"], store), "2\\twalk")
        self.assertEqual(run(["list"], store), "1\\tbuy milk\\n2\\twalk")
        self.assertEqual(run(["rename", "1", "buy", "bread"], store), "1\\tbuy bread")
        self.assertEqual(run(["show", "1"], store), "1\\tbuy bread")
        self.assertEqual(len(json.loads(run(["list", "--json"], store))), 2)
        self.assertEqual(run(["remove", "2"], store), "removed 2")

    def test_misuse(self) -> None:
        store = ${E}Store()
        for argv in ([], ["bogus"], ["add"], ["show", "x"], ["remove", "9"]):
            with self.assertRaises(UsageError):
                run(argv, store)


if __name__ == "__main__":
    unittest.main()
`,
  };
}
