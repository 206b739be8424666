/**
 * System tier: every option in the mkfs whitelist (handlers/fs/mkfs-options.ts), with its
 * example value, is accepted by the real tool on a loop device, and takes exactly the argv
 * shape the table claims (a flag we think takes no value would otherwise swallow the device
 * argument, and one we think takes a value would leave it behind as a stray positional).
 *
 * btrfs is in the table but not on this machine: its absence is reported, not skipped silently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMkfsOptions, MKFS_OPTIONS } from '../../handlers/fs/mkfs-options';
import { parseWipefs, wipefsArgv } from '../../handlers/fs/parse/wipefs';
import { createLoopDevice, exec, requireTools, run, wipeSignatures, type LoopDevice } from './helpers/loop';

/** table name → the type whose real tool is exercised, and the image size it needs */
const EXERCISED = [
  { type: 'ext4', sizeMiB: 64, signature: 'ext4' },
  { type: 'xfs', sizeMiB: 512, signature: 'xfs' },
  { type: 'vfat', sizeMiB: 64, signature: 'vfat' },
] as const;

describe.each(EXERCISED)('mkfs.$type accepts every whitelisted option', ({ type, sizeMiB, signature }) => {
  let loop: LoopDevice;
  const mkfs = `/usr/sbin/mkfs.${type}`;

  beforeAll(async () => {
    requireTools(mkfs, '/usr/sbin/wipefs');
    loop = await createLoopDevice({ sizeMiB });
  });
  afterAll(async () => {
    await loop?.cleanup();
  });

  for (const spec of MKFS_OPTIONS[type]) {
    const options = spec.value ? [spec.flag, spec.value.example] : [spec.flag];
    it(`${options.join(' ')}`, async () => {
      const checked = checkMkfsOptions(type, options);
      expect(checked).toEqual({ ok: true, argv: options });
      if (!checked.ok) return;
      await wipeSignatures(loop.device);
      const r = await exec([mkfs, ...checked.argv, loop.device], { timeoutMs: 120_000 });
      expect(r.code, `${mkfs} ${checked.argv.join(' ')}: ${r.stderr}`).toBe(0);
      const sigs = parseWipefs((await run(wipefsArgv(loop.device))).stdout);
      expect(sigs.map((s) => s.type)).toContain(signature);
    });
  }
});

describe('types in the table without a tool here', () => {
  it('lists them (btrfs-progs is not installed on the reference box)', async () => {
    const missing: string[] = [];
    for (const type of Object.keys(MKFS_OPTIONS)) {
      const r = await exec(['/usr/bin/test', '-x', `/usr/sbin/mkfs.${type}`]);
      if (r.code !== 0) missing.push(type);
    }
    // if this changes, add the type to EXERCISED above
    expect(missing).toEqual(['btrfs']);
  });
});
