import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { absolutePath } from '../../core/schemas';
import { commandFailed, commandTimeout, type ExecResult } from '../../core/system';
import { bin } from '../../core/vars';
import { parseXxhsumSums } from '../parse/xxhsum';
import { checkXxhsumOptions } from '../xxhsum-options';
import { xxhashAnswer } from '../responses';

/** Hashing runs at disk speed; big files take a while. The host caps this at 10x its command limit. */
const XXHSUM_TIMEOUT_MS = 600_000;
/** argv stays far below ARG_MAX (2 MiB) even with long paths */
const MAX_FILES = 1000;
/** files per xxhsum run: a job's progress moves and a cancel takes effect between runs */
const BATCH = 50;

const fileList = z.array(absolutePath).min(1).max(MAX_FILES);

const xxhashBody = z
  .strictObject({
    filenames: fileList.optional().describe('absolute paths of the files to hash'),
    fileNames: fileList.optional().describe("the same as filenames (the name the spec's usage example sends)"),
    options: z
      .array(z.string().max(32))
      .max(16)
      .optional()
      .describe(
        'xxhsum flags, one per element: an algorithm (-H0 XXH32, -H1 XXH64 default, -H2 XXH128, -H3 XXH3), --tag, --little-endian',
      ),
  })
  .superRefine((b, ctx) => {
    if (b.filenames && b.fileNames)
      ctx.addIssue({ code: 'custom', path: ['fileNames'], message: 'give either filenames or fileNames, not both' });
    if (!b.filenames && !b.fileNames) ctx.addIssue({ code: 'custom', path: ['filenames'], message: 'required' });
    const r = checkXxhsumOptions('generate', b.options);
    if (!r.ok) ctx.addIssue({ code: 'custom', path: ['options'], message: r.message });
  })
  .transform(({ filenames, fileNames, options }) => ({ files: filenames ?? fileNames ?? [], options: options ?? [] }));

/**
 * Why a file has no sum, from xxhsum 0.8.1's stderr (progress-line `\r` noise aside):
 *   Error: Could not open '<name>': <strerror>.
 *   xxhsum: <name>: Is a directory
 */
function unreadableReasons(stderr: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of stderr.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    let m = /^Error: Could not open '(.*)': (.*?)\.?$/.exec(line);
    if (m) out.set(m[1], m[2]);
    else if ((m = /^xxhsum: (.*): (Is a directory)$/.exec(line))) out.set(m[1], m[2]);
  }
  return out;
}

export default route({
  method: 'POST',
  path: '/fs/xxhash',
  permission: 'fs:manage',
  long: { budgetS: 1800, phases: ['hash'] },
  examples: [
    {
      summary: 'hash two project files',
      body: { fileNames: ['/srv/data/projects/report.pdf', '/srv/data/projects/meeting notes.txt'] },
    },
  ],
  summary: 'xxHash checksums of files (xxhsum [options] -- <files>)',
  body: xxhashBody,
  response: xxhashAnswer,
  async handler({ body, system, vars }) {
    const options = checkXxhsumOptions('generate', body.options);
    if (!options.ok) throw new ApiError('bad_request', options.message); // the schema checked it already
    // In batches, so a job can say how far it is (files hashed of all) and a cancel stops
    // between them; a short list is one command, as it always was.
    const sums: ReturnType<typeof parseXxhsumSums> = [];
    let stderr = '';
    let failed: { argv: string[]; r: ExecResult } | undefined;
    for (let at = 0; at < body.files.length; at += BATCH) {
      const batch = body.files.slice(at, at + BATCH);
      if (body.files.length > BATCH)
        await system.progress({
          phase: 'hash',
          done: at,
          total: body.files.length,
          message: `${at} of ${body.files.length} files hashed`,
        });
      const argv = [bin(vars, 'xxhsum'), ...options.argv, '--', ...batch];
      const r = await system.exec(argv, { timeoutMs: XXHSUM_TIMEOUT_MS });
      if (r.timedOut) throw commandTimeout(argv, r);
      // Names are matched against the list we passed, so spaces, `\`, `: ` and even newlines
      // in names come back exactly; unreadable files are simply missing from stdout.
      const got = parseXxhsumSums(r.stdout, { fileNames: batch });
      sums.push(...got);
      stderr += r.stderr;
      if (r.code !== 0 || got.length !== batch.length) failed ??= { argv, r };
    }
    if (failed) {
      const { argv, r } = failed;
      const reasons = unreadableReasons(stderr);
      const hashed = new Set(sums.map((s) => s.fileName));
      const missing = body.files
        .filter((f) => !hashed.has(f))
        .map((fileName) => ({ fileName, reason: reasons.get(fileName) ?? 'could not be read' }));
      if (missing.length === 0) throw commandFailed(argv, r);
      // the caller named a file that cannot be hashed: a 4xx naming each, not a server error
      const status = missing.some((m) => m.reason === 'No such file or directory') ? 404 : 400;
      const list = missing
        .slice(0, 5)
        .map((m) => `${m.fileName} (${m.reason})`)
        .join(', ');
      throw new ApiError(
        status === 404 ? 'not_found' : 'bad_request',
        `cannot hash ${list}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`,
        {
          details: { files: missing },
        },
      );
    }
    return { sums: sums.map((s) => ({ hash: s.hash, fileName: s.fileName })) };
  },
});
