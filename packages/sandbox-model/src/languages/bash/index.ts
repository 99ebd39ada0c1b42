import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme } from '../../project-files.js';
import { commentText } from '../../request-text.js';

/**
 * Bash template of the sandbox model (a deterministic template model, not
 * AI): a command-line tool over a tab-separated file (a shell script is a
 * poor HTTP server, so API prompts get the same tool), and a plain-bash
 * test. Bash's own `${…}` is written `@{…}` here and swapped in at the end,
 * so it cannot collide with the template's interpolation.
 */
const bash = (text: string) => text.replace(/@\{/g, '${');

export function generateBash(spec: GenerationSpec): SandboxFile[] {
  const script = `${spec.resource.kebab}.sh`;
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  const f = spec.field;
  const one = withArticle(spec.entity.words);
  const files: SandboxFile[] = [{
    path: script, lang: 'bash',
    content: bash(`#!/usr/bin/env bash
# ${commentText(spec.title)}
# Command line for ${spec.resource.words}: add, list, show, rename, remove; kept in a
# tab-separated file (${env}, default ${spec.resource.kebab}.tsv). Every function
# returns its own status, so it also behaves when sourced by a test.
set -euo pipefail

usage() {
  cat >&2 <<'EOF'
usage: ${script} <command>
  add <${f}...>            add ${one}
  list                    list every ${spec.entity.words}
  show <id>               show one ${spec.entity.words}
  rename <id> <${f}...>   change the ${f} of ${one}
  remove <id>             remove ${one}
EOF
  return 2
}

die() {
  printf '%s\\n' "$*" >&2
  return 2
}

# Read at call time, so a test can point it elsewhere after sourcing this file.
store_file() {
  printf '%s' "@{${env}:-${spec.resource.kebab}.tsv}"
}

# Prints the ${f} trimmed and without tabs, or fails saying what is wrong.
clean_${f}() {
  local value
  value="$(printf '%s' "$*" | tr '\\t\\r\\n' '   ' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')"
  [[ -n "$value" ]] || { die "${f} must be a non-empty string"; return; }
  (( @{#value} <= 200 )) || { die "${f} must be at most 200 characters"; return; }
  printf '%s' "$value"
}

check_id() {
  [[ "@{1:-}" =~ ^[1-9][0-9]{0,17}$ ]] || die "not an id: @{1:-(missing)}"
}

next_id() {
  local file
  file="$(store_file)"
  [[ -f "$file" ]] || { echo 1; return 0; }
  awk -F'\\t' 'BEGIN { max = 0 } $1 > max { max = $1 } END { print max + 1 }' "$file"
}

cmd_add() {
  local value id file
  value="$(clean_${f} "$@")" || return 2
  id="$(next_id)" || return 1
  file="$(store_file)"
  printf '%s\\t%s\\n' "$id" "$value" >> "$file" || return 1
  printf '%s\\t%s\\n' "$id" "$value"
}

cmd_list() {
  local file
  file="$(store_file)"
  [[ -f "$file" ]] || return 0
  cat "$file"
}

cmd_show() {
  check_id "@{1:-}" || return 2
  cmd_list | awk -F'\\t' -v id="$1" '$1 == id { print; found = 1 } END { exit !found }' || die "no ${spec.entity.words} $1"
}

# Rewrites the file through awk; VALUE travels in the environment because awk -v would interpret backslashes.
rewrite() {
  local id="$1" mode="$2" file tmp
  file="$(store_file)"
  [[ -f "$file" ]] || { die "no ${spec.entity.words} $id"; return; }
  tmp="$(mktemp)" || return 1
  if MODE="$mode" awk -F'\\t' -v OFS='\\t' -v id="$id" '
      $1 == id { found = 1; if (ENVIRON["MODE"] == "remove") next; $2 = ENVIRON["VALUE"] }
      { print }
      END { exit !found }' "$file" > "$tmp"; then
    mv "$tmp" "$file"
  else
    rm -f "$tmp"
    die "no ${spec.entity.words} $id"
  fi
}

cmd_rename() {
  local value
  check_id "@{1:-}" || return 2
  value="$(clean_${f} "@{@:2}")" || return 2
  VALUE="$value" rewrite "$1" rename || return
  printf '%s\\t%s\\n' "$1" "$value"
}

cmd_remove() {
  check_id "@{1:-}" || return 2
  rewrite "$1" remove || return
  printf 'removed %s\\n' "$1"
}

main() {
  local command="@{1:-}"
  if (( $# > 0 )); then shift; fi
  case "$command" in
    add) cmd_add "$@" ;;
    list) cmd_list ;;
    show) cmd_show "$@" ;;
    rename) cmd_rename "$@" ;;
    remove) cmd_remove "$@" ;;
    *) usage ;;
  esac
}

if [[ "@{BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
`),
  }];
  if (spec.includeTests) {
    files.push({
      path: `tests/test_${spec.resource.snake}.sh`, lang: 'bash',
      content: bash(`#!/usr/bin/env bash
# Plain-bash tests, no framework needed: bash tests/test_${spec.resource.snake}.sh
set -euo pipefail
cd "$(dirname "$0")/.."
${env}="$(mktemp)"
export ${env}
trap 'rm -f "$${env}"' EXIT
# shellcheck source=../${script}
source ./${script}

fail() {
  printf 'not ok - %s\\n' "$*"
  exit 1
}

expect() {
  local want="$1" got
  shift
  got="$("$@")" || fail "$* exited with $?"
  [[ "$got" == "$want" ]] || fail "$*: got '$got', want '$want'"
  printf 'ok - %s\\n' "$*"
}

refuses() {
  if "$@" > /dev/null 2>&1; then fail "$* should fail"; fi
  printf 'ok - %s fails\\n' "$*"
}

expect $'1\\tbuy milk' main add buy milk
expect $'2\\twalk' main add walk
expect $'1\\tbuy milk\\n2\\twalk' main list
expect $'1\\tbuy bread' main rename 1 buy bread
expect $'1\\tbuy bread' main show 1
expect 'removed 2' main remove 2
expect $'1\\tbuy bread' main list
refuses main bogus
refuses main add
refuses main add "   "
refuses main show x
refuses main remove 9
echo "all tests passed"
`),
    });
  }
  files.push(readme(spec, { run: `bash ${script} add "first ${spec.entity.words}"\nbash ${script} list`, test: `bash tests/test_${spec.resource.snake}.sh` }, files));
  return files;
}
