import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { commentText } from '../../request-text.js';
import { cliMain, cliTest } from './cli.js';
import { BT, fieldName } from './names.js';
import { apiMain, serverFile, serverTest } from './server.js';

/**
 * Go templates of the sandbox model (a deterministic template model, not
 * AI): the standard library only (Go 1.22 method-and-path routing for
 * APIs), table-free `go test` tests with net/http/httptest. String.raw keeps
 * Go's escapes readable; BT stands for the backtick Go struct tags need.
 */
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

// Store keeps ${spec.resource.words} in memory; safe for concurrent use by HTTP handlers.${spec.database ? `\n// Swap it for a ${commentText(spec.database)} repository (see db/schema.sql) behind the same methods.` : ''}
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
