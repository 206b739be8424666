import { route } from '../../core/route';
import { S3_STYLE } from '../../core/http';
import { shareListAnswer, type ShareListed } from '../responses';
import { readShare, shareNames, maskSecret } from '../shares';

export default route({
  method: 'GET',
  path: '/s3/list',
  permission: 's3:read',
  summary:
    'S3 shares keyed by name: path, port, user, rootUser (access key), rootPassword masked (secret key), unit text, enabled (systemctl is-enabled)',
  style: S3_STYLE,
  response: shareListAnswer,
  examples: [{ summary: 'the demo appliance has two shares, media and backup' }],
  async handler({ system, vars }) {
    const names = await shareNames({ system, vars });
    const shares = await Promise.all(names.map((n) => readShare({ system, vars }, n)));
    const out: Record<string, ShareListed> = {};
    for (const { conf: _conf, ...s } of shares) out[s.shareName] = { ...s, rootPassword: maskSecret(s.rootPassword) };
    return out;
  },
});
