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
