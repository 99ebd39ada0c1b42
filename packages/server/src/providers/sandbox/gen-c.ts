import { cRouteFiles } from './gen-c-server.js';
import { withArticle } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';
import { readme, schemaFile } from './sandbox-files.js';

/**
 * C11 templates of the sandbox model (a deterministic template model, not
 * AI): a fixed-capacity store (no allocation, nothing to free), a command
 * line or a small POSIX-socket HTTP server, assert()-based tests and a
 * Makefile. String.raw keeps C's escapes readable.
 */
export interface CNames { e: string; E: string; f: string; F: string; store: string; header: string }

export function cNames(spec: GenerationSpec): CNames {
  const e = spec.entity.snake;
  return { e, E: e.toUpperCase(), f: spec.field, F: spec.field.toUpperCase(), store: `${e}_store`, header: `${e}_store.h` };
}

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

function cliFiles(spec: GenerationSpec, n: CNames): SandboxFile[] {
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  const cmd = spec.resource.kebab;
  const one = withArticle(spec.entity.words);
  return [{
    path: 'src/cli.h', lang: 'c',
    content: String.raw`#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#include "${n.header}"

/* Runs one command (argv without the program name): 0 on success, 2 on misuse (message on err). */
int cli_run(${n.store}_t *store, int argc, char **argv, FILE *out, FILE *err);

#endif
`,
  }, {
    path: 'src/cli.c', lang: 'c',
    content: String.raw`#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: ${cmd} <command>\n"
    "  add <${n.f}...>            add ${one}\n"
    "  list                    list every ${spec.entity.words}\n"
    "  show <id>               show one ${spec.entity.words}\n"
    "  rename <id> <${n.f}...>   change the ${n.f} of ${one}\n"
    "  remove <id>             remove ${one}\n";

/* Joins words with single spaces into buf; 0 when they do not fit. */
static int join(char *buf, size_t size, int count, char **words) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count; i++) {
    size_t word = strlen(words[i]);
    if (len + word + 2 > size) return 0;
    if (i > 0) buf[len++] = ' ';
    memcpy(buf + len, words[i], word + 1);
    len += word;
  }
  return 1;
}

static long parse_id(const char *text) {
  char *end;
  long id = text ? strtol(text, &end, 10) : 0;
  return text && *end == '\0' && id > 0 ? id : 0;
}

int cli_run(${n.store}_t *store, int argc, char **argv, FILE *out, FILE *err) {
  char text[${n.E}_${n.F}_MAX + 64];
  const char *command = argc > 0 ? argv[0] : "";
  const ${n.e}_t *item = NULL;
  if (strcmp(command, "list") == 0) {
    for (size_t i = 0; i < store->count; i++) fprintf(out, "%ld\t%s\n", store->items[i].id, store->items[i].${n.f});
    return 0;
  }
  if (strcmp(command, "add") == 0) {
    const char *problem = join(text, sizeof text, argc - 1, argv + 1) ? ${n.e}_check_${n.f}(text) : "${n.f} is too long";
    if (problem == NULL && (item = ${n.store}_create(store, text)) == NULL) problem = "the store is full";
    if (problem != NULL) {
      fprintf(err, "%s\n", problem);
      return 2;
    }
  } else if (strcmp(command, "show") == 0 || strcmp(command, "rename") == 0 || strcmp(command, "remove") == 0) {
    long id = parse_id(argc > 1 ? argv[1] : NULL);
    if (id == 0) {
      fprintf(err, "not an id: %s\n", argc > 1 ? argv[1] : "(missing)");
      return 2;
    }
    if (strcmp(command, "remove") == 0) {
      if (${n.store}_remove(store, id)) {
        fprintf(out, "removed %ld\n", id);
        return 0;
      }
    } else if (strcmp(command, "show") == 0) {
      item = ${n.store}_get(store, id);
    } else {
      const char *problem = join(text, sizeof text, argc - 2, argv + 2) ? ${n.e}_check_${n.f}(text) : "${n.f} is too long";
      if (problem != NULL) {
        fprintf(err, "%s\n", problem);
        return 2;
      }
      item = ${n.store}_update(store, id, text);
    }
    if (item == NULL) {
      fprintf(err, "no ${spec.entity.words} %ld\n", id);
      return 2;
    }
  } else {
    fputs(usage, err);
    return 2;
  }
  fprintf(out, "%ld\t%s\n", item->id, item->${n.f});
  return 0;
}
`,
  }, {
    path: 'src/main.c', lang: 'c',
    content: String.raw`#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Loads the ${spec.resource.words} from a tab-separated file (${env}, default ${cmd}.tsv), runs the command, saves. */
int main(int argc, char **argv) {
  static ${n.store}_t store;
  ${n.store}_init(&store);
  const char *path = getenv("${env}") ? getenv("${env}") : "${cmd}.tsv";
  FILE *file = fopen(path, "r");
  if (file != NULL) {
    char line[${n.E}_${n.F}_MAX + 64];
    while (fgets(line, sizeof line, file) != NULL && store.count < ${n.E}_STORE_CAPACITY) {
      ${n.e}_t *item = &store.items[store.count];
      char *${n.f} = strchr(line, '\t');
      if (${n.f} == NULL) continue;
      ${n.f}[strcspn(${n.f}, "\n")] = '\0';
      item->id = strtol(line, NULL, 10);
      snprintf(item->${n.f}, sizeof item->${n.f}, "%s", ${n.f} + 1);
      store.count++;
      if (item->id >= store.next_id) store.next_id = item->id + 1;
    }
    fclose(file);
  }
  int status = cli_run(&store, argc - 1, argv + 1, stdout, stderr);
  if (status != 0) return status;
  file = fopen(path, "w");
  if (file == NULL) {
    perror(path);
    return 1;
  }
  for (size_t i = 0; i < store.count; i++) fprintf(file, "%ld\t%s\n", store.items[i].id, store.items[i].${n.f});
  return fclose(file) == 0 ? 0 : 1;
}
`,
  }];
}

