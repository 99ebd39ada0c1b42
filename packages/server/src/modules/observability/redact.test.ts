import { describe, expect, it } from 'vitest';
import { redact } from './redact.js';

describe('redact', () => {
  it('masks bearer tokens, Codeloom keys, sk- keys, JWTs, secret assignments and emails', () => {
    const text = [
      'Authorization: Bearer abcdefghijklmnop.qrstuv',
      'key cl_live_Zx9YwVu8TsRq7Po6 and cl_test_AbCdEfGh1234',
      'OPENAI_API_KEY=sk-proj-1234567890abcdefABCDEF',
      'anthropic sk-ant-api03-abcdefghijklmnop',
      'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
      '{"password": "hunter22"} secret=topsecretvalue',
      'mail jane.doe+tag@example.co.uk please',
      'aws AKIAIOSFODNN7EXAMPLE gh ghp_abcdefghijklmnopqrstuvwxyz0123',
    ].join('\n');
    const out = redact(text);
    for (const secret of ['abcdefghijklmnop.qrstuv', 'Zx9YwVu8TsRq7Po6', 'AbCdEfGh1234', '1234567890abcdefABCDEF', 'api03-abcdefghijklmnop',
      'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c', 'hunter22', 'topsecretvalue', 'jane.doe', 'example.co.uk', 'IOSFODNN7EXAMPLE', 'abcdefghijklmnopqrstuvwxyz0123']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('Bearer [REDACTED]');
    expect(out).toContain('cl_live_[REDACTED]');
    expect(out).toContain('sk-[REDACTED]');
    expect(out).toContain('[EMAIL]');
  });

  it('leaves ordinary code and prose alone', () => {
    const code = 'function add(a: number, b: number) { return a + b; } // sum of skills, @decorator, user.name';
    expect(redact(code)).toBe(code);
  });
});
