import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { socketHelpers } from '../posix-sockets.js';
import type { CNames } from './names.js';

/**
 * The HTTP layer of the sandbox model's (deterministic, not AI) C and C++
 * APIs. Routing is a pure function from (method, path, body) to (status,
 * JSON), so tests need no sockets; a deliberately small blocking POSIX
 * socket loop (one request per connection) serves it.
 */

export function cRouteFiles(spec: GenerationSpec, n: CNames): { files: SandboxFile[]; test: SandboxFile } {
  const base = `/${spec.resource.kebab}`;
  const missing = `${spec.entity.words} not found`;
  return {
    files: [{
      path: 'src/routes.h', lang: 'c',
      content: String.raw`#ifndef ROUTES_H
#define ROUTES_H

#include <stddef.h>

#include "${n.header}"

/* Answers one request: writes the JSON body into out and returns the HTTP status. */
int route(${n.store}_t *store, const char *method, const char *path, const char *body, char *out, size_t size);

#endif
`,
    }, {
      path: 'src/routes.c', lang: 'c',
      content: String.raw`#include "routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends to a fixed buffer; output that does not fit is cut (the buffer is sized for a full store). */
typedef struct {
  char *buf;
  size_t size;
  size_t len;
} sink_t;

static void put(sink_t *s, const char *text) {
  for (; *text && s->len + 1 < s->size; text++) s->buf[s->len++] = *text;
  s->buf[s->len] = '\0';
}

static void put_json_string(sink_t *s, const char *text) {
  char escaped[8];
  put(s, "\"");
  for (; *text; text++) {
    unsigned char c = (unsigned char)*text;
    if (c == '"' || c == '\\') {
      snprintf(escaped, sizeof escaped, "\\%c", c);
    } else if (c < 0x20) {
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
    } else {
      escaped[0] = (char)c;
      escaped[1] = '\0';
    }
    put(s, escaped);
  }
  put(s, "\"");
}

static void put_item(sink_t *s, const ${n.e}_t *item) {
  char id[32];
  snprintf(id, sizeof id, "{\"id\":%ld,\"${n.f}\":", item->id);
  put(s, id);
  put_json_string(s, item->${n.f});
  put(s, ",\"createdAt\":");
  put_json_string(s, item->created_at);
  put(s, "}");
}

static int answer(sink_t *s, int status, const char *error) {
  put(s, "{\"error\":");
  put_json_string(s, error);
  put(s, "}");
  return status;
}

/* Reads the "${n.f}" string of a flat JSON object into dst; NULL when fine, else what is wrong. */
static const char *read_${n.f}(const char *body, char *dst, size_t size) {
  const char *p = strstr(body, "\"${n.f}\"");
  size_t len = 0;
  if (p == NULL) return "expected a JSON object with a ${n.f}";
  p += strlen("\"${n.f}\"");
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
  if (*p++ != ':') return "expected a JSON object with a ${n.f}";
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
  if (*p++ != '"') return "${n.f} must be a non-empty string";
  for (; *p && *p != '"'; p++) {
    if (*p == '\\' && p[1] != '\0') p++;
    if (len + 1 >= size) return "${n.f} must be at most 200 characters";
    dst[len++] = *p;
  }
  dst[len] = '\0';
  if (*p != '"') return "invalid JSON body";
  return ${n.e}_check_${n.f}(dst);
}

int route(${n.store}_t *store, const char *method, const char *path, const char *body, char *out, size_t size) {
  sink_t s = {out, size, 0};
  char ${n.f}[${n.E}_${n.F}_MAX + 2];
  const char *prefix = "${base}";
  const char *rest = path + strlen(prefix);
  const ${n.e}_t *item;
  out[0] = '\0';
  if (strncmp(path, prefix, strlen(prefix)) != 0) return answer(&s, 404, "not found");
  if (*rest == '\0' || strcmp(rest, "/") == 0) {
    if (strcmp(method, "GET") == 0) {
      put(&s, "[");
      for (size_t i = 0; i < store->count; i++) {
        if (i > 0) put(&s, ",");
        put_item(&s, &store->items[i]);
      }
      put(&s, "]");
      return 200;
    }
    if (strcmp(method, "POST") != 0) return answer(&s, 405, "method not allowed");
    const char *problem = read_${n.f}(body, ${n.f}, sizeof ${n.f});
    if (problem != NULL) return answer(&s, 400, problem);
    if ((item = ${n.store}_create(store, ${n.f})) == NULL) return answer(&s, 500, "the store is full");
    put_item(&s, item);
    return 201;
  }
  char *end = NULL;
  long id = *rest == '/' ? strtol(rest + 1, &end, 10) : 0;
  if (id <= 0 || *end != '\0') return answer(&s, 404, "not found");
  if (strcmp(method, "DELETE") == 0) return ${n.store}_remove(store, id) ? 204 : answer(&s, 404, "${missing}");
  if (strcmp(method, "GET") == 0) {
    item = ${n.store}_get(store, id);
  } else if (strcmp(method, "PUT") == 0) {
    const char *problem = read_${n.f}(body, ${n.f}, sizeof ${n.f});
    if (problem != NULL) return answer(&s, 400, problem);
    item = ${n.store}_update(store, id, ${n.f});
  } else {
    return answer(&s, 405, "method not allowed");
  }
  if (item == NULL) return answer(&s, 404, "${missing}");
  put_item(&s, item);
  return 200;
}
`,
    }, {
      path: 'src/server.c', lang: 'c',
      content: String.raw`#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "routes.h"

${socketHelpers()}
int main(void) {
  static ${n.store}_t store;
  static char request[65536];
  static char response[1 << 19];
  const char *port_text = getenv("PORT");
  int port = port_text != NULL ? atoi(port_text) : 8080;
  int listener = listen_on(port);
  if (listener < 0) {
    perror("listen");
    return 1;
  }
  ${n.store}_init(&store);
  printf("listening on http://127.0.0.1:%d${base}\n", port);
  fflush(stdout);
  for (;;) {
    int client = accept(listener, NULL, NULL);
    if (client < 0) continue;
    char method[8];
    char path[256];
    if (read_request(client, request, sizeof request) > 0 && sscanf(request, "%7s %255s", method, path) == 2) {
      const char *body = strstr(request, "\r\n\r\n");
      int status = route(&store, method, path, body != NULL ? body + 4 : "", response, sizeof response);
      write_response(client, status, response);
    }
    close(client);
  }
}
`,
    }],
    test: {
      path: 'tests/test_routes.c', lang: 'c',
      content: String.raw`#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "routes.h"

int main(void) {
  static ${n.store}_t store;
  static char out[65536];
  ${n.store}_init(&store);

  assert(route(&store, "POST", "${base}", "{\"${n.f}\": \"first\"}", out, sizeof out) == 201);
  assert(strstr(out, "\"${n.f}\":\"first\"") != NULL);
  assert(route(&store, "GET", "${base}/1", "", out, sizeof out) == 200);
  assert(route(&store, "PUT", "${base}/1", "{\"${n.f}\": \"say \\\"hi\\\"\"}", out, sizeof out) == 200);
  assert(strstr(out, "\"${n.f}\":\"say \\\"hi\\\"\"") != NULL);
  assert(route(&store, "GET", "${base}", "", out, sizeof out) == 200);
  assert(out[0] == '[' && strstr(out, "\"id\":1") != NULL);
  assert(route(&store, "DELETE", "${base}/1", "", out, sizeof out) == 204);
  assert(route(&store, "GET", "${base}/1", "", out, sizeof out) == 404);

  assert(route(&store, "POST", "${base}", "{\"${n.f}\": \"\"}", out, sizeof out) == 400);
  assert(route(&store, "POST", "${base}", "not json", out, sizeof out) == 400);
  assert(route(&store, "GET", "${base}/abc", "", out, sizeof out) == 404);
  assert(route(&store, "GET", "/elsewhere", "", out, sizeof out) == 404);
  assert(route(&store, "PATCH", "${base}", "", out, sizeof out) == 405);

  puts("test_routes: all tests passed");
  return 0;
}
`,
    },
  };
}
