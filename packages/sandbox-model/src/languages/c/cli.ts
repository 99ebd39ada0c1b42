import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import type { CNames } from './names.js';

/** The command line of the sandbox model's (deterministic, not AI) C projects: cli_run() is testable, main() does the file. */

export function cliFiles(spec: GenerationSpec, n: CNames): SandboxFile[] {
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

export function cliTest(spec: GenerationSpec, n: CNames): SandboxFile {
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
