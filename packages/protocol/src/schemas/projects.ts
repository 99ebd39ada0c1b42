import { Type, type Static } from '@sinclair/typebox';
import { SingleLine } from './common.js';

export const CreateProjectBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 2_000 })),
  template: Type.Optional(SingleLine({ minLength: 1, maxLength: 60, description: 'A template id from GET /api/v1/templates; the project starts with its files.' })),
});
export type CreateProjectBody = Static<typeof CreateProjectBodySchema>;

export const UpdateProjectBodySchema = Type.Object(
  {
    name: Type.Optional(SingleLine({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 2_000 })),
  },
  { minProperties: 1, additionalProperties: false },
);
export type UpdateProjectBody = Static<typeof UpdateProjectBodySchema>;

export const ProjectSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    template: Type.Union([Type.String(), Type.Null()]),
    files_count: Type.Integer(),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'Project' },
);
export type Project = Static<typeof ProjectSchema>;

export const ProjectFileInfoSchema = Type.Object({ path: Type.String(), size: Type.Integer(), updated_at: Type.String() });
export const ProjectFileSchema = Type.Object({ path: Type.String(), content: Type.String(), size: Type.Integer(), updated_at: Type.String() });
export type ProjectFile = Static<typeof ProjectFileSchema>;

export const TemplateSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  language: Type.String(),
  files: Type.Array(Type.String({ description: 'file path' })),
});
export type Template = Static<typeof TemplateSchema>;

/** PUT /api/v1/projects/{id}/files/{path}: the file's whole new content (UTF-8 text). */
export const WriteProjectFileBodySchema = Type.Object({ content: Type.String() }, { additionalProperties: false });
export type WriteProjectFileBody = Static<typeof WriteProjectFileBodySchema>;

/** A change set to a project's files (CONTRACT §12.6), numbered from 1 per project, newest last. */
export const ProjectRevisionSchema = Type.Object(
  {
    id: Type.String(),
    number: Type.Integer({ minimum: 1, description: 'The revision number within its project (1 = the project as created); the `{rev}` of the revision routes.' }),
    message: Type.String(),
    author: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()], { description: 'Who made it; null for the initial revision of a project that existed before revisions did.' }),
    files_changed: Type.Integer(),
    created_at: Type.String(),
  },
);
export type ProjectRevision = Static<typeof ProjectRevisionSchema>;

export const ProjectRevisionFileSchema = Type.Object({
  path: Type.String(),
  status: Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('deleted')]),
  size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes after the change; null when deleted.' }),
  diff: Type.String({ description: 'Unified diff from the content before this revision to the content after it.' }),
});
export const ProjectRevisionDetailSchema = Type.Intersect([ProjectRevisionSchema, Type.Object({ files: Type.Array(ProjectRevisionFileSchema) })]);
export type ProjectRevisionDetail = Static<typeof ProjectRevisionDetailSchema>;

export const RevisionParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), rev: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
