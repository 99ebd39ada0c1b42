import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { commentText, literal } from '../../request-text.js';
import { cliFile, cliTest } from './cli.js';
import { fastapi, flask } from './frameworks.js';
import type { PythonWeb } from './names.js';
import { stdlibWebFiles } from './server.js';

/**
 * Python templates of the sandbox model (a deterministic template model, not
 * AI). The standard library only, unless the context names Flask or
 * FastAPI, so the result runs with nothing but python3; tests use unittest,
 * which pytest also runs. With database=sqlite the store really is SQLite
 * (sqlite3 ships with Python); other databases get a schema to start from.
 */
export function generatePython(spec: GenerationSpec): SandboxFile[] {
  const pkg = spec.resource.snake;
  const sqlite = spec.database.includes('sqlite');
  const files: SandboxFile[] = [
    { path: `${pkg}/store.py`, lang: 'python', content: sqlite ? sqliteStore(spec) : memoryStore(spec) },
    { path: `${pkg}/__init__.py`, lang: 'python', content: `"""${commentText(spec.title)}"""\nfrom .store import ${spec.entity.pascal}, ${spec.entity.pascal}Store, parse_${spec.entity.snake}_input\n\n__all__ = ["${spec.entity.pascal}", "${spec.entity.pascal}Store", "parse_${spec.entity.snake}_input"]\n` },
  ];
  const web = spec.kind === 'api' ? pythonWebFiles(spec) : undefined;
  if (web) files.push(...web.files);
  if (spec.kind === 'cli') files.push(cliFile(spec, sqlite), { path: `${pkg}/__main__.py`, lang: 'python', content: `from .cli import main\n\nif __name__ == "__main__":\n    raise SystemExit(main())\n` });
  if (spec.includeTests) {
    files.push({ path: 'tests/__init__.py', lang: 'python', content: '' }, storeTest(spec));
    if (web) files.push(web.test);
    if (spec.kind === 'cli') files.push(cliTest(spec));
  }
  const schema = sqlite ? undefined : schemaFile(spec);
  if (schema) files.push(schema);
  const deps = web?.dependency ? [web.dependency] : [];
  if (deps.length) files.push({ path: 'requirements.txt', lang: 'text', content: `${deps.join('\n')}\n` });
  files.push({
    path: 'pyproject.toml', lang: 'toml',
    content: `[project]\nname = "${spec.resource.kebab}"\nversion = "0.1.0"\ndescription = ${literal.toml(spec.title)}\nrequires-python = ">=3.9"\ndependencies = [${deps.map((d) => `"${d}"`).join(', ')}]\n`,
  });
  const run = web ? web.run : spec.kind === 'cli' ? `python3 -m ${pkg} add "first ${spec.entity.words}"\npython3 -m ${pkg} list` : `python3 -c "import ${pkg}; print(${pkg}.${spec.entity.pascal}Store().list())"`;
  files.push(readme(spec, {
    ...(deps.length ? { setup: 'python3 -m pip install -r requirements.txt' } : {}),
    run, test: 'python3 -m unittest',
    ...(sqlite ? { storage: 'Data lives in SQLite through the standard library\'s sqlite3 (in memory unless given a file path).' } : {}),
  }, files));
  return files;
}

function header(spec: GenerationSpec, what: string): string {
  const E = spec.entity.pascal;
  const f = spec.field;
  return `"""${spec.resource.words[0]!.toUpperCase()}${spec.resource.words.slice(1)}: the record, input checking and ${what}."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Union

MAX_LENGTH = 200


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass
class ${E}:
    id: int
    ${f}: str
    created_at: str = field(default_factory=_now)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def parse_${spec.entity.snake}_input(body: Any) -> Union[str, Dict[str, str]]:
    """Checks an untrusted body; returns the clean input, or a message saying what is wrong."""
    if not isinstance(body, dict):
        return "expected a JSON object"
    value = body.get("${f}")
    if not isinstance(value, str) or not value.strip():
        return "${f} must be a non-empty string"
    if len(value) > MAX_LENGTH:
        return f"${f} must be at most {MAX_LENGTH} characters"
    return {"${f}": value.strip()}
`;
}

function memoryStore(spec: GenerationSpec): string {
  const E = spec.entity.pascal;
  const f = spec.field;
  const where = spec.database ? `\n\n    Swap it for a ${commentText(spec.database)} repository (see db/schema.sql) without changing its callers.` : '';
  return `${header(spec, 'an in-memory store')}

class ${E}Store:
    """${spec.resource.words} in memory, in insertion order. Callers get copies, so nothing
    outside can change a stored ${spec.entity.words} behind the store's back.${where}
    """

    def __init__(self, initial: Iterable[${E}] = ()) -> None:
        self._items: Dict[int, ${E}] = {}
        self._next_id = 1
        for item in initial:
            self._items[item.id] = replace(item)
            self._next_id = max(self._next_id, item.id + 1)

    def list(self) -> List[${E}]:
        return [replace(item) for item in self._items.values()]

    def get(self, item_id: int) -> Optional[${E}]:
        item = self._items.get(item_id)
        return replace(item) if item else None

    def create(self, ${f}: str) -> ${E}:
        item = ${E}(id=self._next_id, ${f}=${f})
        self._items[item.id] = item
        self._next_id += 1
        return replace(item)

    def update(self, item_id: int, ${f}: str) -> Optional[${E}]:
        item = self._items.get(item_id)
        if item is None:
            return None
        item.${f} = ${f}
        return replace(item)

    def remove(self, item_id: int) -> bool:
        return self._items.pop(item_id, None) is not None
`;
}

