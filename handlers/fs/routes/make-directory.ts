import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin } from '../../core/vars';
import { checkDirectoryOptions } from '../directory-options';
import { makeDirectoryBody } from '../requests';
import { makeDirectoryAnswer } from '../responses';

/**
 * install's own refusals, by stderr, and what they mean for the caller. install -d on an
 * existing directory succeeds (and applies mode/owner/group), as the tool does.
 */
function mapInstallError(destination: string, stderr: string): ApiError | null {
  if (/invalid (user|group) /.test(stderr)) {
    const m = /invalid (user|group) '(.*)'/.exec(stderr);
    return new ApiError(
      'validation_failed',
      `no such ${m?.[1] ?? 'user or group'} ${m ? JSON.stringify(m[2]) : ''}`.trim(),
      {
        issues: [{ path: 'body.options', message: stderr.trim() }],
      },
    );
  }
  if (/: File exists$/m.test(stderr))
    return new ApiError('conflict', `${destination} (or one of its parents) exists and is not a directory`);
  if (/: Not a directory$/m.test(stderr))
    return new ApiError('conflict', `a parent of ${destination} is not a directory`);
  if (/: Read-only file system$/m.test(stderr))
    return new ApiError('conflict', `${destination} is on a read-only filesystem`);
  return null;
}

export default route({
  method: 'POST',
  path: '/fs/make_directory',
  permission: 'fs:manage',
  long: { budgetS: 120, phases: ['create'] },
  examples: [
    {
      summary: 'a group-shared projects directory',
      body: { destination: '/srv/data/projects', options: ['-m', '2770', '-g', 'staff'] },
    },
  ],
  summary: 'Create a directory (install -d [-m mode] [-o owner] [-g group] -- <destination>); echoes {destination}',
  body: makeDirectoryBody,
  response: makeDirectoryAnswer,
  async handler({ body, system, vars, events }) {
    const options = checkDirectoryOptions(body.options);
    if (!options.ok) throw new ApiError('bad_request', options.message); // the schema checked it already
    const argv = [bin(vars, 'install'), '-d', ...options.argv, '--', body.destination];
    const r = await system.exec(argv);
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) throw mapInstallError(body.destination, r.stderr) ?? commandFailed(argv, r);
    await events.send({ kind: 'fs.directory.created', data: { destination: body.destination } });
    return { destination: body.destination };
  },
});
