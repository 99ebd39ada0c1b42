import { LANGUAGES, type CatalogLanguage } from '@codeloom/protocol';
import { GENERATORS } from './languages/index.js';

/**
 * The language catalog (@codeloom/protocol) as the sandbox model (a
 * deterministic template model, not AI) sees it: every language on it, and
 * whether the sandbox writes a full multi-file project (tests included) in
 * it or a single sensible file.
 */
export interface SandboxLanguage extends CatalogLanguage {
  project: boolean;
}

export const SANDBOX_LANGUAGES: readonly SandboxLanguage[] = LANGUAGES.map((l) => ({ ...l, project: Object.hasOwn(GENERATORS, l.id) }));

export { inferLanguage, resolveLanguage as resolveSandboxLanguage } from '@codeloom/protocol';
