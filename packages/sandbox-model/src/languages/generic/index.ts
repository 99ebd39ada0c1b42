import { lookupTable } from '@codeloom/protocol';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme } from '../../project-files.js';
import { commentText } from '../../request-text.js';

/**
 * Languages the sandbox model (a deterministic template model, not AI) has
 * no full project template for: one small, idiomatic, valid file each, and
 * for a language it does not know at all, language-neutral pseudo-code
 * rather than a guess at unfamiliar syntax.
 */
export function generateGeneric(spec: GenerationSpec): SandboxFile[] {
  const files = genericFiles(spec);
  const main = files[0]!.path;
  const run = lookupTable<string>({
    csharp: 'dotnet run', ruby: `ruby ${main} "first one"`, php: `php ${main} "first one"`, swift: `swift ${main} "first one"`,
    kotlin: `kotlinc ${main} -include-runtime -d app.jar && java -jar app.jar "first one"`, sql: `sqlite3 app.db < ${main}`, html: `open ${main}`,
  });
  return [...files, readme(spec, { run: run[spec.language] ?? `see ${main}` }, files)];
}

function genericFiles(spec: GenerationSpec): SandboxFile[] {
  const E = spec.entity.pascal;
  const f = spec.field;
  const F = f === 'title' ? 'Title' : 'Name';
  // The prompt's first line, in a comment of each language (the pseudo-code's is plain text).
  const title = commentText(spec.title);
  switch (spec.language) {
    case 'csharp':
      return [{ path: 'Program.cs', lang: 'csharp', content: `// ${title}
using System;
using System.Collections.Generic;
using System.Linq;

public record ${E}(int Id, string ${F});

public sealed class ${E}Store
{
    private readonly Dictionary<int, ${E}> _items = new();
    private int _nextId = 1;

    public ${E} Create(string ${f})
    {
        if (string.IsNullOrWhiteSpace(${f})) throw new ArgumentException("${f} must be a non-empty string", nameof(${f}));
        var item = new ${E}(_nextId++, ${f}.Trim());
        _items[item.Id] = item;
        return item;
    }

    public IReadOnlyList<${E}> All() => _items.Values.OrderBy(i => i.Id).ToList();

    public bool Remove(int id) => _items.Remove(id);
}

public static class Program
{
    public static void Main(string[] args)
    {
        var store = new ${E}Store();
        foreach (var ${f} in args) store.Create(${f});
        foreach (var item in store.All()) Console.WriteLine($"{item.Id}\\t{item.${F}}");
    }
}
` }];
    case 'ruby':
      return [{ path: `${spec.resource.snake}.rb`, lang: 'ruby', content: `# ${title}
${E} = Struct.new(:id, :${f})

# ${spec.resource.words} in memory, in insertion order.
class ${E}Store
  def initialize
    @items = {}
    @next_id = 1
  end

  def create(${f})
    raise ArgumentError, '${f} must be a non-empty string' if ${f}.to_s.strip.empty?

    item = ${E}.new(@next_id, ${f}.strip)
    @items[item.id] = item
    @next_id += 1
    item
  end

  def all
    @items.values
  end

  def remove(id)
    !@items.delete(id).nil?
  end
end

if __FILE__ == $PROGRAM_NAME
  store = ${E}Store.new
  ARGV.each { |${f}| store.create(${f}) }
  store.all.each { |item| puts "#{item.id}\\t#{item.${f}}" }
end
` }];
    case 'php':
      return [{ path: 'index.php', lang: 'php', content: `<?php
// ${title}
declare(strict_types=1);

final class ${E}Store
{
    /** @var array<int, array{id: int, ${f}: string}> */
    private array $items = [];
    private int $nextId = 1;

    /** @return array{id: int, ${f}: string} */
    public function create(string $${f}): array
    {
        if (trim($${f}) === '') {
            throw new InvalidArgumentException('${f} must be a non-empty string');
        }
        $item = ['id' => $this->nextId++, '${f}' => trim($${f})];
        $this->items[$item['id']] = $item;
        return $item;
    }

    /** @return list<array{id: int, ${f}: string}> */
    public function all(): array
    {
        return array_values($this->items);
    }
}

$store = new ${E}Store();
foreach (array_slice($argv ?? [], 1) as $${f}) {
    $store->create($${f});
}
header('Content-Type: application/json');
echo json_encode($store->all()), PHP_EOL;
` }];
    case 'kotlin':
      return [{ path: 'Main.kt', lang: 'kotlin', content: `// ${title}
data class ${E}(val id: Int, val ${f}: String)

class ${E}Store {
    private val items = linkedMapOf<Int, ${E}>()
    private var nextId = 1

    fun create(${f}: String): ${E} {
        require(${f}.isNotBlank()) { "${f} must be a non-empty string" }
        return ${E}(nextId++, ${f}.trim()).also { items[it.id] = it }
    }

    fun all(): List<${E}> = items.values.toList()

    fun remove(id: Int): Boolean = items.remove(id) != null
}

fun main(args: Array<String>) {
    val store = ${E}Store()
    args.forEach { store.create(it) }
    store.all().forEach { println("\${it.id}\\t\${it.${f}}") }
}
` }];
    case 'swift':
      return [{ path: 'main.swift', lang: 'swift', content: `// ${title}
struct ${E} {
    let id: Int
    var ${f}: String
}

final class ${E}Store {
    private(set) var items: [${E}] = []
    private var nextId = 1

    @discardableResult
    func create(_ ${f}: String) -> ${E}? {
        let trimmed = ${f}.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        let item = ${E}(id: nextId, ${f}: trimmed)
        nextId += 1
        items.append(item)
        return item
    }
}

let store = ${E}Store()
CommandLine.arguments.dropFirst().forEach { store.create($0) }
store.items.forEach { print("\\($0.id)\\t\\($0.${f})") }
` }];
    case 'sql': {
      const table = spec.resource.snake;
      return [{ path: 'schema.sql', lang: 'sql', content: `-- ${title}
CREATE TABLE IF NOT EXISTS ${table} (
  id INTEGER PRIMARY KEY,
  ${f} TEXT NOT NULL CHECK (length(trim(${f})) BETWEEN 1 AND 200),
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE INDEX IF NOT EXISTS ${table}_created_at ON ${table} (created_at);

INSERT INTO ${table} (${f}) VALUES ('first ${spec.entity.words}');

SELECT id, ${f}, created_at FROM ${table} ORDER BY created_at DESC, id DESC;
` }];
    }
    case 'html':
      return htmlFiles(spec);
    default:
      return [{ path: `${spec.resource.snake}.txt`, lang: 'text', content: `${title}
(pseudo-code: the sandbox model has no template for ${spec.language}; translate it line by line)

record ${E}: id (integer), ${f} (text, 1 to 200 characters), created_at (timestamp)

store ${E}Store:
  items: map from id to ${E}, in insertion order
  next_id: 1

  create(${f}):
    fail "${f} must be a non-empty string" when trim(${f}) is empty
    item = ${E}(next_id, trim(${f}), now()); next_id += 1
    items[item.id] = item; return item

  get(id): return items[id] or nothing
  update(id, ${f}): set items[id].${f} after the same check; nothing when absent
  remove(id): delete items[id]; true when it was there
  list(): every item, oldest first
` }];
  }
}

