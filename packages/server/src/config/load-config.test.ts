import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { loadConfig } from './load-config.js';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, dataDir: './data', accessTokenTtl: 900, refreshTokenTtl: 2_592_000, bodyLimit: 1_048_576, issuer: 'http://127.0.0.1:8080' });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('lists every bad setting at once, without echoing secrets', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', CODELOOM_ACCESS_TOKEN_TTL: '0', DATABASE_URL: 'mysql://u:hunter2@db/x', LOG_LEVEL: 'loud', OPENAI_API_KEY: 'sk-secret', CODELOOM_OPENAI_MODELS: 'gpt' });
    } catch (e) { error = e; }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringContaining('PORT: must be an integer'),
      expect.stringContaining('CODELOOM_ACCESS_TOKEN_TTL: must be ≥ 1'),
      expect.stringContaining('DATABASE_URL: must be a postgres:// URL'),
      expect.stringContaining('LOG_LEVEL: must be one of'),
      expect.stringContaining('CODELOOM_OPENAI_MODELS: set OPENAI_BASE_URL too'),
    ]));
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('reads lists and booleans', () => {
    const c = loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', CODELOOM_OPENAI_MODELS: 'a, b,,c', CODELOOM_TRUST_PROXY: 'yes' });
    expect(c.openaiModels).toEqual(['a', 'b', 'c']);
    expect(c.trustProxy).toBe(true);
  });

  it('derives the issuers: one token issuer whatever HOST and PORT, else from CODELOOM_PUBLIC_URL or CODELOOM_ISSUER', () => {
    const [a, b] = [loadConfig({ PORT: '8081' }), loadConfig({ PORT: '8082', HOST: '0.0.0.0' })];
    expect(a.tokenIssuer).toBe('codeloom');
    expect(b.tokenIssuer).toBe(a.tokenIssuer);
    expect(a.issuer).toBe('http://127.0.0.1:8081');
    const lb = loadConfig({ PORT: '8081', CODELOOM_PUBLIC_URL: 'https://codeloom.example.com/' });
    expect(lb).toMatchObject({ publicUrl: 'https://codeloom.example.com', issuer: 'https://codeloom.example.com', tokenIssuer: 'https://codeloom.example.com' });
    const explicit = loadConfig({ CODELOOM_PUBLIC_URL: 'https://codeloom.example.com', CODELOOM_ISSUER: 'https://id.example.com' });
    expect(explicit).toMatchObject({ issuer: 'https://id.example.com', tokenIssuer: 'https://id.example.com' });
  });
});
