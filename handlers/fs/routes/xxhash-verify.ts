import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { absolutePath } from '../../core/schemas';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin } from '../../core/vars';
import { checkChecksumFile, parseChecksumFile, parseXxhsumCheck } from '../parse/xxhsum';
import { READ_TEXT_OP, type ReadTextResult } from '../read-op';
import { xxhashVerifyAnswer } from '../responses';
import { checkXxhsumOptions } from '../xxhsum-options';

const XXHSUM_TIMEOUT_MS = 600_000;

const xxhashVerifyBody = z
  .strictObject({
    checksumFile: absolutePath.describe(
      'absolute path of a file of "<hash>  <absolute file name>" lines (GNU or BSD --tag style)',
    ),
    options: z
      .array(z.string().max(32))
      .max(16)
      .optional()
      .describe(
        'xxhsum -c flags, one per element: -q/--quiet (hide OK lines), --status (no lines), --strict, --warn, --little-endian',
      ),
  })
  .superRefine((b, ctx) => {
    const r = checkXxhsumOptions('verify', b.options);
    if (!r.ok) ctx.addIssue({ code: 'custom', path: ['options'], message: r.message });
  });

export default route({
  method: 'POST',
  path: '/fs/xxhash_verify',
  permission: 'fs:manage',
  long: { budgetS: 1800, phases: ['verify'] },
  examples: [
    {
      summary: 'the project files against their checksum file: the meeting notes changed since (verified false)',
      body: { checksumFile: '/srv/data/projects.xxh' },
    },
    {
      summary: 'a file outside the read roots (the demo krb5.conf)',
      body: { checksumFile: '/etc/krb5.conf' },
      status: 403,
    },
  ],
  summary:
    'Check files against an xxHash checksum file whose names are absolute (xxhsum -c); a mismatch or missing file is a result',
  body: xxhashVerifyBody,
  response: xxhashVerifyAnswer,
  async handler({ body, system, vars }) {
    const options = checkXxhsumOptions('verify', body.options);
    if (!options.ok) throw new ApiError('bad_request', options.message); // the schema checked it already
    // Read and check the file here, then hand xxhsum exactly that text on stdin: the names it
    // opens are the names we checked, even if the file changes meanwhile. (404, 403 outside
    // settings.fs.readRoots, 400 not a regular file, 413 too large: from the host op.)
    const { content } = await system.op<ReadTextResult>(READ_TEXT_OP, { path: body.checksumFile });
    const file = parseChecksumFile(content);
    const check = checkChecksumFile(file);
    if (!check.ok) {
      throw new ApiError('validation_failed', `checksum file ${body.checksumFile}: ${check.reason}`, {
        issues: [{ path: 'body.checksumFile', message: check.reason }],
        details: { reason: check.code },
      });
    }

    // no file operand: xxhsum -c reads the list from stdin (and names it `stdin` in messages)
    const argv = [bin(vars, 'xxhsum'), '-c', ...options.argv];
    const r = await system.exec(argv, { stdin: content, timeoutMs: XXHSUM_TIMEOUT_MS });
    if (r.timedOut) throw commandTimeout(argv, r);
    // exit 1 is "something did not verify" (mismatch, unreadable file): an answer, not a failure
    if (r.code !== 0 && r.code !== 1) throw commandFailed(argv, r);
    const parsed = parseXxhsumCheck(r.stdout, r.stderr, { fileNames: file.entries.map((e) => e.fileName) });
    if (
      r.code === 1 &&
      parsed.counts.failed === 0 &&
      parsed.counts.unreadable === 0 &&
      !body.options?.some((o) => o === '--status' || o === '--strict')
    ) {
      // exit 1 with nothing that explains it: not a verification result
      throw commandFailed(argv, r);
    }
    const verified = r.code === 0 && parsed.counts.failed === 0 && parsed.counts.unreadable === 0;
    return { results: parsed.results.map((e) => ({ fileName: e.fileName, result: e.result })), verified };
  },
});
