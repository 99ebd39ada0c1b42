import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { socketHelpers } from '../posix-sockets.js';
import type { CppNames } from './names.js';

/** The HTTP API of the sandbox model's (deterministic, not AI) C++ projects: a pure route() served by a small POSIX socket loop. */

export function routeFiles(spec: GenerationSpec, n: CppNames): SandboxFile[] {
  const f = n.f;
  const base = `/${spec.resource.kebab}`;
  const missing = `R"({"error":"${spec.entity.words} not found"})"`;
  return [{
    path: 'src/routes.hpp', lang: 'cpp',
    content: String.raw`#pragma once

#include <string>

#include "${n.header}"

namespace ${n.ns} {

struct Response {
  int status;
  std::string body;
};

/// Answers one request; pure, so tests need no sockets.
Response route(${n.E}Store& store, const std::string& method, const std::string& path, const std::string& body);

}  // namespace ${n.ns}
`,
  }, {
    path: 'src/routes.cpp', lang: 'cpp',
    content: String.raw`#include "routes.hpp"

#include <cstdio>
#include <optional>

namespace ${n.ns} {
namespace {

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string to_json(const ${n.E}& item) {
  return "{\"id\":" + std::to_string(item.id) + ",\"${f}\":" + quote(item.${f}) + ",\"createdAt\":" + quote(item.created_at) + "}";
}

Response error(int status, const std::string& message) { return {status, "{\"error\":" + quote(message) + "}"}; }

/// The "${f}" string of a flat JSON object; nullopt (with the reason in problem) otherwise.
std::optional<std::string> read_${f}(const std::string& body, std::string& problem) {
  problem = "expected a JSON object with a ${f}";
  auto pos = body.find("\"${f}\"");
  if (pos == std::string::npos) return std::nullopt;
  pos = body.find_first_not_of(" \t\r\n", pos + ${f.length + 2});
  if (pos == std::string::npos || body[pos] != ':') return std::nullopt;
  pos = body.find_first_not_of(" \t\r\n", pos + 1);
  if (pos == std::string::npos || body[pos] != '"') return std::nullopt;
  std::string value;
  for (++pos; pos < body.size() && body[pos] != '"'; ++pos) {
    if (body[pos] == '\\' && pos + 1 < body.size()) ++pos;
    value += body[pos];
  }
  if (pos >= body.size()) return std::nullopt;
  return check_${f}(value, &problem);
}

}  // namespace

Response route(${n.E}Store& store, const std::string& method, const std::string& path, const std::string& body) {
  const std::string prefix = "${base}";
  if (path.compare(0, prefix.size(), prefix) != 0) return error(404, "not found");
  const std::string rest = path.substr(prefix.size());
  std::string problem;
  if (rest.empty() || rest == "/") {
    if (method == "GET") {
      std::string out = "[";
      for (const auto& item : store.list()) out += (out.size() > 1 ? "," : "") + to_json(item);
      return {200, out + "]"};
    }
    if (method != "POST") return error(405, "method not allowed");
    const auto ${f} = read_${f}(body, problem);
    if (!${f}) return error(400, problem);
    return {201, to_json(*store.create(*${f}))};
  }
  if (rest[0] != '/' || rest.size() > 19 || rest.find_first_not_of("0123456789", 1) != std::string::npos || rest == "/0") {
    return error(404, "not found");
  }
  const long id = std::stol(rest.substr(1));
  if (method == "DELETE") return store.remove(id) ? Response{204, ""} : Response{404, ${missing}};
  std::optional<${n.E}> item;
  if (method == "GET") {
    item = store.get(id);
  } else if (method == "PUT") {
    const auto ${f} = read_${f}(body, problem);
    if (!${f}) return error(400, problem);
    item = store.update(id, *${f});
  } else {
    return error(405, "method not allowed");
  }
  return item ? Response{200, to_json(*item)} : Response{404, ${missing}};
}

}  // namespace ${n.ns}
`,
  }, {
    path: 'src/server.cpp', lang: 'cpp',
    content: String.raw`#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "routes.hpp"

${socketHelpers()}
int main() {
  static char request[65536];
  const char* port_text = std::getenv("PORT");
  const int port = port_text != nullptr ? std::atoi(port_text) : 8080;
  const int listener = listen_on(port);
  if (listener < 0) {
    std::perror("listen");
    return 1;
  }
  ${n.ns}::${n.E}Store store;
  std::cout << "listening on http://127.0.0.1:" << port << "${base}" << std::endl;
  for (;;) {
    const int client = accept(listener, nullptr, nullptr);
    if (client < 0) continue;
    char method[8];
    char path[256];
    if (read_request(client, request, sizeof request) > 0 && std::sscanf(request, "%7s %255s", method, path) == 2) {
      const char* body = std::strstr(request, "\r\n\r\n");
      const auto response = ${n.ns}::route(store, method, path, body != nullptr ? body + 4 : "");
      write_response(client, response.status, response.body.c_str());
    }
    close(client);
  }
}
`,
  }];
}

export function routeTest(spec: GenerationSpec, n: CppNames): SandboxFile {
  const f = n.f;
  const base = `/${spec.resource.kebab}`;
  return {
    path: 'tests/test_routes.cpp', lang: 'cpp',
    content: String.raw`#include <cassert>
#include <iostream>

#include "routes.hpp"

int main() {
  ${n.ns}::${n.E}Store store;
  using ${n.ns}::route;
  auto created = route(store, "POST", "${base}", R"({"${f}": "first"})");
  assert(created.status == 201 && created.body.find(R"("${f}":"first")") != std::string::npos);
  assert(route(store, "GET", "${base}/1", "").status == 200);
  const auto updated = route(store, "PUT", "${base}/1", R"({"${f}": "say \"hi\""})");
  assert(updated.status == 200 && updated.body.find(R"("${f}":"say \"hi\"")") != std::string::npos);
  assert(route(store, "GET", "${base}", "").body.rfind(R"([{"id":1)", 0) == 0);
  assert(route(store, "DELETE", "${base}/1", "").status == 204);
  assert(route(store, "GET", "${base}/1", "").status == 404);
  assert(route(store, "POST", "${base}", R"({"${f}": ""})").status == 400);
  assert(route(store, "POST", "${base}", "not json").status == 400);
  assert(route(store, "GET", "${base}/abc", "").status == 404);
  assert(route(store, "GET", "/elsewhere", "").status == 404);
  assert(route(store, "PATCH", "${base}", "").status == 405);
  std::cout << "test_routes: all tests passed\n";
  return 0;
}
`,
  };
}
