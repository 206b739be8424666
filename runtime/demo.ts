import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DIRECTORY_PATH_KEYS, defaultConfig, mergeConfig, type HostConfig } from './config';

/**
 * The embedded demo appliance: replayed commands describing a plausible box, and every file it
 * reads or writes under var/demo/root. Nothing outside var/demo is touched.
 */
export function demoConfig(repo: string, port: number, stateDir = process.env.BALLAST_DEMO_DIR): HostConfig {
  // The demo's state goes to the working directory (var/demo), never into the package: an
  // installed one (node_modules/ballast) is not the user's to write. BALLAST_DEMO_DIR moves it
  // (tests run demos without touching a developer's var/demo).
  const state = resolve(process.cwd(), stateDir || 'var/demo');
  const root = join(state, 'root');
  const base = defaultConfig();
  const paths: Record<string, string> = {};
  for (const [k, p] of Object.entries(base.paths)) paths[k] = join(root, p);
  return mergeConfig(base, {
    productName: 'Ballast Demo Appliance',
    hostId: 'demo-appliance-0001',
    listen: { host: '127.0.0.1', port },
    stateDir: state,
    paths,
    // Demo fixtures write `$ROOT/etc/...` where a command names a configured path.
    system: {
      ...base.system,
      mode: 'replay',
      fixtures: [resolve(repo, 'fixtures/demo')],
      fixtureAliases: { $ROOT: root },
    },
    settings: {
      demo: true,
      // explore and the checksum-file reader see / from the demo root (`/srv/data` is
      // var/demo/root/srv/data) and read only below its srv/ (`/etc` is outside: 403); commands
      // are replayed and name /srv/data as on a real box
      fs: { readRoots: [join(root, 'srv'), '/srv/data'], pathRoot: root },
      // S3 share paths are seen from the demo root (`/srv/media` is var/demo/root/srv/media)
      s3: { pathRoot: root },
      // homes from the (replayed) user database live under the demo root; files keep the demo's owner
      keys: {
        homeRoots: [join(root, 'home'), join(root, 'root')],
        userRoot: root,
        setOwner: false,
        commentHost: 'nas01',
      },
      // dfs: the demo MGS runs at /lustre/MGS (its recorded mount table), outside the demo root
      dfs: { extraMountRoots: ['/lustre'] },
      // notifications go to a file instead of the network (the demo has no destination to reach)
      notification: { sinkFile: join(state, 'notifications.jsonl') },
      // pod: no compose tool runs in the demo (commands are replayed), so only the host's own policy admits
      pod: { engineCheck: false },
      // certificate: a short commit window to try ingest → rollback; regenerate's fixed names
      certificate: { commitWindowSeconds: 30, hostName: 'demo-appliance', addresses: ['192.0.2.10'] },
    },
  });
}

/** Copy the demo's seed files (fixtures/demo/files) into var/demo/root once, keeping later edits. */
export function seedDemo(repo: string, config: HostConfig): void {
  const seed = resolve(repo, 'fixtures/demo/files');
  const root = join(config.stateDir, 'root');
  mkdirSync(root, { recursive: true });
  if (existsSync(seed)) cpSync(seed, root, { recursive: true, force: false, errorOnExist: false });
  // Directories named in the config exist on a real box; make the demo's too.
  for (const k of DIRECTORY_PATH_KEYS) if (config.paths[k]) mkdirSync(config.paths[k], { recursive: true });
}

export function writeDemoToken(config: HostConfig, token: string): string {
  const file = join(config.stateDir, 'admin.token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

export function demoTokenFile(config: HostConfig): string {
  return join(config.stateDir, 'admin.token');
}
