import * as z from 'zod';
import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { validationFailed } from '../../core/errors';
import { bin } from '../../core/vars';
import { boundedLog } from '../parse/journal';
import { podRef, requirePod } from '../pod';
import { logQuery, podNameParams } from '../requests';

export default route({
  method: 'GET',
  path: '/pod/:name/log',
  permission: 'pod:read',
  summary:
    "The journal of the pod's unit (newest `lines`, at most settings.pod.logMaxBytes), oldest first, as one JSON string",
  params: podNameParams,
  query: logQuery,
  response: z.string(),
  examples: [
    { summary: "the last lines of the web pod's unit", params: { name: 'web' }, query: { lines: '50' } },
    { summary: 'since a day', params: { name: 'web' }, query: { lines: '50', since: '2026-11-25' } },
    { summary: 'too many lines', params: { name: 'web' }, query: { lines: '999999' }, status: 400 },
  ],
  async handler({ params, query, system, vars }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    await requirePod(system, ref);
    const lines = query.lines ?? Math.min(s.logDefaultLines, s.logMaxLines);
    if (lines > s.logMaxLines) {
      throw validationFailed('query.lines', `at most ${s.logMaxLines} (settings.pod.logMaxLines)`);
    }
    const argv = [
      bin(vars, 'journalctl'),
      '--no-pager',
      '--output=short-iso',
      '--reverse',
      `--lines=${lines}`,
      `--unit=${ref.unit}`,
    ];
    if (query.since) argv.push(`--since=${query.since}`);
    const r = await system.run(argv, { maxOutputBytes: s.logMaxBytes + 1 });
    return boundedLog(r.stdout, r.truncated, s.logMaxBytes);
  },
});