function sqliteStore(spec: GenerationSpec): string {
  const E = spec.entity.pascal;
  const f = spec.field;
  const table = spec.resource.snake;
  const cols = `id, ${f}, created_at`;
  return `${header(spec, 'a SQLite store').replace('from typing import', 'import sqlite3\nimport threading\nfrom typing import')}
SCHEMA = """
CREATE TABLE IF NOT EXISTS ${table} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ${f} TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


class ${E}Store:
    """${spec.resource.words} in SQLite; ":memory:" by default, a file path to keep them.

    One connection shared by the threads of a threaded server, so a lock
    serialises access to it.
    """

    def __init__(self, path: str = ":memory:") -> None:
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock, self._db:
            self._db.execute(SCHEMA)

    def list(self) -> List[${E}]:
        with self._lock:
            rows = self._db.execute("SELECT ${cols} FROM ${table} ORDER BY id").fetchall()
        return [${E}(*row) for row in rows]

    def get(self, item_id: int) -> Optional[${E}]:
        with self._lock:
            row = self._db.execute("SELECT ${cols} FROM ${table} WHERE id = ?", (item_id,)).fetchone()
        return ${E}(*row) if row else None

    def create(self, ${f}: str) -> ${E}:
        created_at = _now()
        with self._lock, self._db:
            cursor = self._db.execute("INSERT INTO ${table} (${f}, created_at) VALUES (?, ?)", (${f}, created_at))
        return ${E}(id=int(cursor.lastrowid or 0), ${f}=${f}, created_at=created_at)

    def update(self, item_id: int, ${f}: str) -> Optional[${E}]:
        with self._lock, self._db:
            changed = self._db.execute("UPDATE ${table} SET ${f} = ? WHERE id = ?", (${f}, item_id)).rowcount
        return self.get(item_id) if changed else None

    def remove(self, item_id: int) -> bool:
        with self._lock, self._db:
            return self._db.execute("DELETE FROM ${table} WHERE id = ?", (item_id,)).rowcount > 0

    def close(self) -> None:
        self._db.close()
`;
}

function storeTest(spec: GenerationSpec): SandboxFile {
  const E = spec.entity.pascal;
  const f = spec.field;
  const parse = `parse_${spec.entity.snake}_input`;
  return {
    path: `tests/test_${spec.resource.snake}_store.py`, lang: 'python',
    content: `import unittest

from ${spec.resource.snake} import ${E}Store, ${parse}


class ${E}StoreTest(unittest.TestCase):
    def test_create_read_update_remove(self) -> None:
        store = ${E}Store()
        item = store.create("first")
        self.assertEqual(store.get(item.id).${f}, "first")
        self.assertEqual(store.update(item.id, "renamed").${f}, "renamed")
        self.assertEqual([i.${f} for i in store.list()], ["renamed"])
        self.assertTrue(store.remove(item.id))
        self.assertIsNone(store.get(item.id))
        self.assertFalse(store.remove(item.id))

    def test_ids_are_unique_and_results_are_copies(self) -> None:
        store = ${E}Store()
        a, b = store.create("a"), store.create("b")
        self.assertNotEqual(a.id, b.id)
        a.${f} = "changed outside"
        self.assertEqual(store.get(a.id).${f}, "a")

    def test_unknown_ids(self) -> None:
        store = ${E}Store()
        self.assertIsNone(store.get(42))
        self.assertIsNone(store.update(42, "x"))


class Parse${E}InputTest(unittest.TestCase):
    def test_accepts_a_${f}(self) -> None:
        self.assertEqual(${parse}({"${f}": "  spaced  "}), {"${f}": "spaced"})

    def test_refuses_anything_else(self) -> None:
        for bad in (None, "text", [], {}, {"${f}": ""}, {"${f}": 42}, {"${f}": "x" * 201}):
            self.assertIsInstance(${parse}(bad), str, bad)


if __name__ == "__main__":
    unittest.main()
`,
  };
}

/** The HTTP layer: Flask or FastAPI when the context asks for them, otherwise the standard library. */
function pythonWebFiles(spec: GenerationSpec): PythonWeb {
  if (spec.framework.includes('flask')) return flask(spec);
  if (spec.framework.includes('fastapi')) return fastapi(spec);
  return stdlibWebFiles(spec);
}
