import { describe, expect, it } from 'vitest';
import { SANDBOX_LANGUAGES, inferLanguage, resolveSandboxLanguage } from './sandbox-languages.js';

describe('SANDBOX_LANGUAGES', () => {
  it('covers the languages with full project templates, and ids resolve to themselves', () => {
    const projects = SANDBOX_LANGUAGES.filter((l) => l.project).map((l) => l.id);
    expect(projects).toEqual(['typescript', 'javascript', 'python', 'java', 'go', 'rust', 'c', 'cpp', 'bash']);
    for (const l of SANDBOX_LANGUAGES) expect(resolveSandboxLanguage(l.id)).toBe(l.id);
  });

  it('has no alias that names two languages', () => {
    const aliases = SANDBOX_LANGUAGES.flatMap((l) => l.aliases);
    expect(new Set(aliases).size).toBe(aliases.length);
  });

  it.each([['ts', 'typescript'], ['JS', 'javascript'], ['py', 'python'], ['golang', 'go'], ['rs', 'rust'], ['c++', 'cpp'], ['sh', 'bash'], [' Python3 ', 'python'], ['cobol', undefined]])(
    'resolves %j to %s', (alias, id) => {
      expect(resolveSandboxLanguage(alias)).toBe(id);
    },
  );
});

describe('inferLanguage', () => {
  it.each([
    ['a python script that renames files', 'python'],
    ['Rust CLI for notes', 'rust'],
    ['REST API in TypeScript with fastify', 'typescript'],
    ['an express server for todos', 'javascript'],
    ['a Node.js tool', 'javascript'],
    ['Go service for inventory', 'go'],
    ['a service in golang', 'go'],
    ['Spring Boot API for orders', 'java'],
    ['Java library for dates', 'java'],
    ['a C program that counts lines', 'c'],
    ['C++ library for matrices', 'cpp'],
    ['bash script to back up a folder', 'bash'],
    ['a Kotlin app', 'kotlin'],
    ['SQL schema for a shop', 'sql'],
    ['a landing page in HTML', 'html'],
  ])('%s → %s', (prompt, language) => {
    expect(inferLanguage(prompt)).toBe(language);
  });

  it('answers undefined when no language is named, and is not fooled by everyday words', () => {
    for (const prompt of ['REST API for todos', "Let's go to the store", 'Go to the list of items', 'plan A, B or C', 'a JavaScript-free page']) {
      expect(inferLanguage(prompt), prompt).toBe(prompt === 'plan A, B or C' ? 'c' : prompt.includes('JavaScript') ? 'javascript' : undefined);
    }
  });
});
