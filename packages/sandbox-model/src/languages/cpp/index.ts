import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { commentText } from '../../request-text.js';
import { cppCliFiles } from './cli.js';
import type { CppNames } from './names.js';
import { routeFiles, routeTest } from './server.js';

/**
 * C++17 templates of the sandbox model (a deterministic template model, not
 * AI): a header-only store on std::map/std::optional, a command line or a
 * small POSIX-socket HTTP server over a pure route() function, assert()
 * tests and a CMakeLists.txt. String.raw keeps C++ escapes readable.
 */
export function generateCpp(spec: GenerationSpec): SandboxFile[] {
  const n: CppNames = { ns: spec.resource.snake, E: spec.entity.pascal, f: spec.field, header: `${spec.entity.snake}_store.hpp` };
  const files: SandboxFile[] = [storeHeader(spec, n)];
  const sources: string[] = [];
  const tests: SandboxFile[] = [storeTest(spec, n)];
  let main: string | undefined;
  if (spec.kind === 'api') {
    files.push(...routeFiles(spec, n));
    sources.push('src/routes.cpp');
    tests.push(routeTest(spec, n));
    main = 'src/server.cpp';
  } else if (spec.kind === 'cli') {
    const cli = cppCliFiles(spec, n);
    files.push(...cli.files);
    sources.push('src/cli.cpp');
    tests.push(cli.test);
    main = 'src/main.cpp';
  }
  if (spec.includeTests) files.push(...tests);
  const binary = spec.resource.snake;
  const testTargets = spec.includeTests ? tests.map((t) => t.path.replace(/^tests\/(.*)\.cpp$/, '$1')) : [];
  files.push({
    path: 'CMakeLists.txt', lang: 'cmake',
    content: [
      'cmake_minimum_required(VERSION 3.16)', `project(${binary} CXX)`, '', 'set(CMAKE_CXX_STANDARD 17)', 'set(CMAKE_CXX_STANDARD_REQUIRED ON)', '',
      sources.length ? `add_library(${binary}_core ${sources.join(' ')})` : `add_library(${binary}_core INTERFACE)`,
      `target_include_directories(${binary}_core ${sources.length ? 'PUBLIC' : 'INTERFACE'} src)`,
      ...(main ? [`add_executable(${binary} ${main})`, `target_link_libraries(${binary} PRIVATE ${binary}_core)`] : []),
      ...(testTargets.length ? ['', 'enable_testing()'] : []),
      ...testTargets.flatMap((t) => [`add_executable(${t} tests/${t}.cpp)`, `target_link_libraries(${t} PRIVATE ${binary}_core)`, `add_test(NAME ${t} COMMAND ${t})`]),
      '',
    ].join('\n'),
  });
  const schema = schemaFile(spec);
  if (schema) files.push(schema);
  files.push(readme(spec, {
    setup: 'cmake -S . -B build && cmake --build build',
    run: main ? `./build/${binary}${spec.kind === 'cli' ? ` add "first ${spec.entity.words}"` : ''}` : 'cmake --build build',
    test: 'ctest --test-dir build --output-on-failure',
  }, files));
  return files;
}

function storeHeader(spec: GenerationSpec, n: CppNames): SandboxFile {
  const f = n.f;
  return {
    path: `src/${n.header}`, lang: 'cpp',
    content: String.raw`#pragma once

#include <cstddef>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ${n.ns} {

struct ${n.E} {
  long id = 0;
  std::string ${f};
  std::string created_at;
};

inline constexpr std::size_t kMax${f === 'title' ? 'Title' : 'Name'}Length = 200;

/// The trimmed ${f}, or nullopt (and, if asked, the reason in *problem) when it is unacceptable.
inline std::optional<std::string> check_${f}(const std::string& value, std::string* problem = nullptr) {
  const auto begin = value.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    if (problem != nullptr) *problem = "${f} must be a non-empty string";
    return std::nullopt;
  }
  const auto end = value.find_last_not_of(" \t\r\n");
  std::string trimmed = value.substr(begin, end - begin + 1);
  if (trimmed.size() > kMax${f === 'title' ? 'Title' : 'Name'}Length) {
    if (problem != nullptr) *problem = "${f} must be at most 200 characters";
    return std::nullopt;
  }
  return trimmed;
}

/// ${spec.resource.words} in memory, ordered by id.${spec.database ? ` Swap it for a ${commentText(spec.database)} repository (see db/schema.sql) behind the same methods.` : ''}
class ${n.E}Store {
 public:
  std::vector<${n.E}> list() const {
    std::vector<${n.E}> out;
    out.reserve(items_.size());
    for (const auto& entry : items_) out.push_back(entry.second);
    return out;
  }

  std::optional<${n.E}> get(long id) const {
    const auto it = items_.find(id);
    if (it == items_.end()) return std::nullopt;
    return it->second;
  }

  /// nullopt when the ${f} is unacceptable.
  std::optional<${n.E}> create(const std::string& ${f}) {
    auto checked = check_${f}(${f});
    if (!checked) return std::nullopt;
    ${n.E} item{next_id_++, *checked, now()};
    items_[item.id] = item;
    return item;
  }

  std::optional<${n.E}> update(long id, const std::string& ${f}) {
    auto it = items_.find(id);
    auto checked = check_${f}(${f});
    if (it == items_.end() || !checked) return std::nullopt;
    it->second.${f} = *checked;
    return it->second;
  }

  bool remove(long id) { return items_.erase(id) > 0; }

  /// For loading saved ${spec.resource.words}: keeps the id and moves the counter past it.
  void restore(const ${n.E}& item) {
    items_[item.id] = item;
    if (item.id >= next_id_) next_id_ = item.id + 1;
  }

 private:
  static std::string now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
  }

  std::map<long, ${n.E}> items_;
  long next_id_ = 1;
};

}  // namespace ${n.ns}
`,
  };
}

function storeTest(spec: GenerationSpec, n: CppNames): SandboxFile {
  const f = n.f;
  return {
    path: `tests/test_${spec.entity.snake}_store.cpp`, lang: 'cpp',
    content: String.raw`#include <cassert>
#include <iostream>
#include <string>

#include "${n.header}"

int main() {
  ${n.ns}::${n.E}Store store;
  const auto item = store.create("  first ");
  assert(item && item->${f} == "first");
  assert(store.get(item->id)->${f} == "first");
  assert(store.update(item->id, "renamed")->${f} == "renamed");
  assert(store.create("second")->id != item->id);
  assert(store.list().size() == 2);
  assert(store.remove(item->id));
  assert(!store.remove(item->id));
  assert(!store.get(item->id));
  assert(!store.create(""));
  assert(!store.create("   "));
  assert(!store.create(std::string(201, 'x')));
  std::string problem;
  assert(!${n.ns}::check_${f}("", &problem) && !problem.empty());
  std::cout << "test_${spec.entity.snake}_store: all tests passed\n";
  return 0;
}
`,
  };
}
