import { describe, expect, it } from 'vitest';
import { toolLine } from '../src/commands/run-command.js';

describe('the run view\'s tool lines', () => {
  it('shows the command while it runs, then its exit status and the output\'s last line, folded', () => {
    const call = { name: 'run', arguments: { command: 'python3 -m unittest\n-v' }, step: 4 };
    expect(toolLine(call)).toBe('[4] run python3 -m unittest -v …');
    expect(toolLine(call, { ok: false, output: '$ python3 -m unittest -v\n[exit 1]\nTraceback…\nFAILED (failures=1)\n', duration_ms: 900 })).toBe('[4] run python3 -m unittest -v → exit 1 · FAILED (failures=1)');
    expect(toolLine(call, { ok: false, output: '$ sleep 99\n[killed (time limit: 20000 ms), exit 137]\n', duration_ms: 20_000 })).toBe('[4] run python3 -m unittest -v → killed (time limit: 20000 ms), exit 137');
    expect(toolLine({ name: 'write_file', arguments: { path: 'calc.py', content: 'x' }, step: 2 }, { ok: true, output: 'Created calc.py (1 bytes).', duration_ms: 1 })).toBe('[2] write_file calc.py → ok · Created calc.py (1 bytes).');
    expect(toolLine({ name: 'finish', arguments: { summary: 'done' }, step: 7 }, { ok: true, output: 'Finished.', duration_ms: 0 })).toBe('[7] finish → ok');
    expect(toolLine({ name: 'run', arguments: { command: 'x'.repeat(200) }, step: 1 }).length).toBeLessThan(100);
  });
});
