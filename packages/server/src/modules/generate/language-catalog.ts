import type { LanguageInfo } from '@codeloom/protocol';
import { SANDBOX_LANGUAGES, inferLanguage, resolveSandboxLanguage } from '../../providers/sandbox/languages.js';
import type { LanguageCatalog } from './generation-service.js';

/**
 * Languages a generation may ask for (GET /api/v1/languages). One list serves
 * the API and the sandbox model, so every language the API accepts is one the
 * offline model can answer in.
 */
export const LANGUAGES: readonly LanguageInfo[] = SANDBOX_LANGUAGES.map((l) => ({ id: l.id, name: l.name, aliases: [...l.aliases] }));

export const languageCatalog: LanguageCatalog = {
  list: () => [...LANGUAGES],
  resolve: resolveSandboxLanguage,
  infer: inferLanguage,
};
