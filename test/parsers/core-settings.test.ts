/** The one settings reader (handlers/core/settings.ts). */
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { areaSettings } from '../../handlers/core/settings';
import type { Vars } from '../../handlers/core/vars';

const schema = z.strictObject({ limit: z.number().int().min(1).default(5) });
const vars = (settings: Record<string, unknown>): Vars => ({
  productName: 'x',
  hostId: 'h',
  paths: {},
  bin: {},
  settings,
});

describe('areaSettings', () => {
  it('applies the defaults, and parses one settings object once', () => {
    const v = vars({ a: { limit: 7 } });
    const first = areaSettings(v, 'a', schema);
    expect(first).toEqual({ limit: 7 });
    expect(areaSettings(v, 'a', schema)).toBe(first);
    expect(areaSettings(vars({}), 'a', schema)).toEqual({ limit: 5 });
  });
  it('a value the schema refuses is a 500 naming the key', () => {
    expect(() => areaSettings(vars({ a: { limit: 0 } }), 'a', schema)).toThrow(
      expect.objectContaining({ code: 'internal', message: expect.stringContaining('settings.a.limit') }),
    );
  });
});
