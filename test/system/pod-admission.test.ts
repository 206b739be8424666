/**
 * System tier: pod admission against the real compose tool (issue #27 "Done when"). Every file of
 * fixtures/compose-files/hostile is one attack on a Compose key that reaches the host; every file
 * of fixtures/compose-files/admitted is something an operator must be able to run.
 *
 * For each file, this machine's `docker-compose config` (1.29, under strace to see which host
 * files it reads) resolves the model the engine would run, and an oracle written apart from the
 * product (helpers/compose-oracle.ts) judges it. Then our admission (checkCompose, with the same
 * docker-compose as its engine check) must refuse every hostile file, naming the key, and admit
 * every benign one. A hostile file must also be refused by docker-compose itself or be harmful by
 * the oracle: a file neither refuses is not an attack, and the corpus is wrong.
 *
 * The layout is a private copy of the appliance's: <tmp>/srv/pods/ballast-pod-a (the pod's data
 * directory, with `escape -> /`), a sibling pod ballast-pod-b, and <tmp>/var/lib/ballast/pods
 * (where the compose files live).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { podSettings, type ValidateResult } from '../../handlers/pod/contract';
import { engineRunner, type EngineRunner } from '../../runtime/areas/pod/admission/engine';
import { checkCompose } from '../../runtime/areas/pod/compose-check';
import { repo } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import {
  harmful,
  learnToolBaseline,
  mapLimit,
  spawnWithStdin,
  traceComposeConfig,
  type ComposeRun,
} from './helpers/compose-oracle';

const HOSTILE = join(repo, 'fixtures/compose-files/hostile');
const ADMITTED = join(repo, 'fixtures/compose-files/admitted');
const PROJECT = 'ballast-pod-a';
const COMPOSE = '/usr/bin/docker-compose';
/** the engine's environment: no X, N, R…; HOME set so `$HOME`/`~` reach root's home, the worst case */
const ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C', HOME: '/root' };
/** what the host listens on, for the port rule: its sshd */
const LISTENING = new Set(['22/tcp']);

