import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LANGUAGES, writeAgentPrompt, writeReview } from '@codeloom/protocol';
import { sandboxAnswer } from './answer.js';
import type { SandboxCall } from './types.js';

/**
 * Whatever a caller sends, the sandbox model answers: prompts made of words it knows (kinds, triggers,
 * languages), words that name JavaScript object properties (the "constructor" prompt that once made it
 * throw), and any text at all; every language id and alias, contexts with any keys, every agent type and
 * the agent prompt format, fill-in-the-middle, stops and token caps. FUZZ_SEED replays, FUZZ_RUNS scales.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FUZZ_RUNS ?? 600);

const KNOWN = ['a', 'an', 'the', 'for', 'of', 'to', 'manage', 'track', 'list', 'store', 'about', 'api', 'rest', 'cli', 'server', 'tool',
  'library', 'service', 'todos', 'blog', 'posts', 'people', 'mice', 'boxes', 'series', 'categories', 'with', 'tests', 'in', 'python', 'go',
  'rust', 'bash', 'command-line', 'webhooks', 'parsing', 'invoices', 'entry', 'item', '[review:changes]', '[review:approve]', 'class', 'new'];
const PROPERTY_WORDS = ['constructor', '__proto__', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf',
  'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__', 'then', 'length', 'name', 'caller', 'arguments'];
const word = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...KNOWN) },
  { weight: 4, arbitrary: fc.constantFrom(...PROPERTY_WORDS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);
const text = fc.array(word, { maxLength: 14 }).chain((words) => fc.constantFrom(' ', '\n', ', ', '  ').map((sep) => words.join(sep)));
const language = fc.oneof(fc.constantFrom(...LANGUAGES.flatMap((l) => [l.id, ...l.aliases])), fc.constantFrom(...PROPERTY_WORDS), fc.string({ maxLength: 10 }));
const contextValue = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...PROPERTY_WORDS, 'express', 'fastify', 'flask', 'sqlite'), fc.integer(), fc.boolean());
const context = fc.dictionary(fc.oneof(fc.constantFrom('framework', 'database', 'styling', 'includeTests', ...PROPERTY_WORDS), fc.string({ maxLength: 8 })), contextValue, { maxKeys: 5 });
const agentType = fc.option(fc.oneof(fc.constantFrom('planner', 'architect', 'coder', 'reviewer', 'tester', 'documenter'), fc.constantFrom(...PROPERTY_WORDS)), { nil: undefined });
const userMessage = fc.oneof(
  text,
  fc.record({
    task: text, language: fc.option(language, { nil: undefined }), requirements: context,
    earlier: fc.array(fc.record({
      agent: fc.oneof(fc.constantFrom('planner', 'coder', 'reviewer'), fc.constantFrom(...PROPERTY_WORDS)),
      index: fc.nat(5), iteration: fc.nat(2),
      output: fc.oneof(text, fc.constantFrom(writeReview('approve', []), writeReview('changes_requested', ['constructor'])), text.map((t) => `\`\`\`constructor\n${t}\n\`\`\``)),
    }), { maxLength: 3 }),
  }).map(writeAgentPrompt),
);
const call: fc.Arbitrary<SandboxCall> = fc.record({
  messages: fc.tuple(fc.option(text, { nil: undefined }), userMessage).map(([system, user]) => [
    ...(system !== undefined ? [{ role: 'system' as const, content: system }] : []), { role: 'user' as const, content: user },
  ]),
  hints: fc.record({ language, context, agentType }, { requiredKeys: [] }),
  suffix: fc.option(text, { nil: undefined }),
  stop: fc.option(fc.array(fc.oneof(fc.constantFrom('\n', '}', 'constructor'), fc.string({ minLength: 1, maxLength: 4 })), { maxLength: 3 }), { nil: undefined }),
  maxTokens: fc.option(fc.nat(400), { nil: undefined }),
}, { requiredKeys: ['messages'] });

describe('the sandbox model on any call', () => {
  it(`answers ${RUNS} generated calls with pieces and honest usage, never throwing`, () => {
    try {
      fc.assert(fc.property(call, (c) => {
        const a = sandboxAnswer(c);
        expect(a.pieces.every((p) => typeof p === 'string')).toBe(true);
        expect(Number.isInteger(a.usage.promptTokens) && a.usage.promptTokens >= 0).toBe(true);
        expect(a.usage.completionTokens).toBe(a.pieces.length);
        if (c.maxTokens !== undefined) expect(a.pieces.length).toBeLessThanOrEqual(c.maxTokens);
        expect(sandboxAnswer(c)).toEqual(a); // same call, same answer
      }), { seed: SEED, numRuns: RUNS });
    } finally {
      process.stdout.write(`fuzz (sandbox model): ${RUNS} calls, seed ${SEED}\n`);
    }
  });
});