/** A static page; `styling` picks Tailwind (CDN), a separate stylesheet, or inline CSS. */
function htmlFiles(spec: GenerationSpec): SandboxFile[] {
  const tailwind = spec.styling.includes('tailwind');
  const separate = !tailwind && /css|scss|sass|stylesheet/.test(spec.styling);
  const heading = spec.resource.words.charAt(0).toUpperCase() + spec.resource.words.slice(1);
  const css = `body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
form { display: flex; gap: 0.5rem; }
input { flex: 1; padding: 0.4rem; }
li { padding: 0.25rem 0; }
`;
  const head = tailwind ? '  <script src="https://cdn.tailwindcss.com"></script>' : separate ? '  <link rel="stylesheet" href="styles.css">' : `  <style>\n${css.replace(/^/gm, '    ').trimEnd()}\n  </style>`;
  const cls = (tw: string) => (tailwind ? ` class="${tw}"` : '');
  const page: SandboxFile = {
    path: 'index.html', lang: 'html',
    content: `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${spec.title.replace(/[<&>"]/g, '')}</title>
${head}
</head>
<body${cls('max-w-xl mx-auto p-6 font-sans')}>
  <h1${cls('text-2xl font-bold mb-4')}>${heading}</h1>
  <form id="add"${cls('flex gap-2 mb-4')}>
    <input name="${spec.field}" required maxlength="200" placeholder="New ${spec.entity.words}"${cls('flex-1 border rounded px-2 py-1')}>
    <button${cls('bg-blue-600 text-white rounded px-3')}>Add</button>
  </form>
  <ul id="${spec.resource.kebab}"></ul>
  <script>
    const list = document.getElementById('${spec.resource.kebab}');
    document.getElementById('add').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = event.target.elements.${spec.field};
      const item = document.createElement('li');
      item.textContent = input.value.trim();
      if (item.textContent) list.append(item);
      event.target.reset();
    });
  </script>
</body>
</html>
`,
  };
  return separate ? [page, { path: 'styles.css', lang: 'css', content: css }] : [page];
}
