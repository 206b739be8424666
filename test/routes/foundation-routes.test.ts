import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import availableFs from '../../handlers/fs/routes/available-fs';
import confGet from '../../handlers/kerberos/routes/conf-get';
import { makeTestHost, type TestHost } from '../helpers/host';
import { errorOf } from '../helpers/answers';

let t: TestHost;
beforeAll(async () => {
  t = await makeTestHost({ routes: [availableFs, confGet] });
});
afterAll(() => t.close());

describe('GET /fs/available_fs', () => {
  it('lists the types whose mkfs helper exists in either sbin, once each, sorted', async () => {
    const { sbin, sbinLegacy } = t.config.paths;
    mkdirSync(sbinLegacy, { recursive: true });
    for (const f of ['mkfs.ext4', 'mkfs.xfs', 'mkswap', 'mkfs', 'mkfs.cramfs', 'ip']) writeFileSync(join(sbin, f), '');
    writeFileSync(join(sbinLegacy, 'mkfs.ext4'), '');
    symlinkSync(join(sbin, 'mkfs.ext4'), join(sbinLegacy, 'mkfs.vfat'));
    mkdirSync(join(sbin, 'mkfs.btrfs')); // a directory is not a helper
    const r = await t.call('GET', '/api/v2/fs/available_fs');
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      { name: 'ext4', device_associated: true },
      { name: 'vfat', device_associated: true },
      { name: 'xfs', device_associated: true },
    ]);
  });

  it('needs fs:read', async () => {
    const tok = await t.token(['kerberos:read']);
    expect((await t.call('GET', '/api/v2/fs/available_fs', { token: tok })).status).toBe(403);
  });
});

describe('GET /kerberos/conf', () => {
  it('404 with a clear message when the file is absent', async () => {
    const r = await t.call('GET', '/api/v2/kerberos/conf');
    expect(r.status).toBe(404);
    expect(errorOf(r).message).toBe(`krb5.conf not found at ${t.config.paths.krb5Conf}`);
  });

  it('a file that does not parse is a 502 naming the line, not a 500', async () => {
    mkdirSync(dirname(t.config.paths.krb5Conf), { recursive: true });
    writeFileSync(t.config.paths.krb5Conf, 'includedir /etc/krb5.conf.d\n[realms]\nEXAMPLE = {\n');
    const r = await t.call('GET', '/api/v2/kerberos/conf');
    expect(r.status).toBe(502);
    expect(errorOf(r).code).toBe('bad_gateway');
    expect(errorOf(r).message).toMatch(/line \d+/);
  });
});