function cliTest(spec: GenerationSpec, n: CNames): SandboxFile {
  return {
    path: 'tests/test_cli.c', lang: 'c',
    content: String.raw`#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static ${n.store}_t store;

/* Runs a command line and returns what it printed (static buffer). */
static const char *run(int expected_status, int argc, char **argv) {
  static char output[4096];
  FILE *out = tmpfile();
  FILE *err = tmpfile();
  assert(out != NULL && err != NULL);
  assert(cli_run(&store, argc, argv, out, err) == expected_status);
  rewind(out);
  size_t len = fread(output, 1, sizeof output - 1, out);
  output[len] = '\0';
  fclose(out);
  fclose(err);
  return output;
}

int main(void) {
  ${n.store}_init(&store);
  char *add1[] = {"add", "buy", "milk"};
  char *add2[] = {"add", "walk"};
  char *list[] = {"list"};
  char *rename[] = {"rename", "1", "buy", "bread"};
  char *show[] = {"show", "1"};
  char *remove2[] = {"remove", "2"};
  assert(strcmp(run(0, 3, add1), "1\tbuy milk\n") == 0);
  assert(strcmp(run(0, 2, add2), "2\twalk\n") == 0);
  assert(strcmp(run(0, 1, list), "1\tbuy milk\n2\twalk\n") == 0);
  assert(strcmp(run(0, 4, rename), "1\tbuy bread\n") == 0);
  assert(strcmp(run(0, 2, show), "1\tbuy bread\n") == 0);
  assert(strcmp(run(0, 2, remove2), "removed 2\n") == 0);

  char *bogus[] = {"bogus"};
  char *add_nothing[] = {"add"};
  char *show_bad[] = {"show", "x"};
  char *remove_missing[] = {"remove", "9"};
  run(2, 0, NULL);
  run(2, 1, bogus);
  run(2, 1, add_nothing);
  run(2, 2, show_bad);
  run(2, 2, remove_missing);

  puts("test_cli: all tests passed");
  return 0;
}
`,
  };
}
