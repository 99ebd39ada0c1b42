import { lookupTable } from '@codeloom/protocol';
/**
 * What the sandbox model (a deterministic template model, not AI) reads out
 * of a prompt: what kind of program to build and what it is about. Plain
 * keyword rules, so the same prompt always yields the same names.
 */
export type ProjectKind = 'api' | 'cli' | 'library';

/** One name in every spelling the generated languages need. */
export interface NameForms {
  /** blogPost */ camel: string;
  /** BlogPost */ pascal: string;
  /** blog_post */ snake: string;
  /** blog-post */ kebab: string;
  /** blogpost: Go and Java package names allow nothing else */ flat: string;
  /** blog post */ words: string;
}

export interface PromptAnalysis {
  kind: ProjectKind;
  /** The thing one record is (todo). */
  entity: NameForms;
  /** The collection (todos). */
  resource: NameForms;
  /** The record's text field: `title` for things people write, `name` for things people name. */
  field: 'title' | 'name';
  /** One line describing the project, safe inside any language's comments. */
  title: string;
}

/** Words that say what to build or how, never what it is about. */
const STOP = new Set(('a an the this that these those simple small basic tiny minimal quick rest restful api apis http https json web '
  + 'service services server app application cli tool script program library lib module package crate that which with without and or '
  + 'to in on at my our your some new crud backend frontend endpoint endpoints write create build make generate implement code for of '
  + 'using use uses typescript javascript python python3 rust go golang java node nodejs c cpp bash shell sh fastify express flask '
  + 'fastapi django it is are be will can should could would manage manages managing store stores storing list lists listing track '
  + 'tracks tracking handle handles handling from by me please function functions class file test tests tested unit '
  + 'command line terminal small-ish microservice based about database postgres postgresql sqlite mysql redis mongodb memory '
  + 'in-memory persistent storage crud-style style support supports supporting keep keeps keeping all each every many '
  + 'simple-ish little full complete working runnable skeleton project system systems platform want need needs like').split(/\s+/));

/** Record names that would clash with a keyword or a standard type in some generated language. */
const RESERVED = new Set(['class', 'string', 'object', 'type', 'list', 'map', 'set', 'error', 'test', 'main', 'new', 'default', 'import',
  'package', 'function', 'int', 'char', 'void', 'enum', 'interface', 'record', 'struct', 'self', 'super', 'this', 'return', 'var', 'let',
  'const', 'async', 'await', 'static', 'public', 'private', 'union', 'box', 'vec', 'option', 'result', 'bool', 'boolean', 'number',
  'symbol', 'date', 'time', 'server', 'store', 'request', 'response', 'handler', 'app', 'http', 'json', 'path', 'url', 'byte', 'long',
  'float', 'double', 'short', 'case', 'switch', 'match', 'loop', 'fn', 'impl', 'trait', 'mod', 'crate', 'go', 'chan', 'func', 'range',
  'select', 'defer', 'data', 'value', 'values', 'key', 'keys', 'id', 'input', 'output', 'array', 'integer',
  // The keywords and literals of every generated language (Python, TypeScript/JavaScript, Java, Go, Rust, C, C++, bash): a name
  // must be a valid identifier in all of them, so `if`, `def` or `none` get a second word ("if entry", IfEntry, if_entry).
  ...('false none true and as assert break continue def del elif else except finally for from global if in is lambda nonlocal not or '
  + 'pass raise try while with yield catch debugger delete do export extends instanceof null throw typeof undefined nan infinity '
  + 'implements protected declare namespace module abstract any readonly keyof infer never unknown asserts satisfies accessor of '
  + 'final finally goto native strictfp synchronized throws transient volatile sealed permits assert chan fallthrough nil iota rune '
  + 'uint uintptr complex append cap close copy len make panic print println real imag recover min max clear dyn extern mut pub ref '
  + 'unsafe where use become macro override priv typeof unsized virtual auto register restrict signed unsigned sizeof typedef '
  + 'inline alignas alignof asm bitand bitor compl concept consteval constexpr constinit decltype explicit friend mutable noexcept '
  + 'nullptr operator requires template typename using wchar then fi esac done until coproc ok err some system math optional '
  + 'instant thread exception object field').split(' ')]);

/** Things people write get a title; everything else a name. */
const TITLED = new Set(['todo', 'task', 'note', 'post', 'article', 'book', 'issue', 'ticket', 'event', 'story', 'entry', 'message',
  'comment', 'review', 'recipe', 'movie', 'song', 'film', 'episode', 'chapter', 'page', 'document', 'reminder', 'bookmark', 'job',
  'idea', 'question', 'answer', 'lesson', 'course', 'podcast', 'album', 'memo', 'journal', 'quote', 'snippet', 'headline', 'goal']);

