import type { Page } from './types.js';

/**
 * A paginated list. Iterate it (`for await (const p of client.projects.list())`)
 * to walk every item of every page, fetched one page at a time as you go
 * (`list({ page: 2, limit: 3 })` starts at page 2, 3 items a page);
 * `pages()` walks the pages themselves; `toArray()` collects everything;
 * awaiting it gives the first page. Nothing is fetched until you do one of these.
 */
export class PageIterator<T> implements AsyncIterable<T>, PromiseLike<Page<T>> {
  private first: Promise<Page<T>> | undefined;

  /** `start`: the page awaiting gives and iteration starts at (`list({ page: 2 })`). */
  constructor(private readonly fetchPage: (page: number) => Promise<Page<T>>, private readonly start = 1) {}

  private firstPage(): Promise<Page<T>> {
    return (this.first ??= this.fetchPage(this.start));
  }

  then<R1 = Page<T>, R2 = never>(onfulfilled?: ((value: Page<T>) => R1 | PromiseLike<R1>) | null, onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    return this.firstPage().then(onfulfilled, onrejected);
  }

  /** Every page in order, from the start page (default 1) to the last (`pagination.total_pages`). */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page = await this.firstPage();
    for (;;) {
      yield page;
      const { page: n, total_pages } = page.pagination;
      if (page.data.length === 0 || n >= total_pages) return;
      page = await this.fetchPage(n + 1);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** All items of all pages. */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
