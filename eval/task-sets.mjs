// Task sets in the JSON Lines formats of HumanEval (Chen et al., 2021) and MBPP (Austin et al., 2021), read from a
// path (`npm run eval -- --tasks file.jsonl`). None ships with the project; docs/verification.md ("Bring a task
// set") says which fields are read and how each kind is tested. Every task of these sets is Python.
//
// HumanEval line: {task_id, prompt, entry_point, test, canonical_solution?}. The model gets the prompt (a function
//   signature and docstring) and writes solution.py; the hidden test file imports everything from solution.py,
//   then runs the task's `test` (which defines `check(candidate)`) and calls `check(<entry_point>)` in one pytest test.
// MBPP line: {task_id, text, test_list, test_setup_code?, code?} (the sanitized set's `prompt` and `test_imports`
//   are read as `text` and setup lines). The model gets `text`, the name of the function (from the first
//   `assert name(` of test_list) and the first test as an example; the hidden test file runs test_imports and
//   test_setup_code, then each assert of test_list as its own pytest test.
// `canonical_solution` / `code` are read only with --reference (the set's own solutions, to check a set).
// Other fields (HumanEval's `declaration`, MBPP's `challenge_test_list`, …) are ignored.

const HEADER = 'import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n';
const PY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function fieldProblems(obj, fields) {
  const problems = [];
  for (const [name, kind] of fields) {
    const v = obj[name];
    if (v === undefined) problems.push(`missing "${name}"`);
    else if (kind === 'string' && typeof v !== 'string') problems.push(`"${name}" must be a string`);
    else if (kind === 'id' && typeof v !== 'string' && typeof v !== 'number') problems.push(`"${name}" must be a string or a number`);
    else if (kind === 'strings' && (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string'))) problems.push(`"${name}" must be a non-empty array of strings`);
  }
  return problems;
}

function humanEvalTask(o) {
  if (!PY_NAME.test(o.entry_point)) throw new Error(`"entry_point" is not a Python name: ${JSON.stringify(o.entry_point).slice(0, 60)}`);
  const test = `${HEADER}from solution import *  # noqa: F401,F403\nfrom solution import ${o.entry_point}\n\n${o.test}\n\n\ndef test_check():\n    check(${o.entry_point})\n`;
  return {
    id: String(o.task_id), language: 'python', format: 'humaneval',
    prompt: `Write a Python module solution.py that implements the function \`${o.entry_point}\` below, complete, with the imports it needs. Only the standard library; no input or output.\n\n\`\`\`python\n${o.prompt}\`\`\``,
    hidden: [{ path: 'tests/test_hidden.py', content: test }],
    ...(typeof o.canonical_solution === 'string' ? { reference: [{ path: 'solution.py', content: `${o.prompt}${o.canonical_solution}` }] } : {}),
  };
}

function mbppTask(o) {
  const name = o.test_list.map((t) => /^\s*assert\s+(?:not\s+)?\(?\s*(?:set\(|math\.isclose\()?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(t)?.[1]).find((n) => n && !['set', 'math', 'abs', 'round', 'sorted', 'len', 'list', 'tuple', 'str', 'int', 'float'].includes(n));
  if (!name) throw new Error('no function name found in "test_list" (expected an `assert name(...)`)');
  const setup = [...(o.test_imports ?? []), ...(typeof o.test_setup_code === 'string' && o.test_setup_code.trim() ? [o.test_setup_code] : [])].map((x) => `${x}\n`).join('');
  const text = typeof o.text === 'string' ? o.text : o.prompt;
  const tests = o.test_list.map((t, i) => `def test_${i}():\n    ${t.trim()}\n`).join('\n\n');
  return {
    id: String(o.task_id), language: 'python', format: 'mbpp',
    prompt: `Write a Python module solution.py with a function \`${name}\` that solves this task: ${text.trim()}\nIt must pass tests such as:\n${o.test_list[0].trim()}\nOnly the standard library; no input or output.`,
    hidden: [{ path: 'tests/test_hidden.py', content: `${HEADER}import math  # noqa: F401\nfrom solution import *  # noqa: F401,F403\n\n${setup}\n${tests}` }],
    ...(typeof o.code === 'string' ? { reference: [{ path: 'solution.py', content: `${o.code}\n` }] } : {}),
  };
}

/**
 * Parses a task set (the text of a .jsonl file). Each non-blank line is one task, HumanEval or MBPP by its fields
 * (the two can be mixed). Every bad line is reported with its line number: the result has `tasks` and `errors`
 * (`line N: why`); task ids must be unique.
 */
export function parseTaskSet(text, source = 'tasks') {
  const tasks = [];
  const errors = [];
  const seen = new Map();
  text.split(/\r?\n/).forEach((line, i) => {
    const n = i + 1;
    if (!line.trim()) return;
    let o;
    try { o = JSON.parse(line); } catch (e) { errors.push(`${source}:${n}: not JSON (${e.message})`); return; }
    if (!o || typeof o !== 'object' || Array.isArray(o)) { errors.push(`${source}:${n}: not a JSON object`); return; }
    const isMbpp = 'test_list' in o || 'text' in o;
    const isHumanEval = !isMbpp && ('entry_point' in o || 'prompt' in o || 'test' in o);
    if (!isHumanEval && !isMbpp) { errors.push(`${source}:${n}: neither HumanEval (task_id, prompt, entry_point, test) nor MBPP (task_id, text, test_list)`); return; }
    const problems = isHumanEval
      ? fieldProblems(o, [['task_id', 'id'], ['prompt', 'string'], ['entry_point', 'string'], ['test', 'string']])
      : fieldProblems(o, [['task_id', 'id'], [typeof o.text === 'string' || o.prompt === undefined ? 'text' : 'prompt', 'string'], ['test_list', 'strings']]);
    if (!isHumanEval && o.test_imports !== undefined && (!Array.isArray(o.test_imports) || o.test_imports.some((x) => typeof x !== 'string'))) problems.push('"test_imports" must be an array of strings');
    if (problems.length) { errors.push(`${source}:${n}: ${isHumanEval ? 'HumanEval' : 'MBPP'} task: ${problems.join(', ')}`); return; }
    let task;
    try { task = isHumanEval ? humanEvalTask(o) : mbppTask(o); } catch (e) { errors.push(`${source}:${n}: ${e.message}`); return; }
    if (seen.has(task.id)) { errors.push(`${source}:${n}: task_id ${JSON.stringify(task.id)} already on line ${seen.get(task.id)}`); return; }
    seen.set(task.id, n);
    tasks.push({ ...task, line: n });
  });
  return { tasks, errors };
}

/** Reads a task set from a file; throws with every bad line listed when there is one, or when it holds no task. */
export async function readTaskSet(path) {
  const { readFile } = await import('node:fs/promises');
  const { tasks, errors } = parseTaskSet(await readFile(path, 'utf8'), path);
  if (errors.length) throw new Error(`${errors.length} bad line(s) in ${path}:\n${errors.slice(0, 50).join('\n')}${errors.length > 50 ? `\n… and ${errors.length - 50} more` : ''}`);
  if (!tasks.length) throw new Error(`${path} holds no task (one JSON object per line).`);
  return tasks;
}
