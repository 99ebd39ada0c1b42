import type { GeneratedFile, RunStep } from '@codeloom/protocol';
import type { Store } from '../../storage/store.js';
import type { VerificationService } from '../verify/verification-service.js';
import { quote, recipeFor } from '../verify/recipes.js';
import { COLLECT_LIMITS, type ToolContext } from '../engineer/engineer-tools.js';
import { headAndTail, Workspace, type FileChange } from '../engineer/workspace.js';
import type { EngineerOutcome } from '../engineer/engineer-loop.js';

/** Default wall time of one engineer step, in seconds (config.max_wall_seconds). */
export const DEFAULT_ENGINEER_WALL_SECONDS = 1_800;

/** A project's files, all of them (the engineer's starting workspace). */
export async function projectFiles(store: Store, projectId: string | null): Promise<GeneratedFile[]> {
  if (!projectId) return [];
  const out: GeneratedFile[] = [];
  for (let page = 1; ; page++) {
    const { rows, total } = await store.projects.listFiles(projectId, page, 100);
    for (const r of rows) {
      const file = await store.projects.getFile(projectId, r.path);
      if (file) out.push({ path: file.path, content: file.content });
    }
    if (!rows.length || page * 100 >= total) return out;
  }
}

/**
 * What an engineer step starts from: the last engineer step's whole workspace when there is one, else the
 * project's files with the earlier steps' files over them.
 */
export function engineerSeed(project: GeneratedFile[], earlier: RunStep[], collected: GeneratedFile[]): GeneratedFile[] {
  const last = [...earlier].reverse().find((s) => s.agent === 'engineer' && s.status === 'succeeded');
  if (last) return last.files ?? [];
  const byPath = new Map(project.map((f) => [f.path, f]));
  for (const f of collected) byPath.set(f.path, f);
  return [...byPath.values()];
}

/** The tools' link to the verification sandbox: each `run` lays the workspace out in a fresh sandbox and reads it back. */
export function sandboxTools(workspace: Workspace, verifier: VerificationService | undefined, org: string, language: string, signal: AbortSignal): ToolContext {
  return {
    workspace,
    async runCommand(command, files) {
      if (!verifier) return { exitCode: null, output: '', unavailable: 'verification is not configured on this server' };
      const r = await verifier.runCommand(org, files, command, { signal, collect: COLLECT_LIMITS });
      if ('unavailable' in r) return { exitCode: null, output: '', unavailable: r.unavailable };
      return { exitCode: r.check.exit_code, output: r.check.output, killed: r.check.killed, files: r.collected };
    },
    async checksCommand(files) {
      if (!verifier) return { unavailable: 'verification is not configured on this server' };
      const recipe = recipeFor(language, files, await verifier.toolchains());
      if ('unsupported' in recipe) return { unavailable: recipe.unsupported };
      return recipe.checks.map((c) => (c.shell ? c.argv.join(' ') : c.argv.map(quote).join(' '))).join(' && ');
    },
  };
}

const DIFF_SHOWN = 16_000;

/** The step's output: the summary, the changes with their diffs (bounded) and the last test run: what a reviewer after it reads. */
export function engineerOutput(outcome: EngineerOutcome, changes: FileChange[]): string {
  const lines = [outcome.summary.trim() || 'The engineer finished without a summary.', '', `Steps: ${outcome.steps}.`];
  if (changes.length) {
    lines.push('', `## Changes (${changes.length} file${changes.length === 1 ? '' : 's'})`, ...changes.map((c) => `- ${c.status} ${c.path}`));
    lines.push('', '```diff', headAndTail(changes.map((c) => c.diff).join(''), DIFF_SHOWN).replace(/```/g, '`\u200b``'), '```');
  } else {
    lines.push('', 'No files changed.');
  }
  if (outcome.lastRun) {
    const r = outcome.lastRun;
    lines.push('', `## Last run: \`${r.command.length > 200 ? `${r.command.slice(0, 200)}…` : r.command}\` (exit ${r.exit_code})`, '```text', r.output.replace(/```/g, '`\u200b``'), '```');
  } else {
    lines.push('', 'No command was run.');
  }
  return lines.join('\n');
}
