import { withArticle } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';
import { readme, schemaFile } from './sandbox-files.js';

/**
 * Go templates of the sandbox model (a deterministic template model, not
 * AI): the standard library only (Go 1.22 method-and-path routing for
 * APIs), table-free `go test` tests with net/http/httptest. String.raw keeps
 * Go's escapes readable; BT stands for the backtick Go struct tags need.
 */
const BT = '`';

export function generateGo(spec: GenerationSpec): SandboxFile[] {
  const pkg = spec.kind === 'library' ? spec.resource.flat : 'main';
  const files: SandboxFile[] = [
    { path: 'go.mod', lang: 'go', content: `module example.com/${spec.resource.flat}\n\ngo 1.22\n` },
    storeFile(spec, pkg),
  ];
  if (spec.kind === 'api') files.push(serverFile(spec), apiMain(spec));
  if (spec.kind === 'cli') files.push(cliMain(spec));
  if (spec.includeTests) files.push(storeTest(spec, pkg), ...(spec.kind === 'api' ? [serverTest(spec)] : spec.kind === 'cli' ? [cliTest(spec)] : []));
  const schema = schemaFile(spec);
  if (schema) files.push(schema);
  const run = spec.kind === 'api' ? 'go run .' : spec.kind === 'cli' ? `go run . add "first ${spec.entity.words}"` : 'go build ./...';
  files.push(readme(spec, { run, test: 'go test ./...' }, files));
  return files;
}

const fieldName = (spec: GenerationSpec) => (spec.field === 'title' ? 'Title' : 'Name');

