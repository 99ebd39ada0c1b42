import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { cliFiles, cliTest } from './cli.js';
import { cNames, type CNames } from './names.js';
import { cRouteFiles } from './server.js';

/**
 * C11 templates of the sandbox model (a deterministic template model, not
 * AI): a fixed-capacity store (no allocation, nothing to free), a command
 * line or a small POSIX-socket HTTP server, assert()-based tests and a
 * Makefile. String.raw keeps C's escapes readable.
 */
export function generateC(spec: GenerationSpec): SandboxFile[] {
  const n = cNames(spec);
  const files: SandboxFile[] = [headerFile(spec, n), storeFile(spec, n)];
  const binary = spec.resource.snake;
  const sources = [`src/${n.store}.c`];
  const tests = [`tests/test_${n.store}.c`];
  let main: string | undefined;
  if (spec.kind === 'api') {
    const api = cRouteFiles(spec, n);
    files.push(...api.files);
    sources.push('src/routes.c');
    tests.push(api.test.path);
    main = 'src/server.c';
    if (spec.includeTests) files.push(storeTest(spec, n), api.test);
  } else if (spec.kind === 'cli') {
    files.push(...cliFiles(spec, n));
    sources.push('src/cli.c');
    tests.push('tests/test_cli.c');
    main = 'src/main.c';
    if (spec.includeTests) files.push(storeTest(spec, n), cliTest(spec, n));
  } else if (spec.includeTests) files.push(storeTest(spec, n));
  const testNames = tests.filter((t) => files.some((f) => f.path === t)).map((t) => t.replace(/^tests\/(.*)\.c$/, '$1'));
  files.push({
    path: 'Makefile', lang: 'makefile',
    content: [
      'CC ?= cc', 'CFLAGS ?= -std=c11 -Wall -Wextra -pedantic -O2', `SOURCES = ${sources.join(' ')}`, `TESTS = ${testNames.join(' ')}`, '',
      `all: ${main ? binary : 'lib'}`, '',
      ...(main ? [`${binary}: ${main} $(SOURCES)`, '\t$(CC) $(CFLAGS) -o $@ $^', ''] : ['lib: $(SOURCES)', '\t$(CC) $(CFLAGS) -c $^', '']),
      'test: $(TESTS)', '\tfor t in $(TESTS); do ./$$t || exit 1; done', '',
      '%: tests/%.c $(SOURCES)', '\t$(CC) $(CFLAGS) -Isrc -o $@ $^', '',
      'clean:', `\trm -f ${main ? binary : '*.o'} $(TESTS)`, '', '.PHONY: all lib test clean', '',
    ].join('\n'),
  });
  const schema = schemaFile(spec);
  if (schema) files.push(schema);
  files.push(readme(spec, { run: main ? `make\n./${binary}${spec.kind === 'cli' ? ` add "first ${spec.entity.words}"` : ''}` : 'make', test: 'make test' }, files));
  return files;
}

function headerFile(spec: GenerationSpec, n: CNames): SandboxFile {
  return {
    path: `src/${n.header}`, lang: 'c',
    content: String.raw`#ifndef ${n.E}_STORE_H
#define ${n.E}_STORE_H

#include <stddef.h>

#define ${n.E}_${n.F}_MAX 200
#define ${n.E}_STORE_CAPACITY 1024

typedef struct {
  long id;
  char ${n.f}[${n.E}_${n.F}_MAX + 1];
  char created_at[32];
} ${n.e}_t;

/* ${spec.resource.words} in a fixed-size array, in insertion order: no allocation, nothing to free. */
typedef struct {
  ${n.e}_t items[${n.E}_STORE_CAPACITY];
  size_t count;
  long next_id;
} ${n.store}_t;

void ${n.store}_init(${n.store}_t *store);

/* NULL when the ${n.f} is acceptable, else a message saying what is wrong. */
const char *${n.e}_check_${n.f}(const char *${n.f});

/* Adds ${withArticle(spec.entity.words)} (${n.f} trimmed); NULL when the ${n.f} is invalid or the store is full. */
const ${n.e}_t *${n.store}_create(${n.store}_t *store, const char *${n.f});
const ${n.e}_t *${n.store}_get(const ${n.store}_t *store, long id);
const ${n.e}_t *${n.store}_update(${n.store}_t *store, long id, const char *${n.f});
/* 1 when it removed something, 0 when there was nothing with this id. */
int ${n.store}_remove(${n.store}_t *store, long id);

#endif
`,
  };
}

