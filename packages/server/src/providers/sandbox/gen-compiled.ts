import { capitalize } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';

/** Go, Rust, Java, C and C++: a store with a small demo main, and tests in each language's own style. */
export function generateGo(spec: GenerationSpec): SandboxFile[] {
  const { resource, entity } = spec.analysis;
  const E = capitalize(entity);
  const files: SandboxFile[] = [
    { path: 'go.mod', lang: 'go', content: `module example.com/${resource}\n\ngo 1.21\n` },
    { path: 'store.go', lang: 'go', content: `package main\n\nimport "sync"\n\n// ${E} is one of the ${resource}.\ntype ${E} struct {\n\tID    int    \`json:"id"\`\n\tTitle string \`json:"title"\`\n}\n\n// Store keeps ${resource} in memory; safe for concurrent use.\ntype Store struct {\n\tmu     sync.Mutex\n\titems  map[int]${E}\n\tnextID int\n}\n\nfunc NewStore() *Store { return &Store{items: map[int]${E}{}, nextID: 1} }\n\nfunc (s *Store) Create(title string) ${E} {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\titem := ${E}{ID: s.nextID, Title: title}\n\ts.items[item.ID] = item\n\ts.nextID++\n\treturn item\n}\n\nfunc (s *Store) Get(id int) (${E}, bool) {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\titem, ok := s.items[id]\n\treturn item, ok\n}\n\nfunc (s *Store) Remove(id int) bool {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\t_, ok := s.items[id]\n\tdelete(s.items, id)\n\treturn ok\n}\n` },
    { path: 'main.go', lang: 'go', content: `package main\n\nimport (\n\t"encoding/json"\n\t"log"\n\t"net/http"\n)\n\nfunc main() {\n\tstore := NewStore()\n\thttp.HandleFunc("/${resource}", func(w http.ResponseWriter, r *http.Request) {\n\t\tif r.Method != http.MethodPost {\n\t\t\thttp.Error(w, "method not allowed", http.StatusMethodNotAllowed)\n\t\t\treturn\n\t\t}\n\t\tvar body struct{ Title string \`json:"title"\` }\n\t\tif err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Title == "" {\n\t\t\thttp.Error(w, "title is required", http.StatusBadRequest)\n\t\t\treturn\n\t\t}\n\t\tw.Header().Set("Content-Type", "application/json")\n\t\tw.WriteHeader(http.StatusCreated)\n\t\t_ = json.NewEncoder(w).Encode(store.Create(body.Title))\n\t})\n\tlog.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))\n}\n` },
  ];
  if (spec.includeTests) files.push({ path: 'store_test.go', lang: 'go', content: `package main\n\nimport "testing"\n\nfunc TestStore(t *testing.T) {\n\ts := NewStore()\n\titem := s.Create("first")\n\tif got, ok := s.Get(item.ID); !ok || got.Title != "first" {\n\t\tt.Fatalf("got %v %v", got, ok)\n\t}\n\tif !s.Remove(item.ID) || s.Remove(item.ID) {\n\t\tt.Fatal("remove should succeed once")\n\t}\n}\n` });
  return files;
}

export function generateRust(spec: GenerationSpec): SandboxFile[] {
  const { resource, entity } = spec.analysis;
  const E = capitalize(entity);
  const tests = spec.includeTests ? `\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn create_get_remove() {\n        let mut store = Store::default();\n        let id = store.create("first").id;\n        assert_eq!(store.get(id).map(|i| i.title.as_str()), Some("first"));\n        assert!(store.remove(id));\n        assert!(!store.remove(id));\n    }\n}\n` : '';
  return [
    { path: 'Cargo.toml', lang: 'toml', content: `[package]\nname = "${resource}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n` },
    { path: 'src/main.rs', lang: 'rust', content: `use std::collections::BTreeMap;\n\n/// One of the ${resource}.\n#[derive(Debug, Clone, PartialEq)]\npub struct ${E} {\n    pub id: u64,\n    pub title: String,\n}\n\n/// In-memory store of ${resource}.\n#[derive(Default)]\npub struct Store {\n    items: BTreeMap<u64, ${E}>,\n    next_id: u64,\n}\n\nimpl Store {\n    pub fn create(&mut self, title: &str) -> &${E} {\n        self.next_id += 1;\n        let id = self.next_id;\n        self.items.insert(id, ${E} { id, title: title.to_string() });\n        &self.items[&id]\n    }\n\n    pub fn get(&self, id: u64) -> Option<&${E}> {\n        self.items.get(&id)\n    }\n\n    pub fn remove(&mut self, id: u64) -> bool {\n        self.items.remove(&id).is_some()\n    }\n\n    pub fn list(&self) -> impl Iterator<Item = &${E}> {\n        self.items.values()\n    }\n}\n\nfn main() {\n    let mut store = Store::default();\n    for title in std::env::args().skip(1) {\n        store.create(&title);\n    }\n    for item in store.list() {\n        println!("{}\\t{}", item.id, item.title);\n    }\n}\n${tests}` },
  ];
}

