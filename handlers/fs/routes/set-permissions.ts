import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin } from '../../core/vars';
import { aclArgument } from '../acl';
import { parseGetfacl, parseSetfaclErrors, parseSetfaclTest } from '../parse/getfacl';
import { setPermissionsBody } from '../requests';

/** setfacl -R over a large tree takes a while; the host caps this at 10x its command limit. */
const SETFACL_TIMEOUT_MS = 300_000;

/** The entry a `near character N` of setfacl's -m argument falls in (entries are joined with `,`). */
function entryAt(entries: readonly string[], canonical: string, character: number): string | undefined {
  const parts = canonical.split(',');
  let end = 0;
  for (let i = 0; i < parts.length; i++) {
    end += parts[i].length + 1;
    if (character <= end) return entries[i];
  }
  return entries[entries.length - 1];
}

export default route({
  method: 'POST',
  path: '/fs/set_permissions',
  permission: 'fs:manage',
  long: { budgetS: 900, phases: ['apply'] },
  examples: [
    {
      summary: 'ACL entries for backup and staff',
      body: { path: '/srv/data/projects', acls: ['u:backup:rwx', 'g:staff:rwx'] },
      then: [
        {
          method: 'POST',
          path: '/fs/set_permissions',
          body: { path: '/srv/data/projects', test: true },
          shows: 'user:backup:rwx\ngroup::rwx\ngroup:staff:rwx\nmask::rwx\n',
        },
      ],
    },
    {
      summary: 'test the ACL without setting it',
      body: { path: '/srv/data/projects', acls: ['u:backup:rwx', 'g:staff:rwx'], test: true },
    },
  ],
  summary:
    'Set POSIX ACL entries (setfacl [--test] [-R] [-d] -m <entries> -- <path>); with test, answers the resulting ACLs',
  body: setPermissionsBody,
  response: z.string(),
  async handler({ body, system, vars, events }) {
    if (body.test && body.entries.length === 0) {
      // nothing to apply: list the ACLs as they are (getfacl's long form, absolute names)
      const argv = [
        bin(vars, 'getfacl'),
        '-p',
        ...(body.recursive ? ['-R'] : []),
        ...(body.defaults ? ['-d'] : []),
        '--',
        body.path,
      ];
      const r = await system.exec(argv, { timeoutMs: SETFACL_TIMEOUT_MS });
      if (r.timedOut) throw commandTimeout(argv, r);
      if (r.code !== 0) {
        if (/No such file or directory/.test(r.stderr)) throw new ApiError('not_found', `${body.path} does not exist`);
        throw commandFailed(argv, r);
      }
      parseGetfacl(r.stdout); // a ParseError (502) if it is not getfacl's listing
      return r.stdout;
    }
    // Each entry passed the POSIX ACL grammar (acl.ts): no `,`, no leading `-`, no whitespace,
    // so the joined -m argument holds exactly the entries that were validated.
    const argument = aclArgument(body.entries);
    const argv = [
      bin(vars, 'setfacl'),
      ...(body.test ? ['--test'] : []),
      ...(body.recursive ? ['-R'] : []),
      ...(body.defaults ? ['-d'] : []),
      '-m',
      argument,
      '--',
      body.path,
    ];
    await system.progress({ phase: 'apply', message: 'setfacl' });
    const r = await system.exec(argv, { timeoutMs: SETFACL_TIMEOUT_MS });
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) {
      const errors = parseSetfaclErrors(r.stderr);
      const bad = errors.find((e) => e.kind === 'invalid-argument' || e.kind === 'incomplete');
      if (bad) {
        // grammar-valid but refused by setfacl: an unknown user or group name
        const entry = bad.kind === 'invalid-argument' ? entryAt(body.entries, argument, bad.character) : undefined;
        const message = entry
          ? `ACL entry ${JSON.stringify(entry)} was refused by setfacl (unknown user or group?)`
          : `setfacl refused the ACL entries`;
        throw new ApiError('validation_failed', message, { issues: [{ path: 'body.acls', message: r.stderr.trim() }] });
      }
      const file = errors.find((e) => e.kind === 'file');
      if (file && file.kind === 'file' && errors.every((e) => e.kind === 'file')) {
        if (/No such file or directory/.test(file.message))
          throw new ApiError('not_found', `${file.path} does not exist`);
        if (/Operation not supported/.test(file.message)) {
          throw new ApiError('conflict', `${file.path}: the filesystem does not support ACLs (mounted without acl?)`);
        }
        if (/Read-only file system/.test(file.message))
          throw new ApiError('conflict', `${file.path} is on a read-only filesystem`);
        if (/Only directories can have default ACLs/.test(file.message)) {
          throw new ApiError(
            'bad_request',
            `${file.path} is not a directory: only directories have a default ACL (drop "defaults")`,
          );
        }
      }
      throw commandFailed(argv, r);
    }
    if (body.test) {
      // read it to be sure it is setfacl's listing (a ParseError is a 502), then answer it as is
      parseSetfaclTest(r.stdout, { root: body.path });
      return r.stdout;
    }
    await events.send({ kind: 'fs.acl.updated', data: { path: body.path, defaults: body.defaults === true } });
    return `ACL of ${body.path} set: ${argument}${body.defaults ? ' (default ACL)' : ''}${body.recursive ? ', recursively' : ''}`;
  },
});
