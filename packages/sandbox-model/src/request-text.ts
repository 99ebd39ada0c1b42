import { lookupTable } from '@codeloom/protocol';

/**
 * How text from a request (the prompt, `context` values, a run's
 * requirements, the language hint, earlier step outputs) may reach what the
 * sandbox model writes. Generated code is built and run by the verification
 * sandbox, so no request text may ever become code:
 *
 * - a value that selects behaviour is validated against what the model knows
 *   (`knownDatabase`), or reduced to a harmless label (`label`: framework,
 *   styling, an unknown language's name) that only prose and README text echo;
 * - free text echoed into a comment goes through `commentText` (nothing that
 *   ends or extends a comment in any generated language), into a string
 *   literal through `literal[<target>]` (escaped for exactly that syntax),
 *   into prose outside the fenced files through `proseLine` (one line, so it
 *   can never open a fence of its own);
 * - names in identifiers, paths and manifests come from `analyzePrompt`,
 *   which only ever yields words of `[a-z][a-z0-9]*` that are no keyword.
 */

/**
 * Databases the model understands, as people write them (lower case). The
 * spelling is kept in what the model writes, so "postgres" and "postgresql"
 * both stay as given; anything else counts as no database (in memory).
 */
const DATABASES = lookupTable<true>(Object.fromEntries([
  'sqlite', 'sqlite3', 'libsql', 'turso', 'duckdb', 'h2', 'postgres', 'postgresql', 'pg', 'pgsql', 'cockroachdb', 'cockroach', 'timescaledb',
  'supabase', 'mysql', 'mariadb', 'mssql', 'sqlserver', 'sql server', 'oracle', 'db2', 'mongodb', 'mongo', 'redis', 'valkey',
  'dynamodb', 'cassandra', 'scylladb', 'couchdb', 'couchbase', 'neo4j', 'elasticsearch', 'opensearch', 'firestore', 'firebase',
  'clickhouse', 'influxdb', 'leveldb', 'rocksdb', 'lmdb',
].map((name) => [name, true as const])));

/** Values that mean "no database" (or no framework, no styling). */
export const NONE = new Set(['', 'none', 'no', 'false', 'memory', 'in-memory', 'plain', 'vanilla', 'stdlib', 'standard']);

/**
 * context.database (or a run's requirements.database) as the model uses it:
 * one of the known databases, lower-cased, optionally with a version
 * ("postgres 16"); '' for none and for anything the model does not know.
 */
export function knownDatabase(value: unknown): string {
  if (typeof value !== 'string') return '';
  const v = value.trim().toLowerCase().replace(/[ \t]+/g, ' ');
  if (NONE.has(v)) return '';
  const m = /^(.*?)(?:[ -]?v?\d{1,4}(?:\.\d{1,4}){0,2})?$/.exec(v);
  return DATABASES[v] || (m && DATABASES[m[1]!]) ? v : '';
}

/**
 * A context value reduced to a label (framework, styling, an unknown
 * language's name): lower case letters, digits, spaces and `. + # _ -`,
 * anything else a space, at most 40 characters. Only prose and README text
 * echo it; the model's behaviour depends on the words in it ("fastify").
 */
export function label(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value.toLowerCase().replace(/[^a-z0-9 .+#_-]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 40).trim();
}

/** Text echoed in prose (outside any fenced file): one line, no control characters, no line or paragraph separators. */
export function proseLine(text: string, max = 500): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').replace(/ {2,}/g, ' ').trim().slice(0, max);
}

/**
 * Text safe inside every comment the generated languages have: `//`, `#`,
 * `--`, block and doc comments, Python docstrings, Rust doc comments
 * (Markdown, whose code blocks rustdoc runs). Letters, digits, spaces and
 * `. , : ; ' ! ? ( ) + # & / _ -` only: no line break of any kind, no `*`
 * (so no comment end), no backslash (no Java `\u000a`, no C line
 * continuation), no quote or backtick; `??` is split (C trigraphs) and
 * spaces collapse (no indented code block in Markdown).
 */
export function commentText(text: string, max = 200): string {
  return text.replace(/[^A-Za-z0-9 .,:;'!?()+#&/_-]+/g, ' ').replace(/\?(?=\?)/g, '? ').replace(/ {2,}/g, ' ').trim().slice(0, max).trim();
}

/** Lone surrogates become U+FFFD: Go, Rust, C, C++ and TOML have no way to write one. */
export function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
const octal = (n: number) => `\\${n.toString(8).padStart(3, '0')}`;
const printable = (code: number) => code >= 0x20 && code <= 0x7e;
const COMMON = lookupTable<string>({ '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' });

/** A double-quoted literal: printable ASCII stays (but for `"` and `\`), every other code point goes through `other`. */
function quoted(text: string, other: (code: number, ch: string) => string, extra: Readonly<Partial<Record<string, string>>> = {}): string {
  let out = '"';
  for (const ch of wellFormed(text)) {
    const code = ch.codePointAt(0)!;
    out += extra[ch] ?? COMMON[ch] ?? (printable(code) ? ch : other(code, ch));
  }
  return `${out}"`;
}

const utf16 = (ch: string) => [...Array(ch.length).keys()].map((i) => `\\u${hex(ch.charCodeAt(i), 4)}`).join('');
const UTF8 = new TextEncoder();
const utf8Octal = (ch: string) => [...UTF8.encode(ch)].map(octal).join('');

/**
 * String literals for each target, ASCII only, holding exactly the given
 * text (lone surrogates as U+FFFD; bash drops NUL, which its strings cannot
 * hold). Printable ASCII is written as it is, so ordinary text reads the same.
 */
export const literal = {
  python: (s: string) => quoted(s, (c) => (c < 0x100 ? `\\x${hex(c, 2)}` : c < 0x10000 ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`)),
  javascript: (s: string) => quoted(s, (c) => (c < 0x10000 ? `\\u${hex(c, 4)}` : `\\u{${hex(c, 1)}}`)),
  typescript: (s: string) => literal.javascript(s),
  json: (s: string) => quoted(s, (_c, ch) => utf16(ch), { '\b': '\\b', '\f': '\\f' }),
  toml: (s: string) => quoted(s, (c) => (c < 0x10000 ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`)),
  /** Java turns \uXXXX into its character before it reads the code, so line breaks, `"` and `\` never use that form. */
  java: (s: string) => quoted(s, (c, ch) => (c < 0x80 ? octal(c) : utf16(ch))),
  go: (s: string) => quoted(s, (c) => (c < 0x80 ? `\\x${hex(c, 2)}` : c < 0x10000 ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`)),
  rust: (s: string) => quoted(s, (c) => `\\u{${hex(c, 1)}}`),
  /** `?` escaped too: `??/` is a trigraph (a backslash) in C11. Octal escapes, never hex: `\x` would swallow the digits after it. */
  c: (s: string) => quoted(s, (_c, ch) => utf8Octal(ch), { '?': '\\?' }),
  cpp: (s: string) => literal.c(s),
  /** Bash's $'…' quoting: `\xHH` for every byte that is not printable ASCII. */
  bash: (s: string) => {
    let out = "$'";
    for (const ch of wellFormed(s).replace(/\0/g, '')) {
      const code = ch.codePointAt(0)!;
      out += ch === "'" ? "\\'" : ch === '\\' ? '\\\\' : printable(code) ? ch : [...UTF8.encode(ch)].map((b) => `\\x${hex(b, 2)}`).join('');
    }
    return `${out}'`;
  },
} as const;

export type LiteralTarget = keyof typeof literal;
