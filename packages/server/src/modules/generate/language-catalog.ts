import { LANGUAGES as CATALOG, inferLanguage, resolveLanguage, type LanguageInfo } from '@codeloom/protocol';
import type { LanguageCatalog } from './generation-service.js';

/**
 * Languages a generation may ask for (GET /api/v1/languages): the catalog in
 * @codeloom/protocol, which the sandbox model reads too, so every language
 * the API accepts is one the offline model can answer in.
 */
export const LANGUAGES: readonly LanguageInfo[] = CATALOG.map((l) => ({ id: l.id, name: l.name, aliases: [...l.aliases] }));

export const languageCatalog: LanguageCatalog = {
  list: () => [...LANGUAGES],
  resolve: resolveLanguage,
  infer: inferLanguage,
};
