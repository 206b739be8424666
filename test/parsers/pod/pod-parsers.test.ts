import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerStatusText, parseComposePs } from '../../../handlers/pod/parse/compose-ps';
import { mountOptions, parseFstab } from '../../../handlers/pod/parse/fstab';
import { parseFindmntOne, parseLsblkOne } from '../../../handlers/pod/parse/block';
import { parseSystemctlShow } from '../../../handlers/tools/systemctl-show';
import { unitState } from '../../../handlers/pod/unit-state';
import { upsertFstab } from '../../../handlers/pod/render/fstab';
import { execStartOf, unitWord } from '../../../handlers/pod/render/unit';
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

describe('fstab', () => {
  // the shape of jc's ubuntu-18.04 fstab fixture (upstream-samples/fstab), with a comment after the fields
  const sample = 'LABEL=cloudimg-rootfs\t/\t ext4\tdefaults\t0 0\n/dev/sda2 none swap sw 0 0    # this is a comment\n';
  it('reads fstab lines (fields 5 and 6 optional, trailing comments, octal escapes)', () => {
    const e = parseFstab(
      `${sample}\n/dev/sdz1 /srv/with\\040space xfs defaults\nUUID=x /srv/pods xfs rw,noatime,acl,user_xattr 0 2 # ballast:pod-data\n`,
    );
    const last = e[e.length - 1];
    expect(e[e.length - 2]).toMatchObject({
      fs_spec: '/dev/sdz1',
      fs_file: '/srv/with space',
      fs_freq: 0,
      fs_passno: 0,
    });
    expect(last).toMatchObject({
      fs_spec: 'UUID=x',
      fs_file: '/srv/pods',
      fs_vfstype: 'xfs',
      fs_mntops: ['rw', 'noatime', 'acl', 'user_xattr'],
      fs_freq: 0,
      fs_passno: 2,
    });
    expect(mountOptions(last.fs_mntops)).toEqual({ rw: true, mand: false, noatime: true, xattr: true, posixacl: true });
  });
  it('refuses short and non-numeric lines', () => {
    expect(parseError(() => parseFstab('# c\n/dev/sda1 /\n')).line).toBe(2);
    expect(parseError(() => parseFstab('/dev/sda1 / ext4 defaults x 1\n')).message).toMatch(/fs_freq/);
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

describe('lsblk / findmnt', () => {
  it('reads one device and one mount', () => {
    expect(
      parseLsblkOne(
        '{"blockdevices":[{"path":"/dev/sdc","type":"disk","fstype":null,"uuid":null,"mountpoints":[null]}]}',
      ),
    ).toEqual({ path: '/dev/sdc', type: 'disk', fstype: null, uuid: null, mountpoints: [] });
    // util-linux 2.38: one entry per mount (bind mounts too), `[SWAP]` for active swap
    expect(
      parseLsblkOne(
        '{"blockdevices":[{"path":"/dev/sdd","type":"disk","fstype":"ext4","uuid":"u","mountpoints":["/srv/a","/mnt/b"]}]}',
      ).mountpoints,
    ).toEqual(['/srv/a', '/mnt/b']);
    // asked for and missing (util-linux < 2.37): not read as "not mounted"
    expect(
      parseError(() => parseLsblkOne('{"blockdevices":[{"path":"/dev/sdc","type":"disk","fstype":null,"uuid":null}]}'))
        .message,
    ).toMatch(/mountpoints/);
    expect(parseFindmntOne('{"filesystems":[{"target":"/srv/data","source":"/dev/sdb","fstype":"xfs"}]}')).toEqual({
      target: '/srv/data',
      source: '/dev/sdb',
      fstype: 'xfs',
    });
    expect(parseError(() => parseLsblkOne('{"blockdevices":[]}')).message).toMatch(/one block device/);
    expect(parseError(() => parseFindmntOne('{"filesystems":')).message).toMatch(/JSON object/);
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
