// The eval's task set, written for this project: small, precisely specified functions, each with hidden
// tests the model never sees. Every problem is asked in Python and TypeScript; the integer-only ones in C
// too (40 tasks). A task's files are the model's answer plus the hidden test file, verified in the sandbox.

/** [name, description, kind, cases]; kind: the signature family; cases: [args, expected]. */
export const PROBLEMS = [
  ['gcd', 'the greatest common divisor of two non-negative integers (gcd(0, 0) is 0)', 'int2', [[[12, 18], 6], [[7, 13], 1], [[0, 5], 5], [[0, 0], 0], [[100, 75], 25]]],
  ['fib', 'the n-th Fibonacci number, with fib(0) = 0 and fib(1) = 1 (n ≤ 40)', 'int1', [[[0], 0], [[1], 1], [[2], 1], [[10], 55], [[40], 102334155]]],
  ['is_prime', '1 when n is a prime number and 0 otherwise (n may be 0, 1 or negative)', 'int1', [[[2], 1], [[1], 0], [[0], 0], [[-7], 0], [[97], 1], [[91], 0], [[7919], 1]]],
  ['digit_sum', 'the sum of the decimal digits of n (for negative n, of its absolute value)', 'int1', [[[0], 0], [[123], 6], [[-456], 15], [[1000000], 1]]],
  ['count_bits', 'the number of 1 bits in the binary form of the non-negative integer n', 'int1', [[[0], 0], [[1], 1], [[255], 8], [[1023], 10], [[1024], 1]]],
  ['collatz_steps', 'how many steps the Collatz process takes to reach 1 from n ≥ 1 (n even: n/2, odd: 3n+1; collatz_steps(1) is 0)', 'int1', [[[1], 0], [[2], 1], [[6], 8], [[27], 111]]],
  ['power_mod', 'base raised to exp, modulo mod (exp ≥ 0, mod ≥ 1, base ≥ 0; results fit in 32 bits)', 'int3', [[[2, 10, 1000], 24], [[3, 0, 7], 1], [[5, 3, 13], 8], [[7, 222, 1000], 49]]],
  ['reverse_int', 'the integer whose decimal digits are those of n reversed, keeping the sign (reverse_int(-120) is -21)', 'int1', [[[123], 321], [[-120], -21], [[0], 0], [[5], 5]]],
  ['lcm', 'the least common multiple of two positive integers', 'int2', [[[4, 6], 12], [[7, 5], 35], [[12, 12], 12], [[1, 9], 9]]],
  ['triangle_kind', '0 when sides a, b, c cannot form a triangle (including any side ≤ 0), 1 when equilateral, 2 when isosceles, 3 when scalene', 'int3', [[[3, 3, 3], 1], [[3, 3, 5], 2], [[3, 4, 5], 3], [[1, 2, 3], 0], [[0, 1, 1], 0]]],
  ['is_palindrome', 'whether the string reads the same backwards, ignoring case and every character that is not a letter or digit', 'str_bool', [[['A man, a plan, a canal: Panama'], true], [['race a car'], false], [[''], true], [['No lemon, no melon'], true]]],
  ['count_vowels', 'how many vowels (a, e, i, o, u, either case) the string has', 'str_int', [[['hello'], 2], [['AEIOU xyz'], 5], [[''], 0], [['rhythm'], 0]]],
  ['caesar', 'the string with every ASCII letter shifted forward by k places in the alphabet (wrapping, keeping case; 0 ≤ k ≤ 25), other characters unchanged', 'str_int_str', [[['abc', 1], 'bcd'], [['xyz', 3], 'abc'], [['Hello, World!', 13], 'Uryyb, Jbeyq!'], [['', 5], '']]],
  ['max_subarray', 'the largest sum of a non-empty contiguous run of the integer list', 'list_int', [[[[-2, 1, -3, 4, -1, 2, 1, -5, 4]], 6], [[[1]], 1], [[[-3, -1, -2]], -1], [[[5, 4, -1, 7, 8]], 23]]],
  ['second_largest', 'the second largest distinct value of the integer list, or null (None in Python) when there is none', 'list_opt', [[[[3, 1, 4, 1, 5]], 4], [[[7, 7]], null], [[[2]], null], [[[-1, -2, -3]], -2]]],
];

