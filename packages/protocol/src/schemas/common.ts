import { Type, type Static, type StringOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    upstream_code: Type.Optional(Type.String({ description: 'With `upstream_rejected`: the model provider\'s own error code (e.g. `context_length_exceeded`).' })),
  },
  { $id: 'Problem', description: 'RFC 9457 problem document' },
);

/** Bounds of `?page=` and `?limit=` on every list (docs/api.md); anything outside is 400 validation_failed. */
export const MAX_PAGE = 1_000_000;
export const MAX_PAGE_LIMIT = 100;

export const PageQuerySchema = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: `1–${MAX_PAGE}; a page past the last one is empty.` })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: 20, description: `Items per page, 1–${MAX_PAGE_LIMIT}.` })),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuerySchema>;

export const PaginationSchema = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer(),
});
export type Pagination = Static<typeof PaginationSchema>;

export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), pagination: PaginationSchema });
}

/**
 * Single-line text (names, emails, ids, model names): no C0 control
 * character and no DEL. Multi-line text (descriptions, prompts) may hold tab
 * and newline; NUL is refused in every field by the server.
 */
export const NO_CONTROL_CHARS = '^[^\\u0000-\\u001F\\u007F]*$';
export const SingleLine = (options: StringOptions = {}) => Type.String({ pattern: NO_CONTROL_CHARS, ...options });

export const IdParamsSchema = Type.Object({ id: SingleLine({ minLength: 1, maxLength: 64 }) });

export const SuccessSchema = Type.Object({ success: Type.Boolean() });

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** A string enum as a plain JSON-Schema `enum`, so validation errors can list the valid values. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