const S = 'fileContents.services.a.';
/** Each hostile file, and where our refusal must point (any issue path starting with one of these). */
const EXPECTED: Record<string, string | string[]> = {
  'interp-apparmor-unconfined': `${S}security_opt`,
  'interp-bind-default-etc': `${S}volumes`,
  'interp-bind-home-ssh': `${S}volumes`,
  'interp-build-root': `${S}build`,
  'interp-cap-add': `${S}cap_add`,
  'interp-cgroup-host': `${S}cgroup`,
  'interp-env-file-shadow': `${S}env_file`,
  'interp-in-key': `${S}sysctls`,
  'interp-ipc-host': `${S}ipc`,
  'interp-long-bind-root': `${S}volumes`,
  'interp-network-mode-host': `${S}network_mode`,
  'interp-pid-host': `${S}pid`,
  'interp-privileged': `${S}privileged`,
  'interp-relative-parent': `${S}volumes`,
  'interp-userns-host': `${S}userns_mode`,
  'interp-uts-host': `${S}uts`,
  'interp-volume-driver-opts-bind': 'fileContents.volumes.d',
  'privileged-int-1': `${S}privileged`,
  'privileged-string-true': `${S}privileged`,
  'privileged-string-upper-y': `${S}privileged`,
  'privileged-string-yes': `${S}privileged`,
  'privileged-true': `${S}privileged`,
  'privileged-yaml11-on': `${S}privileged`,
  'bind-dev': `${S}volumes`,
  'bind-docker-sock': `${S}volumes`,
  'bind-etc': `${S}volumes`,
  'bind-other-pod': `${S}volumes`,
  'bind-parent-allpods': `${S}volumes`,
  'bind-pod-files': `${S}volumes`,
  'bind-proc': `${S}volumes`,
  'bind-root': `${S}volumes`,
  'bind-sibling-prefix': `${S}volumes`,
  'bind-symlink-escape': `${S}volumes`,
  'bind-symlink-escape-sub': `${S}volumes`,
  'bind-sys': `${S}volumes`,
  'bind-tilde-ssh': `${S}volumes`,
  'long-bind-other-pod': `${S}volumes`,
  'long-bind-relative-bare': `${S}volumes`,
  'long-bind-root-rshared': `${S}volumes`,
  'long-bind-symlink-escape': `${S}volumes`,
  'volume-driver-opts-bind-etc': 'fileContents.volumes.etc',
  'volume-driver-opts-bind-other-pod': 'fileContents.volumes.b',
  'volume-driver-opts-ext4': 'fileContents.volumes.disk',
  'volume-driver-opts-tmpfs-bind': 'fileContents.volumes.t',
  'volume-driver-plugin': 'fileContents.volumes.p',
  'volume-external-legacy': 'fileContents.volumes.d',
  'volume-name-prefix-pod': 'fileContents.volumes.d',
  'volume-nfs-localhost': 'fileContents.volumes.n',
  'volume-external-other-pod': 'fileContents.volumes.data',
  'volume-name-other-pod': 'fileContents.volumes.data',
  'volume-overlay-lowerdir': 'fileContents.volumes.ov',
  'sysctl-core-pattern': `${S}sysctls`,
  'sysctl-list-unsafe': `${S}sysctls`,
  'ns-cgroup-host': `${S}cgroup`,
  'ns-ipc-container-other-pod': `${S}ipc`,
  'ns-ipc-host': `${S}ipc`,
  'ns-network-container-other-pod': `${S}network_mode`,
  'ns-network-host': `${S}network_mode`,
  'ns-network-path': `${S}network_mode`,
  'ns-pid-container-other-pod': `${S}pid`,
  'ns-pid-host': `${S}pid`,
  'ns-userns-host': `${S}userns_mode`,
  'ns-uts-host': `${S}uts`,
  'volumes-from-container': `${S}volumes_from`,
  'volumes-from-bare-name': `${S}volumes_from`,
  'external-links': `${S}external_links`,
  'cap-add-all': `${S}cap_add`,
  'cap-add-lowercase-module': `${S}cap_add`,
  'cap-add-net-admin': `${S}cap_add`,
  'cap-add-prefixed-ptrace': `${S}cap_add`,
  'cap-add-sys-admin': `${S}cap_add`,
  'device-cgroup-rules': `${S}device_cgroup_rules`,
  'devices-disk': `${S}devices`,
  'devices-mem': `${S}devices`,
  gpus: `${S}gpus`,
  'deploy-reservation-devices': `${S}deploy`,
  'security-opt-apparmor-unconfined': `${S}security_opt`,
  'security-opt-colon-label': `${S}security_opt`,
  'security-opt-colon-seccomp': `${S}security_opt`,
  'security-opt-label-disable': `${S}security_opt`,
  'security-opt-no-new-privileges-false': `${S}security_opt`,
  'security-opt-seccomp-host-file': `${S}security_opt`,
  'security-opt-seccomp-unconfined': `${S}security_opt`,
  'security-opt-systempaths-unconfined': `${S}security_opt`,
  'cgroup-parent': `${S}cgroup_parent`,
  runtime: `${S}runtime`,
  isolation: `${S}isolation`,
  'oom-score-adj-negative': `${S}oom_score_adj`,
  'oom-kill-disable': `${S}oom_kill_disable`,
  'cpu-rt-runtime': `${S}cpu_rt_`,
  'storage-opt': `${S}storage_opt`,
  'blkio-device-paths': `${S}blkio_config`,
  'credential-spec-file': `${S}credential_spec`,
  'secret-file-shadow': 'fileContents.secrets.s',
  'secret-file-other-pod': 'fileContents.secrets.s',
  'secret-file-symlink-escape': 'fileContents.secrets.s',
  'secret-environment': 'fileContents.secrets.s',
  'config-file-etc': 'fileContents.configs.c',
  'config-environment': 'fileContents.configs.c',
  'extends-host-file': `${S}extends`,
  'extends-other-pod': `${S}extends`,
  'extends-pod-data-file': `${S}extends`,
  include: 'fileContents.include',
  'build-context-etc': `${S}build`,
  'build-entitlements': `${S}build`,
  'build-network-host': `${S}build`,
  'build-privileged': `${S}build`,
  'build-root': `${S}build`,
  'build-secrets-host-file': 'fileContents.secrets.s',
  'build-ssh': `${S}build`,
  'build-symlink-escape': `${S}build`,
  'env-file-other-pod': `${S}env_file`,
  'env-file-other-pod-short': `${S}env_file`,
  'env-file-shadow': `${S}env_file`,
  'env-file-symlink-escape': `${S}env_file`,
  'label-file': `${S}label_file`,
  'network-bridge-name': 'fileContents.networks.n',
  'network-default-external-host': 'fileContents.networks.default',
  'network-name-prefix-pod': 'fileContents.networks.n',
  'network-external-host': 'fileContents.networks.h',
  'network-external-other-pod': 'fileContents.networks.b',
  'network-macvlan-parent': 'fileContents.networks.lan',
  'network-name-other-pod': 'fileContents.networks.b',
  'logging-plugin-driver': `${S}logging`,
  'logging-syslog-tls-files': `${S}logging`,
  'logging-syslog-unix-socket': `${S}logging`,
  'post-start-privileged': `${S}post_start`,
  'pre-stop-privileged': `${S}pre_stop`,
  'develop-watch': `${S}develop`,
  'use-api-socket': `${S}use_api_socket`,
  provider: `${S}provider`,
  models: [`${S}models`, 'fileContents.models'],
  'yaml-merge-key-privileged': `${S}privileged`,
  'yaml-alias-bind': `${S}volumes`,
  'top-name-other-project': 'fileContents.name',
  'container-name-other-pod': `${S}container_name`,
  'container-name-prefix-pod': `${S}container_name`,
  'ports-host-ssh': `${S}ports`,
  'ports-long-ssh': `${S}ports`,
  'ports-range-over-ssh': `${S}ports`,
};

