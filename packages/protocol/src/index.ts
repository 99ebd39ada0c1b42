export * from './error-codes.js';
export * from './plans.js';
export * from './schemas/common.js';
export * from './schemas/auth.js';
export * from './schemas/api-keys.js';
export * from './schemas/generate.js';
export * from './schemas/projects.js';
export * from './schemas/agents.js';