/**
 * More hidden cases per problem (each task has at least 10): the arguments below, with the expected value from a
 * reference implementation written here (deterministic; the hand-written cases above are checked against it too,
 * in packages/server/test/eval-task-sets.test.ts). Edge cases first, then larger values.
 */
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
const isPal = (s) => { const t = s.toLowerCase().replace(/[^a-z0-9]/g, ''); return t === [...t].reverse().join(''); };
export const REFERENCE = {
  gcd: [(a, b) => gcd(a, b), [[1, 1], [17, 0], [48, 180], [270, 192], [1071, 462], [13, 13], [1 << 20, 1 << 12], [999983, 999979]]],
  fib: [(n) => { let [a, b] = [0, 1]; for (let i = 0; i < n; i++) [a, b] = [b, a + b]; return a; }, [[3], [5], [7], [20], [25], [30], [35]]],
  is_prime: [(n) => { if (n < 2) return 0; for (let d = 2; d * d <= n; d++) if (n % d === 0) return 0; return 1; }, [[3], [4], [9], [25], [29], [1_000_003], [1_000_001], [104729]]],
  digit_sum: [(n) => [...String(Math.abs(n))].reduce((x, d) => x + Number(d), 0), [[9], [10], [-9], [99999], [505050], [-1], [2147483647]]],
  count_bits: [(n) => [...n.toString(2)].filter((b) => b === '1').length, [[2], [3], [7], [8], [1 << 30], [2147483647], [123456789]]],
  collatz_steps: [(n) => { let k = 0; while (n !== 1) { n = n % 2 === 0 ? n / 2 : 3 * n + 1; k++; } return k; }, [[3], [4], [7], [9], [97], [871], [1024]]],
  power_mod: [(b, e, m) => { let r = 1n, x = BigInt(b) % BigInt(m); let k = BigInt(e); const M = BigInt(m); while (k > 0n) { if (k & 1n) r = (r * x) % M; x = (x * x) % M; k >>= 1n; } return Number(r % M); },
    [[2, 0, 1], [10, 9, 7], [123, 456, 789], [2, 31, 1000000007], [0, 5, 3], [0, 0, 5], [65536, 65536, 65521]]],
  reverse_int: [(n) => Math.sign(n) * Number([...String(Math.abs(n))].reverse().join('')) || 0, [[10], [-5], [1200], [-987654321], [100001], [7007]]],
  lcm: [(a, b) => (a / gcd(a, b)) * b, [[1, 1], [2, 3], [21, 6], [13, 17], [100, 40], [65536, 3]]],
  triangle_kind: [(a, b, c) => { if (a <= 0 || b <= 0 || c <= 0 || a + b <= c || a + c <= b || b + c <= a) return 0; if (a === b && b === c) return 1; if (a === b || b === c || a === c) return 2; return 3; },
    [[5, 3, 3], [3, 5, 3], [2, 3, 4], [1, 1, 2], [-1, 2, 2], [10, 1, 1], [7, 7, 7]]],
  is_palindrome: [isPal, [['a'], ['ab'], ['Aa'], ['0P'], ['12321'], ['Was it a car or a cat I saw?'], ['.,!'], ['abca']]],
  count_vowels: [(s) => [...s].filter((c) => 'aeiouAEIOU'.includes(c)).length, [['a'], ['bcd'], ['Queue'], ['UPPER lower'], ['y'], ['aaaaaaaaaa'], ['The quick brown fox']]],
  caesar: [(s, k) => s.replace(/[a-z]/gi, (ch) => { const base = ch <= 'Z' ? 65 : 97; return String.fromCharCode(((ch.charCodeAt(0) - base + k) % 26) + base); }),
    [['abc', 0], ['z', 1], ['Zz', 25], ['123 !?', 7], ['The End.', 2], ['abcdefghijklmnopqrstuvwxyz', 13]]],
  max_subarray: [(xs) => { let best = xs[0], cur = 0; for (const x of xs) { cur = Math.max(x, cur + x); best = Math.max(best, cur); } return best; },
    [[[0]], [[-5]], [[1, 2, 3]], [[2, -1, 2]], [[-1, 3, -1]], [[4, -10, 4]], [[-2, -3, 4, -1, -2, 1, 5, -3]]]],
  second_largest: [(xs) => { const d = [...new Set(xs)].sort((a, b) => b - a); return d.length > 1 ? d[1] : null; },
    [[[]], [[1, 2]], [[2, 1]], [[5, 5, 4]], [[0, 0, 0]], [[10, 9, 10, 9]], [[-5, 0]]]],
};
for (const p of PROBLEMS) {
  const [fn, extra] = REFERENCE[p[0]];
  p[3] = [...p[3], ...extra.map((args) => [args, fn(...args)])];
}

