import { describe, expect, it } from 'vitest';
import { lookupTable } from './lookup-table.js';

describe('lookupTable', () => {
  it('finds its own entries and nothing inherited', () => {
    const t = lookupTable({ mice: 'mouse' });
    expect(t.mice).toBe('mouse');
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) expect(t[key]).toBeUndefined();
    expect(Object.isFrozen(t)).toBe(true);
  });
});