export function generateJava(spec: GenerationSpec): SandboxFile[] {
  const { resource, entity } = spec.analysis;
  const E = capitalize(entity);
  const files: SandboxFile[] = [
    { path: `src/${E}Store.java`, lang: 'java', content: `import java.util.ArrayList;\nimport java.util.LinkedHashMap;\nimport java.util.List;\nimport java.util.Map;\nimport java.util.Optional;\n\n/** In-memory store of ${resource}. */\npublic class ${E}Store {\n    public record ${E}(int id, String title) {}\n\n    private final Map<Integer, ${E}> items = new LinkedHashMap<>();\n    private int nextId = 1;\n\n    public ${E} create(String title) {\n        ${E} item = new ${E}(nextId++, title);\n        items.put(item.id(), item);\n        return item;\n    }\n\n    public Optional<${E}> get(int id) {\n        return Optional.ofNullable(items.get(id));\n    }\n\n    public boolean remove(int id) {\n        return items.remove(id) != null;\n    }\n\n    public List<${E}> list() {\n        return new ArrayList<>(items.values());\n    }\n}\n` },
    { path: 'src/Main.java', lang: 'java', content: `public class Main {\n    public static void main(String[] args) {\n        ${E}Store store = new ${E}Store();\n        for (String title : args) store.create(title);\n        store.list().forEach(item -> System.out.println(item.id() + "\\t" + item.title()));\n    }\n}\n` },
  ];
  if (spec.includeTests) files.push({ path: `src/${E}StoreTest.java`, lang: 'java', content: `/** Plain assertions, runnable without a test framework: java ${E}StoreTest. */\npublic class ${E}StoreTest {\n    static void check(boolean ok, String what) {\n        if (!ok) throw new AssertionError(what);\n    }\n\n    public static void main(String[] args) {\n        ${E}Store store = new ${E}Store();\n        var item = store.create("first");\n        check(store.get(item.id()).map(${E}Store.${E}::title).orElse("").equals("first"), "get");\n        check(store.remove(item.id()), "remove once");\n        check(!store.remove(item.id()), "remove twice");\n        System.out.println("all tests passed");\n    }\n}\n` });
  return files;
}