const C_KINDS = new Set(['int1', 'int2', 'int3']);
const camel = (s) => s.replace(/_(\w)/g, (_, c) => c.toUpperCase());
const py = (v) => (v === null ? 'None' : v === true ? 'True' : v === false ? 'False' : JSON.stringify(v));

const SIG = {
  python: { int1: 'n: int) -> int', int2: 'a: int, b: int) -> int', int3: 'a: int, b: int, c: int) -> int', str_bool: 's: str) -> bool', str_int: 's: str) -> int', str_int_str: 's: str, k: int) -> str', list_int: 'xs: list[int]) -> int', list_opt: 'xs: list[int]) -> int | None' },
  typescript: { int1: 'n: number): number', int2: 'a: number, b: number): number', int3: 'a: number, b: number, c: number): number', str_bool: 's: string): boolean', str_int: 's: string): number', str_int_str: 's: string, k: number): string', list_int: 'xs: number[]): number', list_opt: 'xs: number[]): number | null' },
  c: { int1: 'long long n)', int2: 'long long a, long long b)', int3: 'long long a, long long b, long long c)' },
};

function pythonTask(name, desc, kind, cases) {
  const sig = `def ${name}(${SIG.python[kind]}`;
  const body = cases.map(([args, want], i) => `def test_${name}_${i}():\n    assert ${name}(${args.map(py).join(', ')}) == ${py(want)}\n`).join('\n\n');
  return {
    id: `python/${name}`, language: 'python',
    prompt: `Write a Python module solution.py with a function \`${sig}\` that returns ${desc}. Only the standard library; no input or output.`,
    hidden: [{ path: 'tests/test_hidden.py', content: `import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\nfrom solution import ${name}\n\n\n${body}` }],
  };
}

function typescriptTask(name, desc, kind, cases) {
  const fn = camel(name);
  const body = cases.map(([args, want], i) => `test('${fn} #${i}', () => { assert.deepStrictEqual(${fn}(${args.map((a) => JSON.stringify(a)).join(', ')}), ${JSON.stringify(want)}); });`).join('\n');
  return {
    id: `typescript/${name}`, language: 'typescript',
    prompt: `Write a TypeScript module solution.ts that exports a function \`${fn}(${SIG.typescript[kind]}\` returning ${desc}. No dependencies; no input or output.`,
    hidden: [{ path: 'solution.test.ts', content: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${fn} } from './solution.js';\n\n${body}\n` }],
  };
}

function cTask(name, desc, kind, cases) {
  const proto = `long long ${name}(${SIG.c[kind]}`;
  const body = cases.map(([args, want]) => `  CHECK(${name}(${args.join(', ')}) == ${want}LL);`).join('\n');
  return {
    id: `c/${name}`, language: 'c',
    prompt: `Write a C11 file solution.c defining \`${proto}\` that returns ${desc}. No main function, no input or output, only the standard library.`,
    hidden: [{ path: 'tests/test_hidden.c', content: `#include <stdio.h>\n${proto};\nstatic int failed = 0;\n#define CHECK(e) do { if (!(e)) { printf("FAILED: %s\\n", #e); failed++; } } while (0)\nint main(void) {\n${body}\n  return failed ? 1 : 0;\n}\n` }],
  };
}

export const TASKS = [
  ...PROBLEMS.map((p) => pythonTask(...p)),
  ...PROBLEMS.map((p) => typescriptTask(...p)),
  ...PROBLEMS.filter((p) => C_KINDS.has(p[2])).map((p) => cTask(...p)),
];
