/** The document's example answers are the same on every build: what a run changes is made fixed. */
import { describe, expect, it } from 'vitest';
import { EXAMPLE_EPOCH_MS, stableExampleValue } from '../../runtime/demo-examples';

describe('stableExampleValue', () => {
  it('fixes times, inode and device numbers; keeps everything else', () => {
    const got = stableExampleValue({
      files: [
        {
          ino: 2262775,
          dev: 65024,
          blksize: 512,
          size: 93,
          mtimeMs: 1795729415914.02,
          mtime: '2026-11-26T21:43:35.914Z',
        },
        { ino: 2262834, dev: 65024, blksize: 4096, size: 7, atimeMs: 12, name: '2026-11-26T21:43:35Z' },
      ],
      createdAt: '2026-11-26T21:43:52.987Z',
      at: '2026-11-26T21:43:52.9876Z',
      unix_time: '1795729918050',
      unix_time_s: '1795729918',
      port: 9000,
      note: '1795729918050',
    });
    expect(got).toEqual({
      files: [
        { ino: 1000, dev: 2049, blksize: 4096, size: 93, mtimeMs: EXAMPLE_EPOCH_MS, mtime: '2026-01-01T00:00:00.000Z' },
        // a small *Ms is a duration, not a time
        { ino: 1001, dev: 2049, blksize: 4096, size: 7, atimeMs: 12, name: '2026-01-01T00:00:00Z' },
      ],
      createdAt: '2026-01-01T00:00:00.000Z',
      at: '2026-01-01T00:00:00.0000Z',
      unix_time: String(EXAMPLE_EPOCH_MS),
      unix_time_s: String(EXAMPLE_EPOCH_MS / 1000),
      port: 9000,
      // digits under a key that is not a time stay
      note: '1795729918050',
    });
    expect(EXAMPLE_EPOCH_MS).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });
});
