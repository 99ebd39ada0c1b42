import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { literal } from '../../request-text.js';
import { imports, type PythonWeb } from './names.js';
import { webTestBody } from './web-test.js';

/** Flask and FastAPI variants of the sandbox model's (deterministic, not AI) Python APIs, for when the context names them. */

export function frameworkTest(spec: GenerationSpec, clientImport: string, client: string, send: string): SandboxFile {
  const pkg = spec.resource.snake;
  return {
    path: `tests/test_${pkg}_app.py`, lang: 'python',
    content: `import unittest
from typing import Any, Tuple

${clientImport}from ${pkg}.app import create_app


class AppTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = ${client}
        self.base = "/${spec.resource.kebab}"

    def call(self, method: str, url: str, body: Any = None) -> Tuple[int, Any]:
        ${send}

${webTestBody(spec, 'self.call(', 'self.base')}`,
  };
}

export function flask(spec: GenerationSpec): PythonWeb {
  const E = spec.entity.pascal;
  const R = spec.resource.snake;
  const e = spec.entity.snake;
  const url = `/${spec.resource.kebab}`;
  const parse = `parse_${e}_input`;
  const missing = `jsonify(error="${spec.entity.words} not found"), 404`;
  return {
    run: `python3 -m ${R}.app`, dependency: 'flask>=3.0',
    files: [{
      path: `${R}/app.py`, lang: 'python',
      content: `"""${spec.resource.words} API on Flask: an app factory, so tests get a fresh store each."""
from __future__ import annotations

import os
from typing import Any, Optional

from flask import Flask, jsonify, request

${imports(spec)}


def create_app(store: Optional[${E}Store] = None) -> Flask:
    app = Flask(__name__)
    items = store if store is not None else ${E}Store()

    @app.get("${url}")
    def list_${R}() -> Any:
        return jsonify([item.to_dict() for item in items.list()])

    @app.get("${url}/<int:item_id>")
    def get_${e}(item_id: int) -> Any:
        item = items.get(item_id)
        return jsonify(item.to_dict()) if item else (${missing})

    @app.post("${url}")
    def create_${e}() -> Any:
        data = ${parse}(request.get_json(silent=True))
        if isinstance(data, str):
            return jsonify(error=data), 400
        return jsonify(items.create(**data).to_dict()), 201

    @app.put("${url}/<int:item_id>")
    def update_${e}(item_id: int) -> Any:
        data = ${parse}(request.get_json(silent=True))
        if isinstance(data, str):
            return jsonify(error=data), 400
        item = items.update(item_id, **data)
        return jsonify(item.to_dict()) if item else (${missing})

    @app.delete("${url}/<int:item_id>")
    def delete_${e}(item_id: int) -> Any:
        return ("", 204) if items.remove(item_id) else (${missing})

    return app


if __name__ == "__main__":
    create_app().run(port=int(os.environ.get("PORT", "5000")))
`,
    }],
    test: frameworkTest(spec, '', 'create_app().test_client()',
      'response = self.client.open(url, method=method, json=body)\n        return response.status_code, response.get_json(silent=True)'),
  };
}

export function fastapi(spec: GenerationSpec): PythonWeb {
  const E = spec.entity.pascal;
  const R = spec.resource.snake;
  const e = spec.entity.snake;
  const f = spec.field;
  const url = `/${spec.resource.kebab}`;
  const missing = `HTTPException(status_code=404, detail="${spec.entity.words} not found")`;
  return {
    run: `python3 -m uvicorn ${R}.app:app --reload`, dependency: 'fastapi[standard]>=0.110',
    files: [{
      path: `${R}/app.py`, lang: 'python',
      content: `"""${spec.resource.words} API on FastAPI: pydantic checks the body, the store does the rest."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from fastapi import FastAPI, HTTPException, Response
from pydantic import BaseModel, Field

from .store import ${E}Store


class ${E}In(BaseModel):
    ${f}: str = Field(min_length=1, max_length=200)


def create_app(store: Optional[${E}Store] = None) -> FastAPI:
    app = FastAPI(title=${literal.python(spec.title)})
    items = store if store is not None else ${E}Store()

    @app.get("${url}")
    def list_${R}() -> List[Dict[str, Any]]:
        return [item.to_dict() for item in items.list()]

    @app.get("${url}/{item_id}")
    def get_${e}(item_id: int) -> Dict[str, Any]:
        item = items.get(item_id)
        if item is None:
            raise ${missing}
        return item.to_dict()

    @app.post("${url}", status_code=201)
    def create_${e}(body: ${E}In) -> Dict[str, Any]:
        return items.create(body.${f}.strip()).to_dict()

    @app.put("${url}/{item_id}")
    def update_${e}(item_id: int, body: ${E}In) -> Dict[str, Any]:
        item = items.update(item_id, body.${f}.strip())
        if item is None:
            raise ${missing}
        return item.to_dict()

    @app.delete("${url}/{item_id}", status_code=204)
    def delete_${e}(item_id: int) -> Response:
        if not items.remove(item_id):
            raise ${missing}
        return Response(status_code=204)

    return app


app = create_app()
`,
    }],
    test: frameworkTest(spec, 'from fastapi.testclient import TestClient\n', 'TestClient(create_app())',
      'response = self.client.request(method, url, json=body)\n        return response.status_code, (response.json() if response.content else None)'),
  };
}
