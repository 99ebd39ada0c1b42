/**
 * The sandbox model's contract as a provider (deterministic, streams that
 * add up, honest usage, truncation, cancellation) and the shape of what it
 * writes: names from the prompt, framework idioms, tests on request, and
 * each workflow agent type's own form. Whether the code builds is checked
 * with the real toolchains in sandbox-toolchains.test.ts.
 */
import type { GeneratedFile } from '@codeloom/protocol';
import { describe, expect, it } from 'vitest';
import { parseFencedFiles } from '../../modules/generate/parse-fenced-files.js';
import { ProviderError, CancelledError } from '../../errors.js';
import type { ModelCallOptions, StreamPart } from '../provider.js';
import { createSandboxProvider } from './sandbox-provider.js';

const provider = createSandboxProvider();

type Hints = NonNullable<ModelCallOptions['hints']>;
const call = (prompt: string, hints: Hints = {}, extra: Partial<ModelCallOptions> = {}): ModelCallOptions =>
  ({ model: 'sandbox', messages: [{ role: 'system', content: 'You are Codeloom.' }, { role: 'user', content: prompt }], hints, ...extra });

async function text(prompt: string, hints: Hints = {}): Promise<string> {
  return (await provider.generate(call(prompt, hints))).text;
}

async function files(prompt: string, language: string, context: Hints['context'] = {}, agentType?: string): Promise<GeneratedFile[]> {
  return parseFencedFiles(await text(prompt, { language, context, ...(agentType ? { agentType } : {}) }), language);
}

async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const p of stream) parts.push(p);
  return parts;
}

const paths = (fs: GeneratedFile[]) => fs.map((f) => f.path);
const content = (fs: GeneratedFile[]) => fs.map((f) => f.content).join('\n');
const TEST_PATH = /(^|\/)(tests?|__tests__|spec)\/|[._-](test|spec)\.[a-z]+$|(^|\/)test_[^/]+$|Test\.java$/;
/** A test file, or a module carrying its own unit tests (Rust's #[cfg(test)]). */
const isTestish = (f: GeneratedFile) => TEST_PATH.test(f.path) || /#\[cfg\(test\)\]/.test(f.content);

const LANGUAGES = ['typescript', 'javascript', 'python', 'java', 'go', 'rust', 'c', 'cpp', 'bash'];