const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.yaml'))
    .sort();

interface Layout {
  podData: string;
  podDir: string;
  podFiles: string;
}

/** The appliance's directories in a private root; pod b holds what an attacker would want. */
function makeLayout(): Layout {
  const root = privateDir('pod-admission');
  const podData = join(root, 'srv/pods');
  const podDir = join(podData, PROJECT);
  const podFiles = join(root, 'var/lib/ballast/pods');
  for (const d of [
    join(podDir, 'html'),
    join(podDir, 'data'),
    join(podData, 'ballast-pod-b/x'),
    join(podFiles, PROJECT),
  ])
    mkdirSync(d, { recursive: true });
  symlinkSync('/', join(podDir, 'escape'));
  const privileged = (svc: string) => `services:\n  ${svc}:\n    image: busybox\n    privileged: true\n    pid: host\n`;
  // what the pod's container wrote into its own data directory, for extends to pick up
  writeFileSync(join(podDir, 'data/base.yaml'), privileged('base'));
  writeFileSync(join(podData, 'ballast-pod-b/.env'), 'B_SECRET=pod-b-only\n');
  writeFileSync(join(podData, 'ballast-pod-b/compose.yaml'), privileged('web'));
  return { podData, podDir, podFiles };
}

interface Case {
  name: string;
  text: string;
  tool: ComposeRun;
  oracle: string[];
}

async function resolveAll(dir: string, names: string[], l: Layout, baseline: Set<string>): Promise<Case[]> {
  return mapLimit(names, 4, async (f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    // in the pod's data directory, so compose resolves a path relative to the file (extends) as
    // our admission does, relative to the pod's data directory
    const file = join(l.podDir, `.candidate-${f}`);
    copyFileSync(join(dir, f), file);
    const tool = await traceComposeConfig({
      argv: [COMPOSE, '-p', PROJECT, '--project-directory', l.podDir, '-f', file, 'config'],
      cwd: l.podDir,
      env: ENV,
    });
    const oracle =
      tool.code === 0
        ? harmful(parse(tool.stdout) as Record<string, unknown>, {
            podDir: l.podDir,
            project: PROJECT,
            hostListening: LISTENING,
            opened: tool.opened,
            ownFiles: [file],
            toolBaseline: baseline,
          })
        : [];
    return { name: f.replace(/\.yaml$/, ''), text, tool, oracle };
  });
}

const settings = podSettings.parse({ composeCommand: [COMPOSE], checkHostPorts: true });

interface Ours {
  r: ValidateResult;
  /** the model docker-compose resolved for our engine check, when it ran and succeeded */
  engineModel?: Record<string, unknown>;
}

/** Our admission of one file, with the engine's model it checked (the runner is ours to watch). */
async function ours(text: string, l: Layout): Promise<Ours> {
  const run = engineRunner(settings, (argv, o) =>
    spawnWithStdin({ argv, cwd: '/', env: { ...ENV, ...o.env }, stdin: o.stdin, timeoutMs: o.timeoutMs }),
  );
  let engineModel: Record<string, unknown> | undefined;
  const engine: EngineRunner = async (candidate) => {
    const m = await run(candidate);
    if (m.ok) engineModel = m.model;
    return m;
  };
  const r = await checkCompose(
    { project: PROJECT, fileContents: text, requireVersion: false, probeHostPorts: true },
    { settings, podData: l.podData, podFiles: l.podFiles, listeners: async () => LISTENING, engine },
  );
  return { r, engineModel };
}

