import { capitalize } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';

/** Python with the standard library only, so it runs with nothing but python3. */
export function generatePython(spec: GenerationSpec): SandboxFile[] {
  const { resource, entity, title, kind } = spec.analysis;
  const E = capitalize(entity);
  const files: SandboxFile[] = [{
    path: `${resource}/store.py`, lang: 'python',
    content: `"""In-memory ${resource} store${spec.database ? ` (swap for ${spec.database} in production)` : ''}."""
from dataclasses import dataclass, asdict, field
from datetime import datetime, timezone
from typing import Dict, List, Optional


@dataclass
class ${E}:
    id: int
    title: str
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())

    def to_dict(self) -> dict:
        return asdict(self)


class ${E}Store:
    def __init__(self) -> None:
        self._items: Dict[int, ${E}] = {}
        self._next_id = 1

    def list(self) -> List[${E}]:
        return list(self._items.values())

    def get(self, item_id: int) -> Optional[${E}]:
        return self._items.get(item_id)

    def create(self, title: str) -> ${E}:
        item = ${E}(id=self._next_id, title=title)
        self._items[item.id] = item
        self._next_id += 1
        return item

    def update(self, item_id: int, title: str) -> Optional[${E}]:
        item = self._items.get(item_id)
        if item is not None:
            item.title = title
        return item

    def remove(self, item_id: int) -> bool:
        return self._items.pop(item_id, None) is not None
`,
  }, { path: `${resource}/__init__.py`, lang: 'python', content: `from .store import ${E}, ${E}Store\n\n__all__ = ["${E}", "${E}Store"]\n` }];
  if (kind === 'api') {
    files.push({
      path: `${resource}/server.py`, lang: 'python',
      content: `"""A JSON API for ${resource} on the standard library's http.server."""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .store import ${E}Store

STORE = ${E}Store()


class Handler(BaseHTTPRequestHandler):
    def _send(self, status: int, body=None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _parts(self):
        return [p for p in self.path.split("?")[0].split("/") if p]

    def do_GET(self) -> None:
        parts = self._parts()
        if parts == ["${resource}"]:
            return self._send(200, [i.to_dict() for i in STORE.list()])
        if len(parts) == 2 and parts[0] == "${resource}" and parts[1].isdigit():
            item = STORE.get(int(parts[1]))
            return self._send(200, item.to_dict()) if item else self._send(404, {"error": "${entity} not found"})
        self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        if self._parts() != ["${resource}"]:
            return self._send(404, {"error": "not found"})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except json.JSONDecodeError:
            return self._send(400, {"error": "invalid JSON"})
        title = body.get("title")
        if not isinstance(title, str) or not title:
            return self._send(400, {"error": "title is required"})
        self._send(201, STORE.create(title).to_dict())

    def do_DELETE(self) -> None:
        parts = self._parts()
        if len(parts) == 2 and parts[0] == "${resource}" and parts[1].isdigit() and STORE.remove(int(parts[1])):
            return self._send(204)
        self._send(404, {"error": "${entity} not found"})


def main(port: int = 8000) -> None:
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
`,
    });
  } else if (kind === 'cli') {
    files.push({
      path: `${resource}/cli.py`, lang: 'python',
      content: `"""Command line for ${resource}: add and list."""
import argparse
import json
from typing import List, Optional

from .store import ${E}Store


def run(argv: Optional[List[str]] = None, store: Optional[${E}Store] = None) -> str:
    store = store or ${E}Store()
    parser = argparse.ArgumentParser(prog="${resource}")
    parser.add_argument("command", choices=["add", "list"])
    parser.add_argument("title", nargs="*")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "add":
        store.create(" ".join(args.title) or "untitled")
    items = store.list()
    if args.json:
        return json.dumps([i.to_dict() for i in items])
    return "\\n".join(f"{i.id}\\t{i.title}" for i in items)


if __name__ == "__main__":
    print(run())
`,
    });
  }
  if (spec.includeTests) {
    files.push({
      path: `tests/test_${resource}.py`, lang: 'python',
      content: `import unittest

from ${resource}.store import ${E}Store


class ${E}StoreTest(unittest.TestCase):
    def test_create_read_update_remove(self):
        store = ${E}Store()
        item = store.create("first")
        self.assertEqual(store.get(item.id).title, "first")
        self.assertEqual(store.update(item.id, "renamed").title, "renamed")
        self.assertEqual(len(store.list()), 1)
        self.assertTrue(store.remove(item.id))
        self.assertIsNone(store.get(item.id))

    def test_unknown_ids(self):
        store = ${E}Store()
        self.assertIsNone(store.get(42))
        self.assertFalse(store.remove(42))


if __name__ == "__main__":
    unittest.main()
`,
    }, { path: 'tests/__init__.py', lang: 'python', content: '' });
  }
  files.push({ path: 'README.md', lang: 'markdown', content: `# ${title}\n\nGenerated by the Codeloom sandbox model (a deterministic template model).\n\n\`\`\`sh\npython3 -m unittest discover -s tests -t .\n\`\`\`\n` });
  return files;
}
