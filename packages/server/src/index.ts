export { buildApp, rewriteVersionAlias, type CodeloomApp } from './app.js';
export { serve } from './main.js';
export { loadConfig, type Config } from './config/load-config.js';
export { ConfigError } from './errors.js';
export { renderConfigDoc } from './config/render-config-doc.js';
export { openDatabase, migrateToLatest } from './storage/open-database.js';
export { createStore, type Store } from './storage/store.js';
export { emailLookupKeys, normalizeEmail } from './modules/auth/email-normalization.js';
