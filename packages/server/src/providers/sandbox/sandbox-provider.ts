import type { GenerateOutput, ModelCallOptions, ModelProvider, StreamPart } from '../provider.js';
import { ProviderError } from '../provider.js';
import { designText, planText, readmeFile, reviewText } from './agent-outputs.js';
import { generateC, generateGo, generateJava, generateRust } from './gen-compiled.js';
import { generateNode } from './gen-node.js';
import { generateBash, generateSingleFile } from './gen-other.js';
import { generatePython } from './gen-python.js';
import { analyzePrompt } from './prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from './sandbox-files.js';
import { tokenize } from './tokenize.js';

/**
 * The `sandbox` model: a deterministic template model, not AI. It reads the
 * prompt (what to build, what it is about), the language and the context
 * (framework, database, includeTests) and writes a small runnable project as
 * Markdown with one fenced block per file (```lang path). Same input, same
 * bytes out. It needs no network and is always available.
 */
export function createSandboxProvider(): ModelProvider {
  return {
    name: 'sandbox',
    async generate(options) {
      let text = '';
      let finish: GenerateOutput | undefined;
      for await (const part of streamSandbox(options)) {
        if (part.type === 'text') text += part.text;
        else finish = { text: '', usage: part.usage, finishReason: part.finishReason };
      }
      return { ...finish!, text };
    },
    stream: streamSandbox,
  };
}

async function* streamSandbox(options: ModelCallOptions): AsyncGenerator<StreamPart> {
  const text = renderSandboxOutput(options);
  let pieces = tokenize(text);
  let finishReason: 'stop' | 'length' = 'stop';
  if (options.maxTokens !== undefined && pieces.length > options.maxTokens) {
    pieces = pieces.slice(0, options.maxTokens);
    finishReason = 'length';
  }
  const promptTokens = options.messages.reduce((n, m) => n + tokenize(m.content).length, 0);
  for (let i = 0; i < pieces.length; i++) {
    if (options.signal?.aborted) throw new ProviderError('cancelled', 'The sandbox generation was cancelled.', false);
    // Yield to the event loop now and then, so cancellation, other requests and slow readers get their turn.
    if (i % 32 === 31) await new Promise((resolve) => setImmediate(resolve));
    yield { type: 'text', text: pieces[i]! };
  }
  if (options.signal?.aborted) throw new ProviderError('cancelled', 'The sandbox generation was cancelled.', false);
  yield { type: 'finish', usage: { promptTokens, completionTokens: pieces.length }, finishReason };
}

const GENERATORS: Record<string, (spec: GenerationSpec) => SandboxFile[]> = {
  typescript: (s) => generateNode(s, true),
  javascript: (s) => generateNode(s, false),
  python: generatePython,
  go: generateGo,
  rust: generateRust,
  java: generateJava,
  c: (s) => generateC(s, false),
  cpp: (s) => generateC(s, true),
  bash: generateBash,
};

/** The full Markdown answer for a call: depends only on the messages and the hints. */
export function renderSandboxOutput(options: ModelCallOptions): string {
  const user = [...options.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const task = /^Task: (.*)$/m.exec(user)?.[1] ?? user;
  const language = options.hints?.language ?? 'typescript';
  const context = options.hints?.context ?? {};
  const analysis = analyzePrompt(task);
  const spec: GenerationSpec = {
    analysis, language,
    framework: typeof context.framework === 'string' ? context.framework : undefined,
    database: typeof context.database === 'string' ? context.database : undefined,
    includeTests: context.includeTests === true,
  };
  const project = () => (GENERATORS[language] ?? generateSingleFile)(spec);
  const fenced = (files: SandboxFile[]) => files.map((f) => `\`\`\`${f.lang} ${f.path}\n${f.content}\`\`\``).join('\n\n');
  switch (options.hints?.agentType) {
    case 'planner':
      return planText(analysis, language);
    case 'architect':
      return `${designText(analysis, language)}\n\`\`\`markdown docs/DESIGN.md\n${designText(analysis, language)}\`\`\`\n`;
    case 'reviewer':
      return reviewText(user);
    case 'tester': {
      const tests = (GENERATORS[language] ?? generateSingleFile)({ ...spec, includeTests: true }).filter((f) => /(^|\/)tests?\/|_test\.|Test\.java$|\.test\./.test(f.path));
      return `Tests for ${analysis.resource}:\n\n${fenced(tests.length ? tests : project())}\n`;
    }
    case 'documenter':
      return `${fenced([readmeFile(analysis, language, project())])}\n`;
    default: {
      const files = project();
      const intro = `Here is a ${language} ${analysis.kind === 'api' ? 'service' : analysis.kind} for ${analysis.resource}${spec.framework ? ` using ${spec.framework}` : ''}.`;
      return `${intro}\n\n${fenced(files)}\n`;
    }
  }
}