const TRIGGER = /\b(?:for|of|manage|manages|managing|track|tracks|tracking|about|store|stores|storing|handle|handles|handling|list|lists|listing|crud|organize|organizing|catalog|catalogue|record|recording)\s+(?=(?:a |an |the |my |our |your |user |users' |all |some )?([a-z][a-z0-9-]*)(?:\s+([a-z][a-z0-9-]*))?)/g;

const IRREGULAR = lookupTable({
  people: 'person', children: 'child', men: 'man', women: 'woman', mice: 'mouse', geese: 'goose', statuses: 'status', buses: 'bus',
  quizzes: 'quiz', movies: 'movie', cookies: 'cookie', indices: 'index', analyses: 'analysis', criteria: 'criterion', heroes: 'hero',
  potatoes: 'potato', aliases: 'alias', zombies: 'zombie', calories: 'calorie', pies: 'pie', ties: 'tie', matrices: 'matrix',
  vertices: 'vertex', appendices: 'appendix', leaves: 'leaf', lives: 'life', knives: 'knife', wolves: 'wolf',
});
const IRREGULAR_PLURAL = lookupTable<string>(Object.fromEntries(Object.entries(IRREGULAR).map(([p, s]) => [s!, p])));

export function singular(word: string): string {
  const irregular = IRREGULAR[word];
  if (irregular) return irregular;
  if (/(ss|us|is|ics|news|series|species)$/.test(word)) return word;
  if (/[^aeiou]ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(sses|xes|ches|shes|zzes)$/.test(word)) return word.slice(0, -2);
  return word.endsWith('s') && word.length > 3 ? word.slice(0, -1) : word;
}

export function plural(word: string): string {
  const irregular = IRREGULAR_PLURAL[word];
  if (irregular) return irregular;
  if (/(news|series|species)$/.test(word)) return word;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

const clean = (word: string) => word.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 20);

/** "a todo", "an expense": for generated usage text and docs. */
export const withArticle = (words: string) => `${/^[aeiou]/.test(words) ? 'an' : 'a'} ${words}`;

export function nameForms(words: string[]): NameForms {
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return {
    camel: words.map((w, i) => (i ? cap(w) : w)).join(''),
    pascal: words.map(cap).join(''),
    snake: words.join('_'),
    kebab: words.join('-'),
    flat: words.join(''),
    words: words.join(' '),
  };
}

/** The record's words (singular), e.g. ['blog', 'post']; falls back to ['item']. */
function subjectWords(text: string): string[] {
  for (const m of text.matchAll(TRIGGER)) {
    const first = clean(m[1]!);
    if (!first || STOP.has(m[1]!) || !/^[a-z]/.test(first)) continue;
    const second = m[2] && !STOP.has(m[2]) ? clean(m[2]) : '';
    // "for parsing invoices": a verb in -ing before a noun says what to do, the noun what it is about.
    if (/ing$/.test(first) && second && /^[a-z]/.test(second)) return [singular(second)];
    // "blog posts": the first word qualifies the second; "todos tracker" keeps the plural noun.
    if (second && /^[a-z]/.test(second) && !/s$/.test(first) && !/(er|or|ing)$/.test(second)) return [first, singular(second)];
    return [singular(first)];
  }
  const words = text.split(/[^a-z0-9'-]+/).filter((w) => w.length > 2 && !STOP.has(w) && /^[a-z]/.test(w));
  const last = words.at(-1);
  return last ? [singular(clean(last))] : ['item'];
}

/** Markers like [review:changes] steer the sandbox reviewer; they are not part of what to build. */
export function stripMarkers(prompt: string): string {
  return prompt.replace(/\[review:[^\]]*\]/gi, '').trim();
}

export function analyzePrompt(prompt: string): PromptAnalysis {
  const text = stripMarkers(prompt).toLowerCase();
  const kind: ProjectKind = /\b(api|rest|restful|server|endpoints?|crud|backend|services?|microservices?|webhooks?)\b/.test(text) ? 'api'
    : /\b(cli|command[- ]line|commands?|script|tool|terminal|utility|program)\b/.test(text) ? 'cli' : 'library';
  // Names become identifiers, paths and package names in every language: only lower-case ASCII words starting with a letter.
  let words = subjectWords(text).filter((w) => /^[a-z][a-z0-9]*$/.test(w));
  if (!words.length) words = ['item'];
  if (RESERVED.has(words.join('')) || RESERVED.has(words.at(-1)!)) words = [...words, 'entry'];
  const resourceWords = [...words.slice(0, -1), plural(words.at(-1)!)];
  const field = TITLED.has(words.at(-1)!) ? 'title' : 'name';
  const title = stripMarkers(prompt).split('\n')[0]!.replace(/[^A-Za-z0-9 .,:;'!?()+#&/-]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 80)
    || `${words.join(' ')} ${kind}`;
  return { kind, entity: nameForms(words), resource: nameForms(resourceWords), field, title };
}