export function generateC(spec: GenerationSpec, cpp: boolean): SandboxFile[] {
  const { resource, entity } = spec.analysis;
  if (cpp) {
    const E = capitalize(entity);
    const files: SandboxFile[] = [
      { path: `src/${entity}_store.hpp`, lang: 'cpp', content: `#pragma once\n#include <map>\n#include <optional>\n#include <string>\n\nstruct ${E} {\n  int id;\n  std::string title;\n};\n\n// In-memory store of ${resource}.\nclass ${E}Store {\n public:\n  const ${E}& create(const std::string& title) {\n    int id = next_id_++;\n    return items_[id] = ${E}{id, title};\n  }\n  std::optional<${E}> get(int id) const {\n    auto it = items_.find(id);\n    if (it == items_.end()) return std::nullopt;\n    return it->second;\n  }\n  bool remove(int id) { return items_.erase(id) > 0; }\n  const std::map<int, ${E}>& all() const { return items_; }\n\n private:\n  std::map<int, ${E}> items_;\n  int next_id_ = 1;\n};\n` },
      { path: 'src/main.cpp', lang: 'cpp', content: `#include <iostream>\n#include "${entity}_store.hpp"\n\nint main(int argc, char** argv) {\n  ${E}Store store;\n  for (int i = 1; i < argc; ++i) store.create(argv[i]);\n  for (const auto& [id, item] : store.all()) std::cout << id << '\\t' << item.title << '\\n';\n  return 0;\n}\n` },
    ];
    if (spec.includeTests) files.push({ path: 'test/store_test.cpp', lang: 'cpp', content: `#include <cassert>\n#include <iostream>\n#include "../src/${entity}_store.hpp"\n\nint main() {\n  ${E}Store store;\n  int id = store.create("first").id;\n  assert(store.get(id)->title == "first");\n  assert(store.remove(id));\n  assert(!store.remove(id));\n  std::cout << "all tests passed\\n";\n  return 0;\n}\n` });
    return files;
  }
  const files: SandboxFile[] = [
    { path: `src/${entity}_store.h`, lang: 'c', content: `#ifndef ${entity.toUpperCase()}_STORE_H\n#define ${entity.toUpperCase()}_STORE_H\n\n#define MAX_ITEMS 128\n#define TITLE_LEN 128\n\ntypedef struct {\n  int id;\n  char title[TITLE_LEN];\n  int used;\n} ${entity}_t;\n\n/* Fixed-size in-memory store of ${resource}. */\ntypedef struct {\n  ${entity}_t items[MAX_ITEMS];\n  int next_id;\n} ${entity}_store_t;\n\nvoid store_init(${entity}_store_t *s);\nint store_create(${entity}_store_t *s, const char *title);\nconst ${entity}_t *store_get(const ${entity}_store_t *s, int id);\nint store_remove(${entity}_store_t *s, int id);\n\n#endif\n` },
    { path: `src/${entity}_store.c`, lang: 'c', content: `#include <string.h>\n#include "${entity}_store.h"\n\nvoid store_init(${entity}_store_t *s) {\n  memset(s, 0, sizeof *s);\n  s->next_id = 1;\n}\n\nint store_create(${entity}_store_t *s, const char *title) {\n  for (int i = 0; i < MAX_ITEMS; i++) {\n    if (!s->items[i].used) {\n      s->items[i].used = 1;\n      s->items[i].id = s->next_id++;\n      strncpy(s->items[i].title, title, TITLE_LEN - 1);\n      s->items[i].title[TITLE_LEN - 1] = '\\0';\n      return s->items[i].id;\n    }\n  }\n  return -1;\n}\n\nconst ${entity}_t *store_get(const ${entity}_store_t *s, int id) {\n  for (int i = 0; i < MAX_ITEMS; i++)\n    if (s->items[i].used && s->items[i].id == id) return &s->items[i];\n  return NULL;\n}\n\nint store_remove(${entity}_store_t *s, int id) {\n  for (int i = 0; i < MAX_ITEMS; i++) {\n    if (s->items[i].used && s->items[i].id == id) {\n      s->items[i].used = 0;\n      return 1;\n    }\n  }\n  return 0;\n}\n` },
    { path: 'src/main.c', lang: 'c', content: `#include <stdio.h>\n#include "${entity}_store.h"\n\nint main(int argc, char **argv) {\n  static ${entity}_store_t store;\n  store_init(&store);\n  for (int i = 1; i < argc; i++) {\n    int id = store_create(&store, argv[i]);\n    printf("%d\\t%s\\n", id, store_get(&store, id)->title);\n  }\n  return 0;\n}\n` },
  ];
  if (spec.includeTests) files.push({ path: 'test/store_test.c', lang: 'c', content: `#include <assert.h>\n#include <stdio.h>\n#include <string.h>\n#include "../src/${entity}_store.h"\n\nint main(void) {\n  static ${entity}_store_t store;\n  store_init(&store);\n  int id = store_create(&store, "first");\n  assert(strcmp(store_get(&store, id)->title, "first") == 0);\n  assert(store_remove(&store, id) == 1);\n  assert(store_remove(&store, id) == 0);\n  puts("all tests passed");\n  return 0;\n}\n` });
  return files;
}