describe('the sandbox provider', () => {
  it('is named sandbox', () => {
    expect(provider.name).toBe('sandbox');
  });

  it('is deterministic: the same input gives byte-identical output, in every language and agent type', async () => {
    for (const language of LANGUAGES) {
      for (const agentType of [undefined, 'planner', 'architect', 'coder', 'reviewer', 'tester', 'documenter']) {
        const hints: Hints = { language, context: { framework: 'fastify', includeTests: true }, ...(agentType ? { agentType } : {}) };
        const a = await provider.generate(call('REST API for todos', hints));
        const b = await provider.generate(call('REST API for todos', hints));
        expect(b, `${language} ${agentType ?? ''}`).toEqual(a);
      }
    }
  });

  it('answers differently when the prompt or the hints differ', async () => {
    const base = await text('REST API for todos', { language: 'typescript' });
    expect(await text('REST API for notes', { language: 'typescript' })).not.toBe(base);
    expect(await text('REST API for todos', { language: 'python' })).not.toBe(base);
    expect(await text('REST API for todos', { language: 'typescript', context: { includeTests: true } })).not.toBe(base);
  });

  it('streams pieces that concatenate to exactly what generate() returns, then one finish part', async () => {
    for (const language of ['typescript', 'python', 'rust']) {
      const options = call('CLI to track expenses', { language, context: { includeTests: true } });
      const parts = await collect(provider.stream(options));
      const whole = await provider.generate(options);
      const texts = parts.filter((p): p is Extract<StreamPart, { type: 'text' }> => p.type === 'text');
      expect(parts.at(-1)!.type).toBe('finish');
      expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
      expect(texts.length).toBe(parts.length - 1);
      expect(texts.every((p) => p.text.length > 0)).toBe(true);
      expect(texts.map((p) => p.text).join('')).toBe(whole.text);
      expect(texts.length).toBeGreaterThan(50);
    }
  });

  it('reports usage: completion tokens = streamed pieces, prompt tokens from every message', async () => {
    const options = call('REST API for todos', { language: 'typescript', context: { framework: 'fastify' } });
    const parts = await collect(provider.stream(options));
    const finish = parts.at(-1) as Extract<StreamPart, { type: 'finish' }>;
    expect(finish.usage.completionTokens).toBe(parts.length - 1);
    expect(finish.finishReason).toBe('stop');
    const out = await provider.generate(options);
    expect(out.usage).toEqual(finish.usage);
    expect(out.finishReason).toBe('stop');
    expect(out.usage.promptTokens).toBeGreaterThan(0);
    // A longer conversation costs more prompt tokens; the answer's usage does not depend on the system prompt's length.
    const longer = await provider.generate({ ...options, messages: [{ role: 'system', content: 'You are Codeloom. '.repeat(20) }, ...options.messages.slice(1)] });
    expect(longer.usage.promptTokens).toBeGreaterThan(out.usage.promptTokens);
  });

  it('stops at maxTokens with finishReason "length" and a prefix of the full answer', async () => {
    const full = await provider.generate(call('REST API for todos', { language: 'typescript' }));
    for (const max of [1, 7, 40]) {
      const cut = await provider.generate(call('REST API for todos', { language: 'typescript' }, { maxTokens: max }));
      expect(cut.finishReason).toBe('length');
      expect(cut.usage.completionTokens).toBe(max);
      expect(full.text.startsWith(cut.text)).toBe(true);
      expect(cut.text.length).toBeLessThan(full.text.length);
      const parts = await collect(provider.stream(call('REST API for todos', { language: 'typescript' }, { maxTokens: max })));
      expect(parts.filter((p) => p.type === 'text')).toHaveLength(max);
      expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'length', usage: { completionTokens: max } });
    }
    // A budget the answer fits in is not a truncation.
    const roomy = await provider.generate(call('REST API for todos', { language: 'typescript' }, { maxTokens: full.usage.completionTokens }));
    expect(roomy).toEqual(full);
  });

  it('honours an AbortSignal aborted before the call: CancelledError, no text', async () => {
    const controller = new AbortController();
    controller.abort();
    const failure = await provider.generate(call('REST API for todos', {}, { signal: controller.signal })).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CancelledError);
    const seen: StreamPart[] = [];
    const streamed = await (async () => { for await (const p of provider.stream(call('x', {}, { signal: controller.signal }))) seen.push(p); })().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(CancelledError);
    expect(seen).toEqual([]);
  });

  it('honours an AbortSignal aborted mid-stream: the stream throws cancelled and sends no finish', async () => {
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const failure = await (async () => {
      for await (const p of provider.stream(call('REST API for todos', { language: 'typescript', context: { includeTests: true } }, { signal: controller.signal }))) {
        seen.push(p);
        if (seen.length === 10) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CancelledError);
    expect(seen).toHaveLength(10);
    expect(seen.every((p) => p.type === 'text')).toBe(true);
  });

  it('gives other work a turn while streaming a long answer', async () => {
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 0);
    await collect(provider.stream(call('REST API for todos', { language: 'typescript', context: { framework: 'fastify', includeTests: true } })));
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('what the sandbox writes', () => {
  it('names files and types after what the prompt is about', async () => {
    const todos = await files('REST API for todos', 'typescript');
    expect(paths(todos).some((p) => /todos?[-_.]/.test(p) || /\/todos?\//.test(p))).toBe(true);
    expect(content(todos)).toMatch(/\bTodo\b/);
    const expenses = await files('CLI to track expenses', 'typescript');
    expect(paths(expenses).some((p) => /expenses?/.test(p))).toBe(true);
    expect(content(expenses)).toMatch(/\bExpense/);
    expect(content(expenses)).not.toMatch(/Expens(?!e)/);
    for (const language of ['python', 'java', 'rust', 'c']) {
      const fs = await files('CLI to track expenses', language);
      expect(`${paths(fs).join(' ')} ${content(fs)}`, language).toMatch(/expense/i);
      expect(content(fs), language).not.toMatch(/Expens(?!e)|expens_/);
    }
  });

  it('reads the kind of project from the prompt: api, cli or library', async () => {
    const api = await files('REST API for todos', 'python');
    const cli = await files('CLI to track expenses', 'python');
    const lib = await files('library for managing recipes', 'python');
    expect(content(api)).toMatch(/http|route|server/i);
    expect(content(cli)).toMatch(/argparse|argv/);
    expect(content(lib)).not.toMatch(/argparse|http\.server|ThreadingHTTPServer/);
    expect(paths(lib).some((p) => /recipe/.test(p)) || /Recipe/.test(content(lib))).toBe(true);
  });

  it('writes a fastify route plugin with app.get / app.post and a server that registers it', async () => {
    const fs = await files('REST API for todos', 'typescript', { framework: 'fastify' });
    const all = content(fs);
    expect(all).toMatch(/from ['"]fastify['"]/);
    expect(all).toMatch(/\bapp\.get\(\s*['"`]\/todos['"`]/);
    expect(all).toMatch(/\bapp\.post\(\s*['"`]\/todos['"`]/);
    expect(all).toMatch(/\bapp\.delete(<[^>]*>)?\(/);
    expect(all).toMatch(/\.register\(/);
    expect(all).toMatch(/FastifyInstance|FastifyPluginAsync/);
    expect(all).not.toMatch(/from ['"]express['"]/);
    expect(JSON.parse(fs.find((f) => f.path === 'package.json')!.content).dependencies).toHaveProperty('fastify');
  });

  it('writes an express Router mounted on the app', async () => {
    const fs = await files('REST API for todos', 'javascript', { framework: 'express' });
    const all = content(fs);
    expect(all).toMatch(/import (express, \{ ?Router ?\}|\{ ?Router ?\}) from ['"]express['"]/);
    expect(all).toMatch(/Router\(\)/);
    expect(all).toMatch(/router\.(get|post)\(/);
    expect(all).toMatch(/app\.use\(\s*['"`]\/todos['"`]/);
    expect(all).toMatch(/express\.json\(\)/);
    expect(all).not.toMatch(/from ['"]fastify['"]/);
    expect(JSON.parse(fs.find((f) => f.path === 'package.json')!.content).dependencies).toHaveProperty('express');
  });

  it('writes a dependency-free server without a framework', async () => {
    const fs = await files('REST API for todos', 'typescript');
    expect(content(fs)).toMatch(/node:http/);
    expect(JSON.parse(fs.find((f) => f.path === 'package.json')!.content).dependencies ?? {}).toEqual({});
  });

  it.each(LANGUAGES)('adds tests only when context.includeTests is set (%s)', async (language) => {
    for (const prompt of ['REST API for todos', 'CLI to track expenses', 'library for managing recipes']) {
      const without = await files(prompt, language);
      const withTests = await files(prompt, language, { includeTests: true });
      expect(without.filter(isTestish).map((f) => f.path), `${language}: ${prompt}`).toEqual([]);
      expect(withTests.filter(isTestish).length, `${language}: ${prompt}`).toBeGreaterThan(0);
      // The tests come on top of the same project.
      for (const p of paths(without)) expect(paths(withTests), `${language}: ${prompt}`).toContain(p);
    }
  });

  it('every language answers with named fenced files that parse back cleanly (no nameless leftovers)', async () => {
    for (const language of [...LANGUAGES, 'csharp', 'ruby', 'php', 'kotlin', 'swift', 'sql', 'html']) {
      const out = await text('REST API for todos', { language, context: { includeTests: true, framework: 'fastify' } });
      const fs = parseFencedFiles(out, language);
      expect(fs.length, language).toBeGreaterThan(0);
      for (const f of fs.filter((x) => !x.path.endsWith('__init__.py'))) expect(f.content.trim().length, `${language} ${f.path} is empty`).toBeGreaterThan(0);
      // Each opening fence names its file: count openings with a path vs files recovered.
      expect(new Set(paths(fs)).size, language).toBe(fs.length);
      expect(paths(fs).filter((p) => /^main\d+\./.test(p)), language).toEqual([]);
    }
  });

  it('a README with its own ```sh block survives the round trip intact', async () => {
    const fs = await files('REST API for todos', 'typescript', { includeTests: true });
    const readme = fs.find((f) => f.path === 'README.md');
    expect(readme).toBeDefined();
    expect(paths(fs)).not.toContain('main.ts');
    // Every fence that opens inside the README closes inside it.
    expect((readme!.content.match(/^```/gm) ?? []).length % 2).toBe(0);
  });
});

describe('each workflow agent type answers in its own form', () => {
  const task = (extra = '') => `Task: REST API for todos${extra}\nRequirements:\n- framework: fastify`;

  it('planner: a numbered plan, no code fences', async () => {
    const out = await text(task(), { agentType: 'planner', language: 'typescript' });
    expect(out).toMatch(/^1\. .+\n2\. .+\n3\. /m);
    expect(out).not.toContain('```');
    expect(out).toContain('todos');
  });

  it('architect: design notes with a fenced docs/DESIGN.md', async () => {
    const out = await text(task(), { agentType: 'architect', language: 'typescript' });
    expect(paths(parseFencedFiles(out, 'typescript'))).toEqual(['docs/DESIGN.md']);
  });

  it('reviewer: approves by default, requests changes for [review:changes] while code exists, approves code-less conversations', async () => {
    const approve = await text(`${task()}\n\n## Output of the coder (step 1)\n\`\`\`ts a.ts\nx\n\`\`\``, { agentType: 'reviewer' });
    expect(approve.split('\n')[0]).toBe('VERDICT: approve');
    expect(approve).toMatch(/^- /m);
    const changes = await text(`${task(' [review:changes]')}\n\n## Output of the coder (step 1)\ncode`, { agentType: 'reviewer' });
    expect(changes.split('\n')[0]).toBe('VERDICT: changes_requested');
    expect(changes).toMatch(/^- /m);
    expect((await text(task(' [review:changes]'), { agentType: 'reviewer' })).split('\n')[0]).toBe('VERDICT: approve');
    // [review:changes=1]: only the first coder output is sent back.
    const once = (n: number) => `${task(' [review:changes=1]')}${'\n\n## Output of the coder (step 1)\ncode'.repeat(n)}`;
    expect((await text(once(1), { agentType: 'reviewer' })).split('\n')[0]).toBe('VERDICT: changes_requested');
    expect((await text(once(2), { agentType: 'reviewer' })).split('\n')[0]).toBe('VERDICT: approve');
  });

  it.each(LANGUAGES)('tester: only test files, and the tests the coder left out (%s)', async (language) => {
    for (const prompt of ['REST API for todos', 'CLI to track expenses']) {
      const fs = parseFencedFiles(await text(`Task: ${prompt}`, { agentType: 'tester', language }), language);
      expect(fs.length, `${language}: ${prompt}`).toBeGreaterThan(0);
      for (const f of fs) expect(isTestish(f), `${language}: ${f.path} is not a test`).toBe(true);
    }
  });

  it.each(LANGUAGES)('documenter: exactly one README.md (%s)', async (language) => {
    const out = await text(task(), { agentType: 'documenter', language });
    const fs = parseFencedFiles(out, language);
    expect(paths(fs)).toEqual(['README.md']);
    expect(fs[0]!.content).toMatch(/^# /);
  });

  it('coder (and no agent type): the project itself', async () => {
    const coder = await text(task(), { agentType: 'coder', language: 'typescript', context: { framework: 'fastify' } });
    expect(coder).toBe(await text(task(), { language: 'typescript', context: { framework: 'fastify' } }));
    expect(paths(parseFencedFiles(coder, 'typescript'))).toContain('package.json');
  });
});
