// The import graph keeps its floors (docs/architecture.md): dependency-cruiser checks the rules in
// .dependency-cruiser.cjs over every package, and this file adds what it cannot say in a rule: no cycle
// between feature folders (modules/auth ↔ modules/oauth is a cycle even when no single file closes one).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const config = join(root, '.dependency-cruiser.cjs');
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CRUISED = ['packages/protocol/src', 'packages/sandbox-model/src', 'packages/server/src', 'packages/client/src', 'packages/cli/src'];

interface Violation { rule: { name: string }; from: string; to: string; cycle?: Array<{ name: string }> }
interface Cruise { modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }>; summary: { violations: Violation[] } }

function cruise(cwd: string, paths: string[]): Cruise {
  const r = spawnSync(process.execPath, [depcruise, '--config', config, '--output-type', 'json', ...paths], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (!r.stdout) throw new Error(`dependency-cruiser failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Cruise;
}

const describeViolation = (v: Violation) =>
  `${v.rule.name}: ${v.cycle?.length ? [v.from, ...v.cycle.map((c) => c.name)].join(' → ') : `${v.from} → ${v.to}`}`;

/** Cycles between the folders directly under packages/server/src/modules (and between top-level server folders). */
function folderCycles(result: Cruise): string[] {
  const folderOf = (path: string) => /^packages\/server\/src\/(modules\/[^/]+|[^/]+(?=\/))/.exec(path)?.[1];
  const edges = new Map<string, Set<string>>();
  for (const m of result.modules) {
    const from = folderOf(m.source);
    if (!from || /\.test\.ts$/.test(m.source)) continue;
    for (const d of m.dependencies) {
      const to = folderOf(d.resolved);
      if (to && to !== from) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
    }
  }
  const reach = (from: string) => {
    const seen = new Set<string>();
    const visit = (f: string) => { for (const t of edges.get(f) ?? []) if (!seen.has(t)) { seen.add(t); visit(t); } };
    visit(from);
    return seen;
  };
  const reachable = new Map([...edges.keys()].map((f) => [f, reach(f)] as const));
  const cycles: string[] = [];
  for (const [a, fromA] of reachable) {
    for (const b of fromA) if (a < b && reachable.get(b)?.has(a)) cycles.push(`${a} ↔ ${b}`);
  }
  return cycles.sort();
}

describe('the import graph', () => {
  const result = cruise(root, CRUISED.filter((p) => spawnSync('test', ['-d', join(root, p)]).status === 0));

  it('has no cycles and no import from a lower floor to a higher one', () => {
    expect(result.modules.length).toBeGreaterThan(200);
    expect(result.summary.violations.map(describeViolation)).toEqual([]);
  });

  it('has no cycles between feature folders', () => {
    expect(folderCycles(result)).toEqual([]);
  });
});

describe('the rules catch what they are for', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codeloom-layers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => { mkdirSync(dirname(join(dir, path)), { recursive: true }); writeFileSync(join(dir, path), text); };

  it('reports a storage file importing a feature module, a module importing the AppContext, and a cycle', () => {
    write('packages/server/src/context.ts', 'export interface AppContext { n: number }\n');
    write('packages/server/src/storage/store.ts', "import { agentName } from '../modules/agents/agent.js';\nexport const store = () => agentName;\n");
    write('packages/server/src/modules/agents/agent.ts', "import type { AppContext } from '../../context.js';\nimport { store } from '../../storage/store.js';\nexport const agentName = 'a';\nexport const use = (c: AppContext) => [c, store];\n");
    const found = cruise(dir, ['packages/server/src']).summary.violations.map(describeViolation).sort();
    expect(found.filter((v) => !v.startsWith('no-circular'))).toEqual([
      'infrastructure-floor: packages/server/src/storage/store.ts → packages/server/src/modules/agents/agent.ts',
      'modules-floor: packages/server/src/modules/agents/agent.ts → packages/server/src/context.ts',
    ]);
    expect(found.filter((v) => v.startsWith('no-circular')).length).toBeGreaterThan(0);
  });

  it('reports a cycle between two feature folders that no single file closes', () => {
    const folders = folderCycles({
      summary: { violations: [] },
      modules: [
        { source: 'packages/server/src/modules/auth/a.ts', dependencies: [{ resolved: 'packages/server/src/modules/oauth/b.ts' }] },
        { source: 'packages/server/src/modules/oauth/c.ts', dependencies: [{ resolved: 'packages/server/src/modules/auth/d.ts' }] },
      ],
    });
    expect(folders).toEqual(['modules/auth ↔ modules/oauth']);
  });
});
