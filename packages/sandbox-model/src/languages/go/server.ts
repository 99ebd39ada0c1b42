import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { BT, fieldName } from './names.js';

/**
 * The HTTP API of the sandbox model's (deterministic, not AI) Go projects:
 * net/http with Go 1.22 method-and-path patterns, tested through
 * net/http/httptest without opening a port.
 */

export function serverFile(spec: GenerationSpec): SandboxFile {
  const F = fieldName(spec);
  const f = spec.field;
  const base = `/${spec.resource.kebab}`;
  const missing = `"${spec.entity.words} not found"`;
  return {
    path: 'server.go', lang: 'go',
    content: String.raw`package main

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// NewHandler serves the ${spec.resource.words} JSON API.
func NewHandler(store *Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET ${base}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, store.List())
	})
	mux.HandleFunc("POST ${base}", func(w http.ResponseWriter, r *http.Request) {
		if ${f}, ok := read${F}(w, r); ok {
			writeJSON(w, http.StatusCreated, store.Create(${f}))
		}
	})
	mux.HandleFunc("GET ${base}/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		if item, found := store.Get(id); found {
			writeJSON(w, http.StatusOK, item)
		} else {
			writeError(w, http.StatusNotFound, ${missing})
		}
	})
	mux.HandleFunc("PUT ${base}/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		${f}, ok := read${F}(w, r)
		if !ok {
			return
		}
		if item, found := store.Update(id, ${f}); found {
			writeJSON(w, http.StatusOK, item)
		} else {
			writeError(w, http.StatusNotFound, ${missing})
		}
	})
	mux.HandleFunc("DELETE ${base}/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r)
		if !ok {
			return
		}
		if store.Remove(id) {
			w.WriteHeader(http.StatusNoContent)
		} else {
			writeError(w, http.StatusNotFound, ${missing})
		}
	})
	return mux
}

func pathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, "id must be a positive integer")
		return 0, false
	}
	return id, true
}

// read${F} decodes {"${f}": "..."} from a body of at most 1 MB, answering 400 itself when it cannot.
func read${F}(w http.ResponseWriter, r *http.Request) (string, bool) {
	var body struct {
		${F} *string ${BT}json:"${f}"${BT}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.${F} == nil {
		writeError(w, http.StatusBadRequest, "expected a JSON object with a ${f}")
		return "", false
	}
	${f}, err := Parse${F}(*body.${F})
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return "", false
	}
	return ${f}, true
}

func writeJSON(w http.ResponseWriter, status int, value any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(value)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"error": message})
}
`,
  };
}

export function apiMain(spec: GenerationSpec): SandboxFile {
  return {
    path: 'main.go', lang: 'go',
    content: String.raw`package main

import (
	"log"
	"net/http"
	"os"
)

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	log.Printf("listening on http://localhost:%s/${spec.resource.kebab}", port)
	log.Fatal(http.ListenAndServe(":"+port, NewHandler(NewStore())))
}
`,
  };
}

export function serverTest(spec: GenerationSpec): SandboxFile {
  const f = spec.field;
  const base = `/${spec.resource.kebab}`;
  return {
    path: 'server_test.go', lang: 'go',
    content: String.raw`package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func call(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func TestAPI(t *testing.T) {
	h := NewHandler(NewStore())
	code, item := call(t, h, "POST", "${base}", ${BT}{"${f}": "first"}${BT})
	if code != http.StatusCreated || item["${f}"] != "first" {
		t.Fatalf("POST = %d %v", code, item)
	}
	path := fmt.Sprintf("${base}/%v", item["id"])
	if code, _ := call(t, h, "GET", path, ""); code != http.StatusOK {
		t.Fatalf("GET = %d", code)
	}
	if code, got := call(t, h, "PUT", path, ${BT}{"${f}": "renamed"}${BT}); code != http.StatusOK || got["${f}"] != "renamed" {
		t.Fatalf("PUT = %d %v", code, got)
	}
	if code, _ := call(t, h, "DELETE", path, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE = %d", code)
	}
	if code, _ := call(t, h, "GET", path, ""); code != http.StatusNotFound {
		t.Fatalf("GET after DELETE = %d", code)
	}
}

func TestAPIRejectsBadInput(t *testing.T) {
	h := NewHandler(NewStore())
	for _, body := range []string{${BT}{"${f}": ""}${BT}, ${BT}{}${BT}, "not json"} {
		if code, _ := call(t, h, "POST", "${base}", body); code != http.StatusBadRequest {
			t.Errorf("POST %s = %d, want 400", body, code)
		}
	}
	if code, _ := call(t, h, "GET", "${base}/abc", ""); code != http.StatusBadRequest {
		t.Errorf("GET bad id = %d, want 400", code)
	}
}
`,
  };
}