describe('pod admission: hostile and benign compose files against docker-compose config', () => {
  let layout: Layout;
  let hostile: Case[];
  let admitted: Case[];

  beforeAll(async () => {
    for (const bin of [COMPOSE, '/usr/bin/strace'])
      if (!existsSync(bin)) throw new Error(`needs ${bin} (apt-get install docker-compose strace)`);
    layout = makeLayout();
    const trivial = join(layout.podDir, '.candidate-trivial.yaml');
    writeFileSync(trivial, 'services:\n  a:\n    image: busybox\n');
    const baseline = await learnToolBaseline({
      argv: [COMPOSE, '-p', PROJECT, '--project-directory', layout.podDir, '-f', trivial, 'config'],
      cwd: layout.podDir,
      env: ENV,
    });
    [hostile, admitted] = [
      await resolveAll(HOSTILE, yamlFiles(HOSTILE), layout, baseline),
      await resolveAll(ADMITTED, yamlFiles(ADMITTED), layout, baseline),
    ];
  }, 240_000);

  it('holds at least 60 hostile files, each saying why, each in the expected table', () => {
    expect(hostile.length).toBeGreaterThanOrEqual(60);
    for (const c of [...hostile, ...admitted]) expect(c.text, c.name).toMatch(/^# why( admitted)?: \S/);
    expect(hostile.map((c) => c.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('every hostile file is refused by docker-compose or harmful by the oracle (the corpus attacks)', () => {
    const inert = hostile.filter((c) => c.tool.code === 0 && c.oracle.length === 0).map((c) => c.name);
    expect(inert).toEqual([]);
  });

  it('every admitted file resolves, and the oracle finds its model harmless', () => {
    const verdicts = Object.fromEntries(
      admitted.map((c) => [c.name, c.tool.code === 0 ? c.oracle : [c.tool.stderr.trim()]]),
    );
    expect(verdicts).toEqual(Object.fromEntries(admitted.map((c) => [c.name, []])));
  });

  /** our verdicts, computed once for the three tests that read them */
  let verdicts: Promise<Map<string, Ours>> | undefined;
  const oursAll = () =>
    (verdicts ??= mapLimit(
      [...hostile, ...admitted],
      4,
      async (c) => [c.name, await ours(c.text, layout)] as const,
    ).then((pairs) => new Map(pairs)));

  it('our admission refuses every hostile file, naming the key', async () => {
    const v = await oursAll();
    const wrong: Record<string, string> = {};
    for (const c of hostile) {
      const { r } = v.get(c.name) as Ours;
      const want = ([] as string[]).concat(EXPECTED[c.name]);
      if (r.ok)
        wrong[c.name] =
          `admitted; docker-compose ${c.tool.code === 0 ? `resolves it to a model the oracle calls ${c.oracle.length ? `harmful: ${c.oracle.join('; ')}` : 'harmless'}` : 'refuses it'}`;
      else if (!r.issues?.some((i) => want.some((w) => i.path.startsWith(w))))
        wrong[c.name] = `refused at ${(r.issues ?? []).map((i) => i.path).join(', ')}, not ${want.join(' or ')}`;
    }
    expect(wrong).toEqual({});
  }, 180_000);

  it('whatever we admit of the hostile files, the engine refuses or its model is harmless', async () => {
    const v = await oursAll();
    const escaped: Record<string, string[]> = {};
    for (const c of hostile) {
      const { r, engineModel } = v.get(c.name) as Ours;
      if (!r.ok) continue;
      const reasons = [
        ...(c.tool.code === 0 ? c.oracle : []),
        ...(engineModel
          ? harmful(engineModel, { podDir: layout.podDir, project: PROJECT, hostListening: LISTENING })
          : []),
      ];
      if (reasons.length) escaped[c.name] = reasons;
    }
    expect(escaped).toEqual({});
  }, 180_000);

  it('our admission admits every benign file, and the model its engine check saw is harmless', async () => {
    const v = await oursAll();
    const got: Record<string, string[]> = {};
    for (const c of admitted) {
      const { r, engineModel } = v.get(c.name) as Ours;
      got[c.name] = !r.ok
        ? [r.message]
        : !engineModel
          ? ['our engine check resolved no model']
          : harmful(engineModel, { podDir: layout.podDir, project: PROJECT, hostListening: LISTENING });
    }
    expect(got).toEqual(Object.fromEntries(admitted.map((c) => [c.name, []])));
  }, 180_000);
});
