import type { LanguageInfo } from '@codeloom/protocol';
import type { LanguageCatalog } from './generation-service.js';

/** Languages a generation may ask for (GET /api/v1/languages), with the names people use for them. */
export const LANGUAGES: readonly LanguageInfo[] = [
  { id: 'typescript', name: 'TypeScript', aliases: ['ts', 'tsx', 'typescript'] },
  { id: 'javascript', name: 'JavaScript', aliases: ['js', 'jsx', 'node', 'nodejs', 'javascript', 'ecmascript'] },
  { id: 'python', name: 'Python', aliases: ['py', 'python3', 'python'] },
  { id: 'java', name: 'Java', aliases: ['java'] },
  { id: 'go', name: 'Go', aliases: ['golang', 'go'] },
  { id: 'rust', name: 'Rust', aliases: ['rs', 'rust'] },
  { id: 'c', name: 'C', aliases: ['c', 'ansi-c'] },
  { id: 'cpp', name: 'C++', aliases: ['c++', 'cxx', 'cc', 'cpp'] },
  { id: 'csharp', name: 'C#', aliases: ['c#', 'cs', 'dotnet', 'csharp'] },
  { id: 'ruby', name: 'Ruby', aliases: ['rb', 'ruby'] },
  { id: 'php', name: 'PHP', aliases: ['php'] },
  { id: 'kotlin', name: 'Kotlin', aliases: ['kt', 'kotlin'] },
  { id: 'swift', name: 'Swift', aliases: ['swift'] },
  { id: 'bash', name: 'Bash', aliases: ['sh', 'shell', 'zsh', 'bash'] },
  { id: 'sql', name: 'SQL', aliases: ['postgres', 'postgresql', 'sqlite', 'mysql', 'sql'] },
  { id: 'html', name: 'HTML/CSS', aliases: ['html', 'css', 'web'] },
];

const BY_NAME = new Map<string, string>();
for (const l of LANGUAGES) for (const name of [l.id, ...l.aliases]) BY_NAME.set(name.toLowerCase(), l.id);

/** Words in a prompt that name a language; order matters where one name hides inside another (TypeScript before JavaScript). */
const PROMPT_HINTS: Array<[RegExp, string]> = [
  [/\btypescript\b|\bts\b|\bdeno\b|\bnestjs\b/i, 'typescript'],
  [/\bjavascript\b|\bnode(\.?js)?\b|\bexpress\b|\bjs\b/i, 'javascript'],
  [/\bpython\b|\bdjango\b|\bflask\b|\bfastapi\b|\bpytest\b/i, 'python'],
  [/\brust\b|\bcargo\b/i, 'rust'],
  [/\bgolang\b|\bgo (program|service|module|cli|api|server)\b|\bin go\b/i, 'go'],
  [/\bkotlin\b/i, 'kotlin'],
  [/\bjava\b|\bspring\b/i, 'java'],
  [/\bc\+\+|\bcpp\b/i, 'cpp'],
  [/\bc#|\bcsharp\b|\.net\b/i, 'csharp'],
  [/\bruby\b|\brails\b/i, 'ruby'],
  [/\bphp\b|\blaravel\b/i, 'php'],
  [/\bswift\b|\bswiftui\b/i, 'swift'],
  [/\bbash\b|\bshell script\b|\bsh script\b/i, 'bash'],
  [/\bsql\b|\bschema migration\b/i, 'sql'],
  [/\bhtml\b|\bcss\b|\blanding page\b/i, 'html'],
  [/\bin c\b|\bc program\b|\bc library\b/i, 'c'],
];

export function resolveLanguage(idOrAlias: string): string | undefined {
  return BY_NAME.get(idOrAlias.trim().toLowerCase());
}

export function inferLanguage(prompt: string): string | undefined {
  return PROMPT_HINTS.find(([re]) => re.test(prompt))?.[1];
}

export const languageCatalog: LanguageCatalog = {
  list: () => [...LANGUAGES],
  resolve: resolveLanguage,
  infer: inferLanguage,
};
