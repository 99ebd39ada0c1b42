import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { BT, fieldName } from './names.js';

/** The command line of the sandbox model's (deterministic, not AI) Go projects: run() is pure, main() does the file. */

export function cliMain(spec: GenerationSpec): SandboxFile {
  const E = spec.entity.pascal;
  const F = fieldName(spec);
  const f = spec.field;
  const cmd = spec.resource.kebab;
  const one = withArticle(spec.entity.words);
  const env = `${spec.resource.snake.toUpperCase()}_FILE`;
  const none = `fmt.Errorf("no ${spec.entity.words} %d", id)`;
  return {
    path: 'main.go', lang: 'go',
    content: String.raw`package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

const usage = ${BT}usage: ${cmd} <command>
  add <${f}...>            add ${one}
  list [--json]           list every ${spec.entity.words}
  show <id>               show one ${spec.entity.words}
  rename <id> <${f}...>   change the ${f} of ${one}
  remove <id>             remove ${one}${BT}

func format(item ${E}) string {
	return fmt.Sprintf("%d\t%s", item.ID, item.${F})
}

func parseID(rest []string) (int64, error) {
	if len(rest) == 0 {
		return 0, errors.New("not an id: (missing)")
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("not an id: %s", rest[0])
	}
	return id, nil
}

// run executes one command and returns what to print; pure apart from the store, so tests need no files.
func run(args []string, store *Store) (string, error) {
	if len(args) == 0 {
		return "", errors.New(usage)
	}
	command, rest := args[0], args[1:]
	switch command {
	case "add":
		${f}, err := Parse${F}(strings.Join(rest, " "))
		if err != nil {
			return "", err
		}
		return format(store.Create(${f})), nil
	case "list":
		items := store.List()
		if len(rest) > 0 && rest[0] == "--json" {
			data, err := json.MarshalIndent(items, "", "  ")
			return string(data), err
		}
		lines := make([]string, 0, len(items))
		for _, item := range items {
			lines = append(lines, format(item))
		}
		return strings.Join(lines, "\n"), nil
	case "show", "rename", "remove":
		id, err := parseID(rest)
		if err != nil {
			return "", err
		}
		switch command {
		case "show":
			if item, ok := store.Get(id); ok {
				return format(item), nil
			}
		case "rename":
			${f}, err := Parse${F}(strings.Join(rest[1:], " "))
			if err != nil {
				return "", err
			}
			if item, ok := store.Update(id, ${f}); ok {
				return format(item), nil
			}
		default:
			if store.Remove(id) {
				return fmt.Sprintf("removed %d", id), nil
			}
		}
		return "", ${none}
	}
	return "", errors.New(usage)
}

func main() {
	path := os.Getenv("${env}")
	if path == "" {
		path = "${cmd}.json"
	}
	var initial []${E}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &initial); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
	}
	store := NewStore(initial...)
	output, err := run(os.Args[1:], store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if output != "" {
		fmt.Println(output)
	}
	data, err := json.MarshalIndent(store.List(), "", "  ")
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`,
  };
}

export function cliTest(spec: GenerationSpec): SandboxFile {
  return {
    path: 'main_test.go', lang: 'go',
    content: String.raw`package main

import "testing"

func TestRun(t *testing.T) {
	s := NewStore()
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"add", "buy", "milk"}, "1\tbuy milk"},
		{[]string{"add", "walk"}, "2\twalk"},
		{[]string{"list"}, "1\tbuy milk\n2\twalk"},
		{[]string{"rename", "1", "buy", "bread"}, "1\tbuy bread"},
		{[]string{"show", "1"}, "1\tbuy bread"},
		{[]string{"remove", "2"}, "removed 2"},
	}
	for _, step := range steps {
		if got, err := run(step.args, s); err != nil || got != step.want {
			t.Fatalf("run(%q) = %q, %v; want %q", step.args, got, err, step.want)
		}
	}
	for _, bad := range [][]string{{}, {"bogus"}, {"add"}, {"show", "x"}, {"remove", "9"}} {
		if _, err := run(bad, s); err == nil {
			t.Errorf("run(%q) should fail", bad)
		}
	}
}
`,
  };
}
