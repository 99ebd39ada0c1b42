import type { Pagination } from '@codeloom/protocol';

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export function paginate<T>(data: T[], page: number, limit: number, total: number): Page<T> {
  return { data, pagination: { page, limit, total, total_pages: Math.ceil(total / limit) } };
}

export function pageParams(query: { page?: number; limit?: number }) {
  return { page: query.page ?? 1, limit: query.limit ?? 20 };
}
