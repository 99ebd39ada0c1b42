/**
 * The language catalog: the languages a generation may ask for
 * (GET /api/v1/languages), with the names people use for them, and a
 * keyword guess of the language a prompt asks for. The API serves this list
 * and the sandbox model (@codeloom/sandbox-model) answers in every language
 * on it, so both read it from here.
 */
export interface CatalogLanguage {
  id: string;
  name: string;
  /** Lower-case names that resolve to this id (the id itself included). */
  aliases: readonly string[];
}

export const LANGUAGES: readonly CatalogLanguage[] = [
  { id: 'typescript', name: 'TypeScript', aliases: ['typescript', 'ts', 'tsx', 'mts'] },
  { id: 'javascript', name: 'JavaScript', aliases: ['javascript', 'js', 'jsx', 'mjs', 'node', 'nodejs', 'ecmascript'] },
  { id: 'python', name: 'Python', aliases: ['python', 'py', 'python3'] },
  { id: 'java', name: 'Java', aliases: ['java'] },
  { id: 'go', name: 'Go', aliases: ['go', 'golang'] },
  { id: 'rust', name: 'Rust', aliases: ['rust', 'rs'] },
  { id: 'c', name: 'C', aliases: ['c', 'ansi-c', 'c11', 'c99'] },
  { id: 'cpp', name: 'C++', aliases: ['cpp', 'c++', 'cxx', 'cc', 'c++17', 'c++20'] },
  { id: 'bash', name: 'Bash', aliases: ['bash', 'sh', 'shell', 'zsh'] },
  { id: 'csharp', name: 'C#', aliases: ['csharp', 'c#', 'cs', 'dotnet'] },
  { id: 'ruby', name: 'Ruby', aliases: ['ruby', 'rb'] },
  { id: 'php', name: 'PHP', aliases: ['php'] },
  { id: 'kotlin', name: 'Kotlin', aliases: ['kotlin', 'kt'] },
  { id: 'swift', name: 'Swift', aliases: ['swift'] },
  { id: 'sql', name: 'SQL', aliases: ['sql', 'sqlite', 'postgres', 'postgresql', 'mysql'] },
  { id: 'html', name: 'HTML/CSS', aliases: ['html', 'css', 'web'] },
];

const BY_ALIAS = new Map(LANGUAGES.flatMap((l) => l.aliases.map((a) => [a, l.id] as const)));

/** The catalog id for an id or alias (case-insensitive), or undefined. */
export function resolveLanguage(idOrAlias: string): string | undefined {
  return BY_ALIAS.get(idOrAlias.trim().toLowerCase());
}

/**
 * Language names and tell-tale tools, most specific first: TypeScript
 * before JavaScript (and "node"), C++ before C, Kotlin before Java. Go and
 * C are common English words, so only their capitalised or unambiguous
 * forms count.
 */
const HINTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\btypescript\b|\bts\b|\btsx\b|\bdeno\b|\bnestjs\b/i, 'typescript'],
  [/\bpython3?\b|\bdjango\b|\bflask\b|\bfastapi\b|\bpytest\b|\bpip\b|\.py\b/i, 'python'],
  [/\brust\b|\bcargo\b|\bcrate\b|\.rs\b/i, 'rust'],
  [/\bGo\b(?!\s+(?:to|back|ahead|away|through|over|into|on|out)\b)|\bin go\b|\bgo (?:program|service|module|cli|api|server|library|package)\b/, 'go'],
  [/\bgolang\b/i, 'go'],
  [/\bkotlin\b/i, 'kotlin'],
  [/\bjava\b(?!\s*script)|\bspring boot\b|\bmaven\b|\bgradle\b|\bjunit\b/i, 'java'],
  [/\bc\+\+|\bcpp\b|\bcxx\b|\bcmake\b/i, 'cpp'],
  [/\bc#|\bcsharp\b|\.net\b|\basp\.net\b|\bdotnet\b/i, 'csharp'],
  [/\bruby\b|\brails\b/i, 'ruby'],
  [/\bphp\b|\blaravel\b/i, 'php'],
  [/\bswift\b|\bswiftui\b/i, 'swift'],
  [/\bjavascript\b|\bnode(?:\.?js)?\b|\bexpress(?:\.js)?\b|\bjs\b|\bnpm\b/i, 'javascript'],
  [/\bbash\b|\bshell script\b|\bsh script\b|\bzsh\b|\bposix shell\b/i, 'bash'],
  [/\bC\b(?![#+])|\bin c\b|\bc (?:program|library|function|code)\b|\bansi c\b|\bc99\b|\bc11\b/, 'c'],
  [/\bsql\b|\bsqlite\b|\bschema migration\b|\bddl\b/i, 'sql'],
  [/\bhtml5?\b|\bcss\b|\blanding page\b|\bweb page\b|\bwebpage\b/i, 'html'],
];

/** The language a prompt names ("a python script" → python, "Rust CLI" → rust), or undefined when it names none. */
export function inferLanguage(prompt: string): string | undefined {
  return HINTS.find(([pattern]) => pattern.test(prompt))?.[1];
}