function storeFile(spec: GenerationSpec, n: CNames): SandboxFile {
  return {
    path: `src/${n.store}.c`, lang: 'c',
    content: String.raw`#include "${n.header}"

#include <ctype.h>
#include <string.h>
#include <time.h>

void ${n.store}_init(${n.store}_t *store) {
  memset(store, 0, sizeof *store);
  store->next_id = 1;
}

/* Copies value into dst without leading and trailing blanks; 0 when nothing is left or it does not fit. */
static int copy_trimmed(char *dst, size_t size, const char *value) {
  while (*value && isspace((unsigned char)*value)) value++;
  size_t len = strlen(value);
  while (len > 0 && isspace((unsigned char)value[len - 1])) len--;
  if (len == 0 || len >= size) return 0;
  memcpy(dst, value, len);
  dst[len] = '\0';
  return 1;
}

const char *${n.e}_check_${n.f}(const char *${n.f}) {
  char trimmed[${n.E}_${n.F}_MAX + 1];
  if (${n.f} == NULL || strspn(${n.f}, " \t\r\n") == strlen(${n.f})) return "${n.f} must be a non-empty string";
  if (!copy_trimmed(trimmed, sizeof trimmed, ${n.f})) return "${n.f} must be at most 200 characters";
  return NULL;
}

static ${n.e}_t *find(${n.store}_t *store, long id) {
  for (size_t i = 0; i < store->count; i++) {
    if (store->items[i].id == id) return &store->items[i];
  }
  return NULL;
}

const ${n.e}_t *${n.store}_create(${n.store}_t *store, const char *${n.f}) {
  if (${n.e}_check_${n.f}(${n.f}) != NULL || store->count == ${n.E}_STORE_CAPACITY) return NULL;
  ${n.e}_t *item = &store->items[store->count];
  copy_trimmed(item->${n.f}, sizeof item->${n.f}, ${n.f});
  time_t now = time(NULL);
  strftime(item->created_at, sizeof item->created_at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  item->id = store->next_id++;
  store->count++;
  return item;
}

const ${n.e}_t *${n.store}_get(const ${n.store}_t *store, long id) {
  return find((${n.store}_t *)store, id);
}

const ${n.e}_t *${n.store}_update(${n.store}_t *store, long id, const char *${n.f}) {
  ${n.e}_t *item = find(store, id);
  if (item == NULL || ${n.e}_check_${n.f}(${n.f}) != NULL) return NULL;
  copy_trimmed(item->${n.f}, sizeof item->${n.f}, ${n.f});
  return item;
}

int ${n.store}_remove(${n.store}_t *store, long id) {
  ${n.e}_t *item = find(store, id);
  if (item == NULL) return 0;
  size_t index = (size_t)(item - store->items);
  memmove(item, item + 1, (store->count - index - 1) * sizeof *item);
  store->count--;
  return 1;
}
`,
  };
}

function storeTest(spec: GenerationSpec, n: CNames): SandboxFile {
  return {
    path: `tests/test_${n.store}.c`, lang: 'c',
    content: String.raw`#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "${n.header}"

int main(void) {
  static ${n.store}_t store;
  ${n.store}_init(&store);

  const ${n.e}_t *item = ${n.store}_create(&store, "  first ");
  assert(item != NULL);
  long id = item->id;
  assert(strcmp(${n.store}_get(&store, id)->${n.f}, "first") == 0);
  assert(strcmp(${n.store}_update(&store, id, "renamed")->${n.f}, "renamed") == 0);
  assert(${n.store}_create(&store, "second")->id != id);
  assert(store.count == 2);
  assert(${n.store}_remove(&store, id) == 1);
  assert(${n.store}_remove(&store, id) == 0);
  assert(${n.store}_get(&store, id) == NULL);
  assert(strcmp(store.items[0].${n.f}, "second") == 0);

  char long_${n.f}[300];
  memset(long_${n.f}, 'x', sizeof long_${n.f} - 1);
  long_${n.f}[sizeof long_${n.f} - 1] = '\0';
  assert(${n.store}_create(&store, "") == NULL);
  assert(${n.store}_create(&store, "   ") == NULL);
  assert(${n.store}_create(&store, long_${n.f}) == NULL);
  assert(${n.e}_check_${n.f}("fine") == NULL);

  puts("test_${n.store}: all tests passed");
  return 0;
}
`,
  };
}
