/**
 * Route tier: recipes never ship a credential (#31 item 12). The s3-gateway recipe's keys are
 * generated for each pod when it is set; no recipe holds a fixed credential or a placeholder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RECIPES, randomString, recipeServices } from '../../handlers/pod/recipes/index';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { POD_ROUTES } from './pod-helpers';

const SC = '/usr/bin/systemctl';
const PROPS = '--property=Id,LoadState,ActiveState,SubState,UnitFileState';
const show = (unit: string) =>
  fixture(
    [SC, 'show', '--no-pager', PROPS, '--', unit],
    `Id=${unit}\nLoadState=loaded\nActiveState=inactive\nSubState=dead\nUnitFileState=disabled\n`,
  );

let t: TestHost;
afterEach(async () => t?.close());

const envOf = (pod: string) => {
  const c = JSON.parse(readFileSync(join(t.config.paths.podFiles, `ballast-pod-${pod}`, 'compose.json'), 'utf8')) as {
    services: { s3: { environment: string[]; ports: string[] } };
  };
  return c.services.s3;
};

describe('the s3-gateway recipe', () => {
  it('gets its own access and secret key in each pod, and the recipe object shows none', async () => {
    t = await makeTestHost({
      routes: POD_ROUTES,
      fixtures: [fixture([SC, 'daemon-reload'], ''), show('ballast-pod-s3a.service'), show('ballast-pod-s3b.service')],
      config: { settings: { pod: { checkHostPorts: false, engineCheck: false } } },
    });
    writeFileSync(t.config.paths.fstab, 'UUID=abc /srv/pods xfs defaults 0 2\n');
    const fileContents = { version: '3.8', services: {} };
    for (const name of ['s3a', 's3b']) {
      const r = await t.call('POST', `/api/v2/pod/${name}/set`, { body: { fileContents, recipes: ['s3-gateway'] } });
      expect([name, r.status]).toEqual([name, 200]);
    }
    const a = envOf('s3a');
    const b = envOf('s3b');
    for (const s of [a, b]) {
      expect(s.ports).toEqual(['8000:8000']);
      expect(s.environment).toHaveLength(3);
      expect(s.environment[0]).toBe('REMOTE_MANAGEMENT_DISABLE=1');
      expect(s.environment[1]).toMatch(/^SCALITY_ACCESS_KEY_ID=[A-Z0-9]{20}$/);
      expect(s.environment[2]).toMatch(/^SCALITY_SECRET_ACCESS_KEY=[A-Za-z0-9]{40}$/);
    }
    expect(a.environment[1]).not.toBe(b.environment[1]);
    expect(a.environment[2]).not.toBe(b.environment[2]);
    const shown = await t.call<{ services: Record<string, unknown>[] }>('GET', '/api/v2/pod/suggested/s3-gateway');
    expect(shown.json.services).toEqual([
      {
        service_name: 's3',
        service_config: {
          image: 'zenko/cloudserver:latest',
          container_name: 's3',
          environment: ['REMOTE_MANAGEMENT_DISABLE=1'],
          volumes: ['./data:/usr/src/app/localData', './metadata:/usr/src/app/localMetadata'],
          ports: ['8000:8000'],
          restart: 'unless-stopped',
        },
      },
    ]);
  });
});

describe('recipes', () => {
  it('hold no credential and no placeholder', () => {
    expect(JSON.stringify(RECIPES)).not.toMatch(/change.?me|placeholder|replace|xxxx|secret123|password|minioadmin/i);
    for (const r of RECIPES)
      for (const s of r.services)
        for (const e of s.service_config.environment) {
          // a credential is generated per pod (`generated`), never a fixed value in the recipe
          expect([r.name, e]).not.toEqual([r.name, expect.stringMatching(/^[^=]*(KEY|SECRET|PASS|TOKEN|CRED)[^=]*=/i)]);
        }
  });

  it('generated values are long, from their alphabet, and differ every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const v = randomString(40, 'ab');
      expect(v).toMatch(/^[ab]{40}$/);
      seen.add(v);
    }
    expect(seen.size).toBe(200);
    // every character of the alphabet is reachable, none past it (no modulo bias, no off-by-one)
    const counts = new Map<string, number>();
    for (const c of randomString(360_000, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'))
      counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(36);
    // 10 000 each (σ ≈ 100); a plain `byte % 36` would give the first four 11 250
    for (const [c, n] of counts) expect([c, n > 9_400 && n < 10_600]).toEqual([c, true]);
    const twice = [recipeServices(RECIPES[1], 'p'), recipeServices(RECIPES[1], 'p')].map((x) => JSON.stringify(x));
    expect(twice[0]).not.toBe(twice[1]);
  });
});
