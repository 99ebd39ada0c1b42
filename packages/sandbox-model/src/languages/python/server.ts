import type { GenerationSpec } from '../../project-files.js';
import { imports, type PythonWeb } from './names.js';
import { webTestBody } from './web-test.js';

/**
 * The HTTP layer of the sandbox model's (deterministic, not AI) Python
 * projects when the context names no framework: the standard library's
 * http.server, so it runs with python3 alone (Flask and FastAPI: frameworks.ts).
 */
export function stdlibWebFiles(spec: GenerationSpec): PythonWeb {
  const E = spec.entity.pascal;
  const pkg = spec.resource.snake;
  const parse = `parse_${spec.entity.snake}_input`;
  const missing = `{"error": "${spec.entity.words} not found"}`;
  return {
    run: `python3 -m ${pkg}.server`,
    files: [{
      path: `${pkg}/server.py`, lang: 'python',
      content: `"""A JSON API for ${spec.resource.words} on the standard library's http.server: runs with python3 alone."""
from __future__ import annotations

import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

${imports(spec)}

ROUTE = re.compile(r"^/${spec.resource.kebab}(?:/(\\d+))?/?$")


def make_server(store: Optional[${E}Store] = None, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """Builds the server without starting it; port 0 picks a free port (handy in tests)."""
    items = store if store is not None else ${E}Store()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass  # one line per request on stderr drowns test output; put real logging here

        def _send(self, status: int, body: Any = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _match(self) -> Optional[re.Match[str]]:
            return ROUTE.match(self.path.split("?", 1)[0])

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                return json.loads(self.rfile.read(length) or b"null")
            except ValueError:
                return None

        def do_GET(self) -> None:
            match = self._match()
            if match is None:
                return self._send(404, {"error": "not found"})
            if match.group(1) is None:
                return self._send(200, [item.to_dict() for item in items.list()])
            item = items.get(int(match.group(1)))
            self._send(200, item.to_dict()) if item else self._send(404, ${missing})

        def do_POST(self) -> None:
            match = self._match()
            if match is None or match.group(1) is not None:
                return self._send(404, {"error": "not found"})
            data = ${parse}(self._body())
            if isinstance(data, str):
                return self._send(400, {"error": data})
            self._send(201, items.create(**data).to_dict())

        def do_PUT(self) -> None:
            match = self._match()
            if match is None or match.group(1) is None:
                return self._send(404, {"error": "not found"})
            data = ${parse}(self._body())
            if isinstance(data, str):
                return self._send(400, {"error": data})
            item = items.update(int(match.group(1)), **data)
            self._send(200, item.to_dict()) if item else self._send(404, ${missing})

        def do_DELETE(self) -> None:
            match = self._match()
            if match is None or match.group(1) is None:
                return self._send(404, {"error": "not found"})
            self._send(204) if items.remove(int(match.group(1))) else self._send(404, ${missing})

    return ThreadingHTTPServer((host, port), Handler)


def main() -> None:
    server = make_server(port=int(os.environ.get("PORT", "8000")))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/${spec.resource.kebab}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
`,
    }],
    test: {
      path: `tests/test_${pkg}_server.py`, lang: 'python',
      content: `import json
import threading
import unittest
from typing import Any, Tuple
from urllib.error import HTTPError
from urllib.request import Request, urlopen

from ${pkg}.server import make_server


class ServerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = make_server(port=0)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/${spec.resource.kebab}"

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def call(self, method: str, url: str, body: Any = None) -> Tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urlopen(request, timeout=5) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except HTTPError as error:
            raw = error.read()
            return error.code, json.loads(raw) if raw else None

${webTestBody(spec, 'self.call(', 'self.base')}`,
    },
  };
}
