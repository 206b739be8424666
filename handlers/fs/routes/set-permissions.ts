import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { absolutePath } from '../../core/schemas';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin } from '../../core/vars';
import { aclArgument, aclEntryListSchema } from '../acl';
import { parseGetfacl, parseSetfaclErrors, parseSetfaclTest } from '../parse/getfacl';

/** setfacl -R over a large tree takes a while; the host caps this at 10x its command limit. */
const SETFACL_TIMEOUT_MS = 300_000;

const body = z
  .strictObject({
    path: absolutePath.describe('file or directory, absolute'),
    acls: aclEntryListSchema
      .optional()
      .describe(
        'ACL entries for setfacl -m, e.g. ["u:backup:rwx", "g:staff:r-x", "m::rwx"]; optional with test (without entries, test lists the current ACLs: getfacl), required otherwise',
      ),
    acl: aclEntryListSchema.optional().describe("the same as acls (the name the spec's usage example sends)"),
    defaults: z.boolean().optional().describe('apply the entries to the default ACL (setfacl -d)'),
    recursive: z
      .boolean()
      .optional()
      .describe('apply to everything below path (setfacl -R; symlinks below are not followed)'),
    test: z
      .boolean()
      .optional()
      .describe(
        'change nothing; answer the ACLs that would result (setfacl --test), or without acls the current ACLs (getfacl -p)',
      ),
  })
  .superRefine((b, ctx) => {
    if (b.acls && b.acl) ctx.addIssue({ code: 'custom', path: ['acl'], message: 'give either acls or acl, not both' });
    if (!b.acls && !b.acl && !b.test) {
      ctx.addIssue({
        code: 'custom',
        path: ['acls'],
        message:
          'at least one ACL entry is required to change ACLs (send test: true without acls to list the current ones)',
      });
    }
  })
  .transform(({ acl, acls, ...rest }) => ({ ...rest, entries: acls ?? acl ?? [] }));

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
  body,
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
