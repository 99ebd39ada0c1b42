export * from './error-codes.js';
export * from './plans.js';
export * from './schemas/common.js';
export * from './schemas/auth.js';
export * from './schemas/api-keys.js';
