import { route } from '../../core/route';
import { S3_STYLE } from '../../core/http';
import { shareParams } from '../requests';
import { shareDetailsAnswer } from '../responses';
import { readShare } from '../shares';

export default route({
  method: 'GET',
  path: '/s3/:share_name/details',
  permission: 's3:manage',
  summary:
    'One S3 share with its clear root password, the unit text (raw) and the environment file (conf); needs s3:manage',
  style: S3_STYLE,
  params: shareParams,
  response: shareDetailsAnswer,
  examples: [
    { summary: 'the demo share media', params: { share_name: 'media' } },
    { summary: 'an unknown share', params: { share_name: 'nosuch' }, status: 404 },
  ],
  handler: ({ params, system, vars }) => readShare({ system, vars }, params.share_name),
});
