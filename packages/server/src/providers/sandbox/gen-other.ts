import { capitalize } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';

/** Bash and the languages without a full template: one small, valid file each. */
export function generateBash(spec: GenerationSpec): SandboxFile[] {
  const { resource } = spec.analysis;
  const files: SandboxFile[] = [{
    path: `${resource}.sh`, lang: 'bash',
    content: `#!/usr/bin/env bash\n# ${spec.analysis.title}\nset -euo pipefail\n\nSTORE="\${${resource.toUpperCase()}_FILE:-./${resource}.txt}"\n\nadd() {\n  printf '%s\\n' "$*" >> "$STORE"\n}\n\nlist() {\n  [ -f "$STORE" ] && nl -ba "$STORE" || true\n}\n\nmain() {\n  case "\${1:-list}" in\n    add) shift; add "$@" ;;\n    list) list ;;\n    *) echo "usage: $0 add <title> | list" >&2; return 2 ;;\n  esac\n}\n\nif [ "\${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi\n`,
  }];
  if (spec.includeTests) files.push({ path: `test_${resource}.sh`, lang: 'bash', content: `#!/usr/bin/env bash\nset -euo pipefail\ncd "$(dirname "$0")"\nexport ${resource.toUpperCase()}_FILE="$(mktemp)"\nsource ./${resource}.sh\nadd "first"\nadd "second"\n[ "$(list | wc -l)" -eq 2 ] || { echo "expected 2 lines"; exit 1; }\necho "all tests passed"\n` });
  return files;
}

export function generateSingleFile(spec: GenerationSpec): SandboxFile[] {
  const { resource, entity, title } = spec.analysis;
  const E = capitalize(entity);
  switch (spec.language) {
    case 'csharp':
      return [{ path: 'Program.cs', lang: 'csharp', content: `using System;\nusing System.Collections.Generic;\n\n// ${title}\npublic record ${E}(int Id, string Title);\n\npublic static class Program\n{\n    public static void Main(string[] args)\n    {\n        var items = new List<${E}>();\n        foreach (var title in args) items.Add(new ${E}(items.Count + 1, title));\n        foreach (var item in items) Console.WriteLine($"{item.Id}\\t{item.Title}");\n    }\n}\n` }];
    case 'ruby':
      return [{ path: `${resource}.rb`, lang: 'ruby', content: `# ${title}\n${E} = Struct.new(:id, :title)\n\nclass ${E}Store\n  def initialize\n    @items = {}\n    @next_id = 1\n  end\n\n  def create(title)\n    item = ${E}.new(@next_id, title)\n    @items[item.id] = item\n    @next_id += 1\n    item\n  end\n\n  def all\n    @items.values\n  end\nend\n\nif __FILE__ == $PROGRAM_NAME\n  store = ${E}Store.new\n  ARGV.each { |t| store.create(t) }\n  store.all.each { |i| puts "#{i.id}\\t#{i.title}" }\nend\n` }];
    case 'php':
      return [{ path: 'index.php', lang: 'php', content: `<?php\n// ${title}\ndeclare(strict_types=1);\n\nfinal class ${E}Store\n{\n    private array $items = [];\n    private int $nextId = 1;\n\n    public function create(string $title): array\n    {\n        $item = ['id' => $this->nextId++, 'title' => $title];\n        $this->items[$item['id']] = $item;\n        return $item;\n    }\n\n    public function all(): array\n    {\n        return array_values($this->items);\n    }\n}\n\nheader('Content-Type: application/json');\necho json_encode((new ${E}Store())->all());\n` }];
    case 'kotlin':
      return [{ path: 'Main.kt', lang: 'kotlin', content: `// ${title}\ndata class ${E}(val id: Int, val title: String)\n\nclass ${E}Store {\n    private val items = linkedMapOf<Int, ${E}>()\n    private var nextId = 1\n\n    fun create(title: String): ${E} = ${E}(nextId++, title).also { items[it.id] = it }\n    fun all(): List<${E}> = items.values.toList()\n}\n\nfun main(args: Array<String>) {\n    val store = ${E}Store()\n    args.forEach { store.create(it) }\n    store.all().forEach { println("\${it.id}\\t\${it.title}") }\n}\n` }];
    case 'swift':
      return [{ path: 'main.swift', lang: 'swift', content: `// ${title}\nstruct ${E} {\n    let id: Int\n    var title: String\n}\n\nfinal class ${E}Store {\n    private(set) var items: [${E}] = []\n\n    @discardableResult\n    func create(_ title: String) -> ${E} {\n        let item = ${E}(id: items.count + 1, title: title)\n        items.append(item)\n        return item\n    }\n}\n\nlet store = ${E}Store()\nCommandLine.arguments.dropFirst().forEach { store.create($0) }\nstore.items.forEach { print("\\($0.id)\\t\\($0.title)") }\n` }];
    case 'sql':
      return [{ path: 'schema.sql', lang: 'sql', content: `-- ${title}\nCREATE TABLE ${resource} (\n  id INTEGER PRIMARY KEY,\n  title TEXT NOT NULL,\n  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP\n);\n\nCREATE INDEX ${resource}_created_at ON ${resource} (created_at);\n\nINSERT INTO ${resource} (title) VALUES ('first ${entity}');\nSELECT id, title, created_at FROM ${resource} ORDER BY created_at DESC;\n` }];
    default:
      return [{ path: 'index.html', lang: 'html', content: `<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <title>${title.replace(/[<&>"]/g, '')}</title>\n  <style>body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; }</style>\n</head>\n<body>\n  <h1>${capitalize(resource)}</h1>\n  <form id="add"><label>Title <input name="title" required></label> <button>Add</button></form>\n  <ul id="${resource}"></ul>\n  <script>\n    document.getElementById('add').addEventListener('submit', (event) => {\n      event.preventDefault();\n      const li = document.createElement('li');\n      li.textContent = event.target.title.value;\n      document.getElementById('${resource}').append(li);\n      event.target.reset();\n    });\n  </script>\n</body>\n</html>\n` }];
  }
}
