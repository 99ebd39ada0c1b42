// The engineer's loop (issue 27): its own CPU per step, model and command time excluded. The loop runs in
// process (packages/server/dist) with a model that answers at once from a script and a sandbox that returns
// at once with the workspace's files (as the driver reports them back), over a workspace of 200 files of
// ~4 KB: each step one tool call (read_file, edit_file, search, write_file, run with every file read back),
// then the run's changes as unified diffs. What is left is the loop: argument parsing, path checks, the
// workspace, output truncation, taking the files back, events and the diff.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './lib.mjs';

const cpuMicros = () => { const u = process.cpuUsage(); return u.user + u.system; };

export async function benchEngineer({ steps = Number(process.env.BENCH_ENGINEER_STEPS ?? 2000) } = {}) {
  const dist = (path) => import(pathToFileURL(join(root, 'packages/server/dist', path)).href);
  const { engineerLoop } = await dist('modules/engineer/engineer-loop.js');
  const { Workspace } = await dist('modules/engineer/workspace.js');
  const body = (i) => Array.from({ length: 100 }, (_, l) => `export const value${i}_${l} = ${l}; // line ${l} of file ${i}`).join('\n') + '\n';
  const files = Array.from({ length: 200 }, (_, i) => ({ path: `src/module${String(i).padStart(3, '0')}.ts`, content: body(i) }));
  const kinds = ['read', 'edit', 'search', 'write', 'run'];
  const callFor = (n) => {
    const f = files[n % files.length].path;
    switch (kinds[n % kinds.length]) {
      case 'read': return { name: 'read_file', arguments: JSON.stringify({ path: f }) };
      case 'edit': return { name: 'edit_file', arguments: JSON.stringify({ path: f, old_text: `= ${n % 100}; // line ${n % 100} `, new_text: `= ${n}; // line ${n % 100} ` }) };
      case 'search': return { name: 'search', arguments: JSON.stringify({ pattern: `value${n % 200}_7 ` }) };
      case 'write': return { name: 'write_file', arguments: JSON.stringify({ path: `src/new${n}.ts`, content: body(n) }) };
      default: return { name: 'run', arguments: JSON.stringify({ command: 'npm test' }) };
    }
  };
  const once = async (count) => {
    const ws = new Workspace(files);
    let n = 0;
    let events = 0;
    const tools = {
      workspace: ws,
      // The sandbox answers at once with what it was given (every file read back, as after a command that changed none).
      runCommand: async (_command, laidOut) => ({ exitCode: 0, output: 'ok\n'.repeat(2000), files: { files: laidOut, complete: true, skipped: [] } }),
      checksCommand: async () => 'npm test',
    };
    const started = cpuMicros();
    await engineerLoop({
      role: 'engineer', prompt: 'Task: bench', native: true, maxSteps: count + 1, signal: new AbortController().signal,
      turn: async () => (n++ < count ? { text: '', toolCalls: [{ id: `c${n}`, ...callFor(n) }] } : { text: '', toolCalls: [{ id: 'end', name: 'finish', arguments: '{"summary":"done"}' }] }),
      tools, events: { toolCall: () => { events++; }, toolResult: () => { events++; } },
    });
    const loopUs = cpuMicros() - started;
    const d0 = cpuMicros();
    const changes = ws.changes();
    const diffUs = cpuMicros() - d0;
    return { loopUs, diffUs, changes: changes.length, events };
  };
  await once(200);
  let best;
  for (let round = 0; round < 3; round++) {
    const r = await once(steps);
    if (!best || r.loopUs < best.loopUs) best = r;
  }
  const perStep = best.loopUs / (steps + 1);
  console.log(`\nengineer loop: own CPU per step over ${steps} steps (read, edit, search, write, run with 200+ files read back, in turn), best of 3; model and command time excluded`);
  console.log(`  ${perStep.toFixed(1)} µs per step on average; the run's changes (${best.changes} files) as unified diffs: ${(best.diffUs / 1000).toFixed(1)} ms; ${best.events} tool events`);
  return { perStepUs: perStep, diffMs: best.diffUs / 1000 };
}
