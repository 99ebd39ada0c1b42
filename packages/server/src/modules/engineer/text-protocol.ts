/**
 * The engineer's text protocol, for models without native tool calling (docs/agents.md "Text protocol"),
 * after mini-swe-agent: each answer holds exactly one fenced block, which is the turn's one command.
 *   ```bash            a shell command line: the `run` tool
 *   ```finish          the summary: the `finish` tool
 *   ```tool NAME       a JSON object: the arguments of any tool (write_file, edit_file, read_file, …)
 * Anything else (no block, two blocks, an unknown kind) is a format error the model is told about.
 */

export const TEXT_PROTOCOL = [
  'You cannot call tools directly. Answer with a short thought and then EXACTLY ONE fenced block, the command of this turn:',
  '- ```bash``` with a shell command line to run in the sandbox (no network), e.g. ```bash\\nnpm test\\n```',
  '- ```tool NAME``` with the tool\'s arguments as one JSON object, e.g. ```tool write_file\\n{"path": "src/a.ts", "content": "…"}\\n``` (tools: list_files, read_file, write_file, edit_file, search, run, finish)',
  '- ```finish``` with a short summary when the work is done and the tests pass.',
  'The result of the command comes back in the next message.',
].join('\n');

export type TextTurn = { name: string; arguments: string } | { error: string };

const FENCE = /^ {0,3}(`{3,}|~{3,})([^\n`]*)\n([\s\S]*?)\n {0,3}\1[ \t]*$/gm;

export function parseTextTurn(text: string): TextTurn {
  const blocks = [...text.matchAll(FENCE)].map((m) => ({ info: m[2]!.trim(), body: m[3]! }));
  if (blocks.length === 0) return { error: 'the answer holds no fenced block; each answer needs exactly one.' };
  if (blocks.length > 1) return { error: `the answer holds ${blocks.length} fenced blocks; each answer needs exactly one.` };
  const { info, body } = blocks[0]!;
  const [kind, name, ...rest] = info.split(/\s+/);
  if (kind === 'bash' || kind === 'sh' || kind === 'shell') return { name: 'run', arguments: JSON.stringify({ command: body }) };
  if (kind === 'finish') return { name: 'finish', arguments: JSON.stringify({ summary: body.trim() }) };
  if (kind === 'tool' && name && !rest.length) return { name, arguments: body.trim() || '{}' };
  return { error: `the block's info string ${JSON.stringify(info.slice(0, 60))} is not bash, finish or tool NAME.` };
}
