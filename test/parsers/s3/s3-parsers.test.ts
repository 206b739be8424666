/**
 * The S3 area's pure parsers over reviewed fixtures (fixtures/ss, fixtures/systemctl, fixtures/s3),
 * round trips of the renderers through them, and garbage or truncated input giving a ParseError.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile } from '../../../handlers/s3/parse/env-file';
import { parseIsEnabled } from '../../../handlers/s3/parse/is-enabled';
import { parseSsListening } from '../../../handlers/s3/parse/ss';
import { parseUnit } from '../../../handlers/tools/systemd-unit';
import { renderEnvFile } from '../../../handlers/s3/render/env-file';
import { renderCommandWord, renderUnit, RenderError } from '../../../handlers/s3/render/unit';
import { s3Settings } from '../../../handlers/s3/contract';
import { readFixture } from '../../../runtime/system/fixture-file';
import { repo } from '../../helpers/host';
import { parseError } from '../../helpers/parse-error';

const fx = (p: string) => join(repo, 'fixtures', p);
const expected = (p: string): unknown => JSON.parse(readFileSync(fx(p), 'utf8'));

describe('ss -Hltn', () => {
  for (const name of ['listening-debian12', 'listening-resolved-interface']) {
    it(name, () => {
      expect(parseSsListening(readFixture(fx(`ss/${name}.yaml`)).stdout)).toEqual(expected(`ss/${name}.expected.json`));
    });
  }
  it('no listeners: no ports', () => expect(parseSsListening('')).toEqual([]));
  it('garbage and truncated lines are ParseErrors naming the line', () => {
    expect(
      parseError(() => parseSsListening('LISTEN 0 128 0.0.0.0:22 0.0.0.0:*\nState Recv-Q Send-Q Local Peer\n')).line,
    ).toBe(2);
    expect(parseError(() => parseSsListening('LISTEN 0      128    0.0.0.0')).line).toBe(1);
    expect(parseError(() => parseSsListening('LISTEN 0 128 0.0.0.0:http 0.0.0.0:*')).message).toMatch(
      /no numeric port/,
    );
  });
});

describe('systemctl is-enabled', () => {
  for (const name of ['enabled', 'disabled']) {
    it(name, () =>
      expect(parseIsEnabled(readFixture(fx(`systemctl/is-enabled-${name}.yaml`)).stdout)).toBe(
        expected(`systemctl/is-enabled-${name}.expected.json`),
      ),
    );
  }
  it('other states', () => {
    expect(parseIsEnabled('enabled-runtime\n')).toBe(true);
    expect(['static', 'masked', 'linked', 'not-found'].map((s) => parseIsEnabled(`${s}\n`))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
  it('nothing or an unknown word is a ParseError', () => {
    expect(
      parseError(() => parseIsEnabled(readFixture(fx('systemctl/is-enabled-not-found.yaml')).stdout)).message,
    ).toMatch(/no state printed/);
    expect(parseError(() => parseIsEnabled('Enabled\n')).message).toMatch(/unknown unit file state/);
  });
});

describe('unit file', () => {
  it('the rendered media unit', () => {
    expect(parseUnit(readFileSync(fx('s3/s3-media.service'), 'utf8'))).toEqual(
      expected('s3/s3-media.service.expected.json'),
    );
  });
  it('continuation lines join', () =>
    expect(parseUnit('[Service]\nExecStart=/bin/a \\\n  b\n').Service.ExecStart).toBe('/bin/a  b'));
  it('garbage is a ParseError', () => {
    expect(parseError(() => parseUnit('[Service]\nthis is not a setting\n')).line).toBe(2);
    expect(parseError(() => parseUnit('User=root\n')).message).toMatch(/before any \[Section\]/);
    expect(parseError(() => parseUnit('[Service]\nUser=ro\0ot\n')).message).toMatch(/NUL/);
  });
});

describe('environment file', () => {
  it('every form systemd.exec(5) allows', () => {
    expect(parseEnvFile(readFileSync(fx('s3/hand-edited.env'), 'utf8'))).toEqual(
      expected('s3/hand-edited.env.expected.json'),
    );
  });
  it('unterminated quotes and text after a quote are ParseErrors naming the line, never the value', () => {
    const e = parseError(() => parseEnvFile('A=1\nMINIO_ROOT_PASSWORD="s3cret\n'));
    expect([e.line, e.message.includes('s3cret')]).toEqual([2, false]);
    expect(parseError(() => parseEnvFile("A='x' y\n")).message).toMatch(/after the closing quote/);
    expect(parseError(() => parseEnvFile('1A=x\n')).line).toBe(1);
  });
  it('renderEnvFile round-trips hostile values exactly', () => {
    const env = s3Settings.parse({}).env;
    const v = { rootUser: 'a"b\\c', rootPassword: "p $HOME `id` \\\" 'q' #x %n", path: '/srv/a b/"c"', port: '9000' };
    const text = renderEnvFile({ shareName: 'x', ...v, env });
    expect(parseEnvFile(text)).toEqual({
      MINIO_ROOT_USER: v.rootUser,
      MINIO_ROOT_PASSWORD: v.rootPassword,
      MINIO_VOLUMES: v.path,
      BALLAST_S3_PORT: v.port,
    });
    expect(() => renderEnvFile({ shareName: 'x', ...v, rootPassword: 'a\nB=1', env })).toThrow(RenderError);
  });
});

describe('unit renderer', () => {
  const vars = { path: 'P', port: 'Q' };
  it('quotes and escapes command words per systemd rules', () => {
    expect(renderCommandWord('--address', vars)).toBe('--address');
    expect(renderCommandWord(':{port}', vars)).toBe(':${Q}');
    expect(renderCommandWord('{path}', vars)).toBe('${P}');
    expect(renderCommandWord('a b', vars)).toBe('"a b"');
    expect(renderCommandWord('50%', vars)).toBe('"50%%"');
    expect(renderCommandWord('$HOME', vars)).toBe('"$$HOME"');
    expect(renderCommandWord('say "hi" \\ {path}', vars)).toBe('"say \\"hi\\" \\\\ ${P}"');
    expect(() => renderCommandWord(';', vars)).toThrow(RenderError);
    expect(() => renderCommandWord('a\nExecStartPre=/bin/evil', vars)).toThrow(RenderError);
  });
  it('refuses an environment file path it cannot write into a unit', () => {
    const settings = s3Settings.parse({});
    expect(() => renderUnit({ shareName: 'x', envFile: '/etc/ballast s3/x.env', settings })).toThrow(RenderError);
    expect(() => renderUnit({ shareName: 'x', envFile: '/etc/%n/x.env', settings })).toThrow(RenderError);
  });
  it('the host refuses settings it could not render', () => {
    expect(s3Settings.safeParse({ serverCommand: ['minio', 'server'] }).success).toBe(false);
    expect(s3Settings.safeParse({ serverCommand: ['/opt/my server/bin'] }).success).toBe(false);
    expect(s3Settings.safeParse({ serverCommand: ['/bin/s3', ';', '/bin/evil'] }).success).toBe(false);
    expect(s3Settings.safeParse({ serverCommand: ['/bin/s3', 'a\nb'] }).success).toBe(false);
    expect(s3Settings.safeParse({ env: { rootUser: 'A', rootPassword: 'A' } }).success).toBe(false);
    expect(s3Settings.safeParse({ user: '-root' }).success).toBe(false);
  });
  it('renders the configured user, group and command', () => {
    const settings = s3Settings.parse({
      user: 's3user',
      group: 's3',
      serverCommand: ['/opt/s3/bin/server', '--data={path}', '--port', '{port}'],
      env: { rootUser: 'AK', rootPassword: 'SK', path: 'DIR', port: 'PORT' },
    });
    const unit = parseUnit(renderUnit({ shareName: 'x', envFile: '/etc/ballast/s3/x.env', settings }));
    expect(unit.Service).toMatchObject({
      User: 's3user',
      Group: 's3',
      ExecStart: '/opt/s3/bin/server --data=${DIR} --port ${PORT}',
    });
  });
});
