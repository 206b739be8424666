/**
 * kill -9 during Kerberos configuration writes: a live host process (dist/host/cli.mjs) is killed
 * at random moments while it replaces krb5.conf and a realm file, then started again. Every time
 * each file is exactly one of the versions written (old or new, never a mix or a truncation), no
 * temp file is left beside it once the host is up, and the intent journal is empty.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DEFAULT_PATHS } from '../../runtime/config';
import { privateDir } from '../helpers/tmp';
import { HostProcess } from './helpers/host-process';

const ROUNDS = 10;
/** kills land at random: go on past ROUNDS (bounded) until some came before a write finished and some after */
const MAX_ROUNDS = 24;

let host: HostProcess;
let paths: Record<string, string>;

/** A krb5.conf version: the spec's first line, then enough relations that a write takes a moment. */
const conf = (n: number) =>
  `includedir /etc/krb5.conf.d\n\n[libdefaults]\n\tdefault_realm = V${n}.EXAMPLE.TEST\n${Array.from({ length: 400 }, (_, i) => `\tx_${n}_${i} = ${'v'.repeat(60)}\n`).join('')}`;
const realm = (n: number) =>
  `[realms]\n\tV${n}.EXAMPLE.TEST = {\n${Array.from({ length: 400 }, (_, i) => `\t\tkdc = kdc${i}.v${n}.example.test:88\n`).join('')}\t}\n`;

beforeAll(() => {
  const dir = privateDir('ballast-krbkill');
  const root = join(dir, 'root');
  paths = Object.fromEntries(Object.entries(DEFAULT_PATHS).map(([k, p]) => [k, join(root, p)]));
  mkdirSync(paths.krb5ConfD, { recursive: true });
  mkdirSync(dirname(paths.krb5Conf), { recursive: true });
  writeFileSync(paths.krb5Conf, conf(0));
  writeFileSync(join(paths.krb5ConfD, 'lab.conf'), realm(0));
  const configFile = join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    stringify({
      stateDir: join(dir, 'state'),
      listen: { host: '127.0.0.1', port: 0 },
      paths,
      settings: { traffic: { reconcileOnStart: false } },
    }),
  );
  host = new HostProcess(configFile, join(dir, 'state'));
});

afterAll(() => host?.kill9());

describe('kill -9 during Kerberos configuration writes', () => {
  it(`${ROUNDS} kills at random points: krb5.conf and the realm file are whole versions, no temp file is left`, async () => {
    // what the conf file may hold: the include line is stored naming the configured directory
    const confVersions = Array.from({ length: MAX_ROUNDS + 1 }, (_, n) =>
      conf(n).replace('includedir /etc/krb5.conf.d', `includedir ${paths.krb5ConfD}`),
    );
    const realmVersions = Array.from({ length: MAX_ROUNDS + 1 }, (_, n) => realm(n));
    const outcomes: string[] = [];
    const bothSides = () => outcomes.some((o) => o.includes('killed')) && outcomes.some((o) => o.includes('200'));
    for (let round = 1; ; round++) {
      const url = await host.start();
      expect(host.openIntents()).toBe(0);
      const confNow = readFileSync(paths.krb5Conf, 'utf8');
      expect(
        confNow === conf(0) || confVersions.includes(confNow),
        `krb5.conf after round ${round - 1} is not one whole version`,
      ).toBe(true);
      expect(realmVersions).toContain(readFileSync(join(paths.krb5ConfD, 'lab.conf'), 'utf8'));
      for (const d of [dirname(paths.krb5Conf), paths.krb5ConfD])
        expect(readdirSync(d).filter((n) => n.includes('.tmp-'))).toEqual([]);
      // this start checked the last kill; stop once enough rounds (and both sides) were seen
      if (round > MAX_ROUNDS || (round > ROUNDS && bothSides())) break;
      const post = (path: string, body: unknown) =>
        fetch(`${url}/api/v2/kerberos${path}`, {
          method: 'POST',
          headers: { token: host.token, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
          .then((r) => String(r.status))
          .catch(() => 'killed');
      const answers = Promise.all([
        post('/conf/update', { conf: conf(round) }),
        post('/realm/lab/update', { conf: realm(round) }),
      ]);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 400)));
      await host.kill9();
      outcomes.push((await answers).join('/'));
    }
    expect([conf(0), ...confVersions]).toContain(readFileSync(paths.krb5Conf, 'utf8'));
    // kills landed both before a write finished and after one: the loop saw both sides
    expect(outcomes.some((o) => o.includes('killed'))).toBe(true);
    expect(outcomes.some((o) => o.includes('200'))).toBe(true);
    console.log(`kerberos kill loop (conf/realm answers per round): ${outcomes.join(', ')}`);
  }, 300_000);
});
