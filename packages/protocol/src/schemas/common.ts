import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem document' },
);

export const PageQuerySchema = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
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

export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const SuccessSchema = Type.Object({ success: Type.Boolean() });

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** A string enum as a plain JSON-Schema `enum`, so validation errors can list the valid values. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
