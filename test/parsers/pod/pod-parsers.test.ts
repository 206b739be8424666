import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerStatusText, parseComposePs } from '../../../handlers/pod/parse/compose-ps';
import { mountOptionsOf } from '../../../handlers/pod/config-fs';
import { parseBlkidExport } from '../../../handlers/pod/parse/blkid';
import { parseFstab } from '../../../handlers/tools/fstab';
import { parseSystemctlShow } from '../../../handlers/tools/systemctl-show';
import { unitState } from '../../../handlers/pod/unit-state';
import { upsertFstab } from '../../../handlers/pod/render/fstab';
import { unitWord } from '../../../handlers/pod/render/unit';
import { execStartOf } from '../../helpers/unit-exec';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseError } from '../../helpers/parse-error';
import { repo } from '../../helpers/host';
import { runFixtureTable } from '../../helpers/fixture-runner';
import { POD_FIXTURES } from '../fixture-tables';

const dir = join(repo, 'fixtures/compose');

runFixtureTable(POD_FIXTURES);

describe('compose ps of every flavour (fixtures/compose)', () => {
  it('summarises containers for inspect', () => {
    const fx = readFixture(join(dir, 'v2-ps-json-lines.yaml'));
    expect(containerStatusText(parseComposePs(fx.stdout))).toBe(
      'partial\nballast-pod-web-web-1 web running (Up 7 hours) 0.0.0.0:8081->80/tcp\nballast-pod-web-cache-1 cache exited (Exited (0) 2 hours ago)',
    );
    expect(containerStatusText([])).toBe('none');
  });

  it('refuses garbage and truncated output', () => {
    expect(parseError(() => parseComposePs('[{"Name": "a"')).message).toMatch(/not a JSON array/);
    expect(parseError(() => parseComposePs('{"Name":"a"}\n{"Name":')).line).toBe(2);
    expect(parseError(() => parseComposePs('[1]')).message).toMatch(/JSON object/);
    expect(parseError(() => parseComposePs('CONTAINER ID  IMAGE\nabc  def\n')).message).toMatch(/Name … State/);
    expect(parseError(() => parseComposePs('Name   Command   State\nx\n')).message).toMatch(/dashed rule/);
    expect(parseError(() => parseComposePs('Name   Command   State\n-----\nonlyname\n')).line).toBe(3);
  });
});

describe('systemctl show', () => {
  const text =
    'Id=a.service\nLoadState=loaded\nActiveState=active\nSubState=exited\nUnitFileState=enabled\n\nId=b.service\nLoadState=loaded\nActiveState=inactive\nSubState=dead\nUnitFileState=enabled\n\nId=c.service\nLoadState=not-found\nActiveState=inactive\nSubState=dead\nUnitFileState=\n\nId=d.service\nLoadState=masked\nActiveState=inactive\nSubState=dead\nUnitFileState=masked\n';
  it('reads blocks and maps them to the pod states', () => {
    const b = parseSystemctlShow(text);
    expect(b.map((x) => x.Id)).toEqual(['a.service', 'b.service', 'c.service', 'd.service']);
    expect(b.map((x) => unitState(x))).toEqual([
      { state: 'online', locked: false },
      { state: 'offline', locked: false },
      { state: 'disabled', locked: false },
      { state: 'disabled', locked: true },
    ]);
    expect(unitState({ ActiveState: 'active', UnitFileState: 'disabled' })).toEqual({ state: 'online', locked: false });
  });
  it('refuses lines that are not Key=Value', () => {
    expect(parseError(() => parseSystemctlShow('Id=a\nSystem has not been booted with systemd\n')).line).toBe(2);
  });
});

// fstab, lsblk and findmnt themselves: test/parsers/tools/
describe('fstab', () => {
  it("reads the pod data entry's options as the spec's booleans", () => {
    const [e] = parseFstab('UUID=x /srv/pods xfs rw,noatime,acl,user_xattr 0 2 # ballast:pod-data\n');
    expect(mountOptionsOf(e.fs_mntops)).toEqual({ rw: true, mand: false, noatime: true, xattr: true, posixacl: true });
    expect(mountOptionsOf(['ro', 'mand', 'xattr', 'posixacl'])).toEqual({
      rw: false,
      mand: true,
      noatime: false,
      xattr: true,
      posixacl: true,
    });
  });
  it('replaces its own entries in place and keeps every other line', () => {
    const before = '# head\n/dev/sda1 / ext4 defaults 0 1\n/dev/old /srv/pods xfs defaults 0 2\n';
    const once = upsertFstab(before, [
      {
        marker: 'pod-data',
        fs_spec: '/srv/data',
        fs_file: '/srv/pods',
        fs_vfstype: 'none',
        fs_mntops: ['bind', 'nofail'],
        fs_freq: 0,
        fs_passno: 0,
      },
    ]);
    expect(once).toBe(
      '# head\n/dev/sda1 / ext4 defaults 0 1\n/srv/data /srv/pods none bind,nofail 0 0 # ballast:pod-data\n',
    );
    const twice = upsertFstab(once, [
      {
        marker: 'pod-data',
        fs_spec: 'UUID=u',
        fs_file: '/srv/pods',
        fs_vfstype: 'xfs',
        fs_mntops: ['defaults', 'nofail'],
        fs_freq: 0,
        fs_passno: 2,
      },
      {
        marker: 'pod-images',
        fs_spec: 'UUID=v',
        fs_file: '/var/lib/docker',
        fs_vfstype: 'ext4',
        fs_mntops: ['defaults', 'nofail'],
        fs_freq: 0,
        fs_passno: 2,
      },
    ]);
    expect(twice).toBe(
      '# head\n/dev/sda1 / ext4 defaults 0 1\nUUID=u /srv/pods xfs defaults,nofail 0 2 # ballast:pod-data\nUUID=v /var/lib/docker ext4 defaults,nofail 0 2 # ballast:pod-images\n',
    );
  });
});

describe('blkid -p -o export', () => {
  it('reads KEY=value lines and refuses anything else, naming the line', () => {
    expect(parseBlkidExport('DEVNAME=/dev/sdc\nUUID=9b2d\nTYPE=xfs\nUSAGE=filesystem\n')).toEqual({
      DEVNAME: '/dev/sdc',
      UUID: '9b2d',
      TYPE: 'xfs',
      USAGE: 'filesystem',
    });
    expect(parseBlkidExport('')).toEqual({});
    expect(parseError(() => parseBlkidExport('TYPE=xfs\nnot a pair\n')).line).toBe(2);
  });
});

describe('unit words', () => {
  it('quotes and escapes for systemd, and reads ExecStart back', () => {
    expect(unitWord('/srv/pods/a')).toBe('/srv/pods/a');
    expect(unitWord('a b')).toBe('"a b"');
    expect(unitWord('100%$HOME')).toBe('"100%%$$HOME"');
    expect(
      execStartOf('[Service]\nExecStart=/usr/bin/docker-compose -p x -f "/srv/my pods/x/compose.json" up -d\n'),
    ).toEqual(['/usr/bin/docker-compose', '-p', 'x', '-f', '/srv/my pods/x/compose.json', 'up', '-d']);
  });
});
