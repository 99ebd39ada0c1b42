import { describe, expect, it } from 'vitest';
import { analyzePrompt, nameForms, plural, singular, stripMarkers, withArticle } from './prompt-analysis.js';

const subject = (prompt: string) => {
  const a = analyzePrompt(prompt);
  return [a.kind, a.entity.words, a.resource.kebab];
};

describe('analyzePrompt', () => {
  it.each([
    ['REST API for todos', 'api', 'todo', 'todos'],
    ['REST API for blog posts', 'api', 'blog post', 'blog-posts'],
    ['A CLI for managing todo items', 'cli', 'todo item', 'todo-items'],
    ['CLI to track expenses by category', 'cli', 'expense', 'expenses'],
    ['library for parsing invoices', 'library', 'invoice', 'invoices'],
    ['A JSON API that stores user profiles', 'api', 'profile', 'profiles'],
    ['build me a service to manage customer addresses', 'api', 'customer address', 'customer-addresses'],
    ['web service for bookmarks', 'api', 'bookmark', 'bookmarks'],
    ['a python script that counts words in a file', 'cli', 'word', 'words'],
    ['an api for people', 'api', 'person', 'people'],
    ['REST API for categories', 'api', 'category', 'categories'],
    ['C++ library for matrices', 'library', 'matrix', 'matrices'],
    ['Todo app', 'library', 'todo', 'todos'],
    ['Rust CLI', 'cli', 'item', 'items'],
  ])('%s → %s about %s', (prompt, kind, entity, resource) => {
    expect(subject(prompt)).toEqual([kind, entity, resource]);
  });

  it('steers clear of names that are keywords or standard types somewhere', () => {
    expect(subject('library for managing strings')).toEqual(['library', 'string entry', 'string-entries']);
    expect(subject('REST API for classes')).toEqual(['api', 'class entry', 'class-entries']);
    expect(analyzePrompt('library for managing options').entity.pascal).toBe('OptionEntry');
  });

  it('gives things people write a title and everything else a name', () => {
    expect(analyzePrompt('REST API for todos').field).toBe('title');
    expect(analyzePrompt('REST API for blog posts').field).toBe('title');
    expect(analyzePrompt('REST API for users').field).toBe('name');
  });

  it('makes a one-line title that is safe inside any language comment or string', () => {
    const a = analyzePrompt('REST API for todos */ "quoted" `code` \\ back\nsecond line');
    expect(a.title).toBe("REST API for todos / quoted code back");
    expect(analyzePrompt('   ').title).toBe('item library');
    expect(analyzePrompt('x'.repeat(200)).title).toHaveLength(80);
  });

  it('ignores review markers', () => {
    expect(stripMarkers('CLI for notes [review:changes=2]')).toBe('CLI for notes');
    expect(analyzePrompt('CLI for notes [review:changes]').title).toBe('CLI for notes');
  });

  it('is a pure function of the prompt', () => {
    expect(analyzePrompt('REST API for todos')).toEqual(analyzePrompt('REST API for todos'));
  });
});

describe('names', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])('treats %s as an ordinary word, not an inherited property', (word) => {
    expect(singular(word)).toBe(word);
    expect(typeof plural(word)).toBe('string');
    const a = analyzePrompt(`a CLI to manage ${word} ${word}s`);
    expect(typeof a.entity.pascal).toBe('string');
    expect(typeof a.resource.camel).toBe('string');
  });

  it('spells a name in every case a language needs', () => {
    expect(nameForms(['blog', 'post'])).toEqual({ camel: 'blogPost', pascal: 'BlogPost', snake: 'blog_post', kebab: 'blog-post', flat: 'blogpost', words: 'blog post' });
  });

  it.each([
    ['todos', 'todo'], ['categories', 'category'], ['boxes', 'box'], ['matches', 'match'], ['addresses', 'address'],
    ['expenses', 'expense'], ['statuses', 'status'], ['people', 'person'], ['movies', 'movie'], ['news', 'news'], ['series', 'series'],
  ])('singular(%s) = %s and back', (many, one) => {
    expect(singular(many)).toBe(one);
    expect(plural(one)).toBe(many);
  });

  it('picks a or an', () => {
    expect(withArticle('expense')).toBe('an expense');
    expect(withArticle('todo')).toBe('a todo');
  });
});