function storeFile(spec: GenerationSpec, pkg: string): SandboxFile {
  const E = spec.entity.pascal;
  const F = fieldName(spec);
  const f = spec.field;
  return {
    path: 'store.go', lang: 'go',
    content: String.raw`package ${pkg}

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ${E} is one ${spec.entity.words}.
type ${E} struct {
	ID        int64  ${BT}json:"id"${BT}
	${F.padEnd(9)} string ${BT}json:"${f}"${BT}
	CreatedAt string ${BT}json:"createdAt"${BT}
}

// MaxLength bounds the ${f} of ${withArticle(spec.entity.words)}.
const MaxLength = 200

// Parse${F} checks a ${f} and returns it trimmed, or an error saying what is wrong.
func Parse${F}(value string) (string, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return "", errors.New("${f} must be a non-empty string")
	}
	if utf8.RuneCountInString(value) > MaxLength {
		return "", fmt.Errorf("${f} must be at most %d characters", MaxLength)
	}
	return value, nil
}

// Store keeps ${spec.resource.words} in memory; safe for concurrent use by HTTP handlers.${spec.database ? `\n// Swap it for a ${spec.database} repository (see db/schema.sql) behind the same methods.` : ''}
type Store struct {
	mu     sync.Mutex
	items  map[int64]${E}
	nextID int64
}

// NewStore returns a store holding the given ${spec.resource.words}, if any.
func NewStore(initial ...${E}) *Store {
	s := &Store{items: make(map[int64]${E}), nextID: 1}
	for _, item := range initial {
		s.items[item.ID] = item
		if item.ID >= s.nextID {
			s.nextID = item.ID + 1
		}
	}
	return s
}

// List returns every ${spec.entity.words}, oldest first.
func (s *Store) List() []${E} {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]${E}, 0, len(s.items))
	for _, item := range s.items {
		out = append(out, item)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Get returns the ${spec.entity.words} with this id, if there is one.
func (s *Store) Get(id int64) (${E}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[id]
	return item, ok
}

// Create adds ${withArticle(spec.entity.words)}; the ${f} must have passed Parse${F}.
func (s *Store) Create(${f} string) ${E} {
	s.mu.Lock()
	defer s.mu.Unlock()
	item := ${E}{ID: s.nextID, ${F}: ${f}, CreatedAt: time.Now().UTC().Format(time.RFC3339)}
	s.items[item.ID] = item
	s.nextID++
	return item
}

// Update changes the ${f} of ${withArticle(spec.entity.words)}; false when there is none with this id.
func (s *Store) Update(id int64, ${f} string) (${E}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[id]
	if !ok {
		return ${E}{}, false
	}
	item.${F} = ${f}
	s.items[id] = item
	return item, true
}

// Remove deletes the ${spec.entity.words} with this id; false when there was none.
func (s *Store) Remove(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.items[id]
	delete(s.items, id)
	return ok
}
`,
  };
}

function serverFile(spec: GenerationSpec): SandboxFile {
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

function apiMain(spec: GenerationSpec): SandboxFile {
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

function cliMain(spec: GenerationSpec): SandboxFile {
  const E = spec.entity.pascal;
  const F = fieldName(spec);
  const f = spec.field;
  const cmd = spec.resource.kebab;
  const one = withArticle(spec.entity.words);
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  const none = `fmt.Errorf("no ${spec.entity.words} %d", id)`;
  return {
    path: 'main.go', lang: 'go',
    content: String.raw`package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

const usage = ${BT}usage: ${cmd} <command>
  add <${f}...>            add ${one}
  list [--json]           list every ${spec.entity.words}
  show <id>               show one ${spec.entity.words}
  rename <id> <${f}...>   change the ${f} of ${one}
  remove <id>             remove ${one}${BT}

func format(item ${E}) string {
	return fmt.Sprintf("%d\t%s", item.ID, item.${F})
}

func parseID(rest []string) (int64, error) {
	if len(rest) == 0 {
		return 0, errors.New("not an id: (missing)")
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("not an id: %s", rest[0])
	}
	return id, nil
}

// run executes one command and returns what to print; pure apart from the store, so tests need no files.
func run(args []string, store *Store) (string, error) {
	if len(args) == 0 {
		return "", errors.New(usage)
	}
	command, rest := args[0], args[1:]
	switch command {
	case "add":
		${f}, err := Parse${F}(strings.Join(rest, " "))
		if err != nil {
			return "", err
		}
		return format(store.Create(${f})), nil
	case "list":
		items := store.List()
		if len(rest) > 0 && rest[0] == "--json" {
			data, err := json.MarshalIndent(items, "", "  ")
			return string(data), err
		}
		lines := make([]string, 0, len(items))
		for _, item := range items {
			lines = append(lines, format(item))
		}
		return strings.Join(lines, "\n"), nil
	case "show", "rename", "remove":
		id, err := parseID(rest)
		if err != nil {
			return "", err
		}
		switch command {
		case "show":
			if item, ok := store.Get(id); ok {
				return format(item), nil
			}
		case "rename":
			${f}, err := Parse${F}(strings.Join(rest[1:], " "))
			if err != nil {
				return "", err
			}
			if item, ok := store.Update(id, ${f}); ok {
				return format(item), nil
			}
		default:
			if store.Remove(id) {
				return fmt.Sprintf("removed %d", id), nil
			}
		}
		return "", ${none}
	}
	return "", errors.New(usage)
}

func main() {
	path := os.Getenv("${env}")
	if path == "" {
		path = "${cmd}.json"
	}
	var initial []${E}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &initial); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
	}
	store := NewStore(initial...)
	output, err := run(os.Args[1:], store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if output != "" {
		fmt.Println(output)
	}
	data, err := json.MarshalIndent(store.List(), "", "  ")
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`,
  };
}

function storeTest(spec: GenerationSpec, pkg: string): SandboxFile {
  const F = fieldName(spec);
  return {
    path: 'store_test.go', lang: 'go',
    content: String.raw`package ${pkg}

import (
	"strings"
	"testing"
)

func TestStoreCRUD(t *testing.T) {
	s := NewStore()
	item := s.Create("first")
	if got, ok := s.Get(item.ID); !ok || got.${F} != "first" {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	if got, ok := s.Update(item.ID, "renamed"); !ok || got.${F} != "renamed" {
		t.Fatalf("Update = %+v, %v", got, ok)
	}
	if other := s.Create("second"); other.ID == item.ID {
		t.Fatal("ids must be unique")
	}
	if n := len(s.List()); n != 2 {
		t.Fatalf("List has %d items, want 2", n)
	}
	if !s.Remove(item.ID) || s.Remove(item.ID) {
		t.Fatal("Remove should succeed exactly once")
	}
	if _, ok := s.Get(item.ID); ok {
		t.Fatal("a removed item is still there")
	}
}

func TestParse${F}(t *testing.T) {
	if got, err := Parse${F}("  spaced  "); err != nil || got != "spaced" {
		t.Fatalf("Parse${F} = %q, %v", got, err)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("x", MaxLength+1)} {
		if _, err := Parse${F}(bad); err == nil {
			t.Errorf("Parse${F}(%q) should fail", bad)
		}
	}
}
`,
  };
}

function serverTest(spec: GenerationSpec): SandboxFile {
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

function cliTest(spec: GenerationSpec): SandboxFile {
  return {
    path: 'main_test.go', lang: 'go',
    content: String.raw`package main

import "testing"

func TestRun(t *testing.T) {
	s := NewStore()
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"add", "buy", "milk"}, "1\tbuy milk"},
		{[]string{"add", "walk"}, "2\twalk"},
		{[]string{"list"}, "1\tbuy milk\n2\twalk"},
		{[]string{"rename", "1", "buy", "bread"}, "1\tbuy bread"},
		{[]string{"show", "1"}, "1\tbuy bread"},
		{[]string{"remove", "2"}, "removed 2"},
	}
	for _, step := range steps {
		if got, err := run(step.args, s); err != nil || got != step.want {
			t.Fatalf("run(%q) = %q, %v; want %q", step.args, got, err, step.want)
		}
	}
	for _, bad := range [][]string{{}, {"bogus"}, {"add"}, {"show", "x"}, {"remove", "9"}} {
		if _, err := run(bad, s); err == nil {
			t.Errorf("run(%q) should fail", bad)
		}
	}
}
`,
  };
}
