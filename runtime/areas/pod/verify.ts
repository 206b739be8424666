/**
 * `ballast pod verify [--config FILE] -- <project>`: every pod unit's ExecStartPre. The stored
 * compose file is admitted again before compose reads it: it must be a regular file owned by
 * root, pass the same policy, every host path must still resolve to what was admitted (a bind
 * source swapped for a symlink since is refused), and the engine's model is admitted again.
 * Exit 0 lets the unit start; 1 stops it, with the reasons on stderr (the unit's journal).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { COMPOSE_FILE_NAME, POD_WORD, type PodSettings } from '../../../handlers/pod/contract';
import type { AreaCommand } from '../types';
import { engineRunner } from './admission/engine';
import { verifyStored } from './compose-check';

/** The stored file: a regular root-owned file of bounded size, opened without following a link. */
async function readStored(file: string, maxBytes: number): Promise<string> {
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    if (st.uid !== 0 && process.getuid?.() === 0) throw new Error(`${file} is not owned by root (uid ${st.uid})`);
    if (st.mode & 0o022) throw new Error(`${file} is writable by others than its owner`);
    if (st.size > maxBytes) throw new Error(`${file} is larger than settings.pod.maxComposeBytes`);
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}

export const verifyCommand: AreaCommand<PodSettings> = {
  usage: 'ballast pod verify [--config FILE | --demo] -- PROJECT',
  async run({ args, config, settings, backend, err }) {
    const project = args.length === 1 ? args[0] : undefined;
    if (!project || !POD_WORD.test(project) || !project.startsWith(`${settings.prefix}-pod-`)) {
      err(`pod verify: needs one pod project name (${settings.prefix}-pod-<name>)`);
      return 2;
    }
    const file = join(config.paths.podFiles, project, COMPOSE_FILE_NAME);
    let text: string;
    try {
      text = await readStored(file, settings.maxComposeBytes);
    } catch (e) {
      err(`pod verify: ${project} refused: ${(e as Error).message.split('\n')[0]}`);
      return 1;
    }
    const issues = await verifyStored(project, text, {
      settings,
      podData: config.paths.podData,
      podFiles: config.paths.podFiles,
      listeners: async () => new Set(),
      engine: settings.engineCheck ? engineRunner(settings, (argv, opts) => backend.exec(argv, opts)) : null,
    });
    if (issues.length) {
      for (const i of issues) err(`pod verify: ${project} refused: ${i.path}: ${i.message}`);
      return 1;
    }
    return 0;
  },
};
