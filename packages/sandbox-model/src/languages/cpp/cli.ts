import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import type { CppNames } from './names.js';

/** The command line of the sandbox model's (deterministic, not AI) C++ projects: run() is pure, main() does the file. */
export function cppCliFiles(spec: GenerationSpec, n: CppNames): { files: SandboxFile[]; test: SandboxFile } {
  const f = n.f;
  const cmd = spec.resource.kebab;
  const one = withArticle(spec.entity.words);
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  return {
    files: [{
      path: 'src/cli.hpp', lang: 'cpp',
      content: String.raw`#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "${n.header}"

namespace ${n.ns} {

/// Runs one command (arguments without the program name): 0 on success, 2 on misuse (message on err).
int run(${n.E}Store& store, const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ${n.ns}
`,
    }, {
      path: 'src/cli.cpp', lang: 'cpp',
      content: String.raw`#include "cli.hpp"

#include <optional>

namespace ${n.ns} {
namespace {

constexpr const char* kUsage =
    "usage: ${cmd} <command>\n"
    "  add <${f}...>            add ${one}\n"
    "  list                    list every ${spec.entity.words}\n"
    "  show <id>               show one ${spec.entity.words}\n"
    "  rename <id> <${f}...>   change the ${f} of ${one}\n"
    "  remove <id>             remove ${one}\n";

std::string join(const std::vector<std::string>& words, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < words.size(); ++i) out += (i > from ? " " : "") + words[i];
  return out;
}

std::optional<long> parse_id(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1].empty() || args[1].size() > 18 || args[1].find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const long id = std::stol(args[1]);
  return id > 0 ? std::optional<long>(id) : std::nullopt;
}

}  // namespace

int run(${n.E}Store& store, const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string command = args.empty() ? "" : args[0];
  std::string problem;
  if (command == "list") {
    for (const auto& item : store.list()) out << item.id << '\t' << item.${f} << '\n';
    return 0;
  }
  if (command == "add") {
    const auto ${f} = check_${f}(join(args, 1), &problem);
    if (!${f}) {
      err << problem << '\n';
      return 2;
    }
    const auto item = *store.create(*${f});
    out << item.id << '\t' << item.${f} << '\n';
    return 0;
  }
  if (command != "show" && command != "rename" && command != "remove") {
    err << kUsage;
    return 2;
  }
  const auto id = parse_id(args);
  if (!id) {
    err << "not an id: " << (args.size() > 1 ? args[1] : "(missing)") << '\n';
    return 2;
  }
  std::optional<${n.E}> item;
  if (command == "remove") {
    if (store.remove(*id)) {
      out << "removed " << *id << '\n';
      return 0;
    }
  } else if (command == "show") {
    item = store.get(*id);
  } else {
    const auto ${f} = check_${f}(join(args, 2), &problem);
    if (!${f}) {
      err << problem << '\n';
      return 2;
    }
    item = store.update(*id, *${f});
  }
  if (!item) {
    err << "no ${spec.entity.words} " << *id << '\n';
    return 2;
  }
  out << item->id << '\t' << item->${f} << '\n';
  return 0;
}

}  // namespace ${n.ns}
`,
    }, {
      path: 'src/main.cpp', lang: 'cpp',
      content: String.raw`#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"

/// Loads the ${spec.resource.words} from a tab-separated file (${env}, default ${cmd}.tsv), runs the command, saves.
int main(int argc, char** argv) {
  const char* env = std::getenv("${env}");
  const std::string path = env != nullptr ? env : "${cmd}.tsv";
  ${n.ns}::${n.E}Store store;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    store.restore({std::atol(line.substr(0, tab).c_str()), line.substr(tab + 1), ""});
  }
  const int status = ${n.ns}::run(store, std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  if (status != 0) return status;
  std::ofstream save(path);
  for (const auto& item : store.list()) save << item.id << '\t' << item.${f} << '\n';
  return save ? 0 : 1;
}
`,
    }],
    test: {
      path: 'tests/test_cli.cpp', lang: 'cpp',
      content: String.raw`#include <cassert>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

${n.ns}::${n.E}Store store;

std::string run(int expected_status, const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  assert(${n.ns}::run(store, args, out, err) == expected_status);
  return out.str();
}

}  // namespace

int main() {
  assert(run(0, {"add", "buy", "milk"}) == "1\tbuy milk\n");
  assert(run(0, {"add", "walk"}) == "2\twalk\n");
  assert(run(0, {"list"}) == "1\tbuy milk\n2\twalk\n");
  assert(run(0, {"rename", "1", "buy", "bread"}) == "1\tbuy bread\n");
  assert(run(0, {"show", "1"}) == "1\tbuy bread\n");
  assert(run(0, {"remove", "2"}) == "removed 2\n");
  for (const auto& bad : std::vector<std::vector<std::string>>{{}, {"bogus"}, {"add"}, {"show", "x"}, {"remove", "9"}}) run(2, bad);
  std::cout << "test_cli: all tests passed\n";
  return 0;
}
`,
    },
  };
}
