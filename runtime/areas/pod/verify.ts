/**
 * `ballast pod verify [--config FILE] -- <project>`: every pod unit's ExecStartPre. The stored
 * compose file is admitted again before compose reads it: it must be a regular file owned by
 * root, pass the same policy, every host path must still resolve to what was admitted (a bind
 * source swapped for a symlink since is refused), and the engine's model is admitted again.
 * Exit 0 lets the unit start; 1 stops it, with the reasons on stderr (the unit's journal).
 */
import { join } from 'node:path';
import { COMPOSE_FILE_NAME, POD_WORD, type PodSettings } from '../../../handlers/pod/contract';
import type { AreaCommand } from '../types';
import { engineRunner } from './admission/engine';
import { verifyStored } from './compose-check';
import { readRegular } from '../../system/files';

/** Why the stored file is not one only root could have written, or null. */
function untrusted(st: { uid: number; mode: number }): string | null {
  if (st.uid !== 0 && process.getuid?.() === 0) return `is not owned by root (uid ${st.uid})`;
  if (st.mode & 0o022) return 'is writable by others than its owner';
  return null;
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
      const bytes = readRegular(file, file, { maxBytes: settings.maxComposeBytes, check: untrusted });
      if (bytes === null) throw new Error(`${file} does not exist`);
      text = bytes.toString('utf8');
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
