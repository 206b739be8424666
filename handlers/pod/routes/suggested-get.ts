import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { recipeByName, recipeObject } from '../recipes/index';
import { recipeNameParams } from '../requests';
import { recipeAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/pod/suggested/:name',
  permission: 'pod:read',
  summary: 'One recipe: description, images, version and its services',
  params: recipeNameParams,
  response: recipeAnswer,
  examples: [
    { summary: 'the web server recipe', params: { name: 'web-server' } },
    { summary: 'the S3 gateway recipe', params: { name: 's3-gateway' } },
    { summary: 'an unknown recipe', params: { name: 'nosuchrecipe' }, status: 404 },
  ],
  async handler({ params }) {
    const r = recipeByName(params.name);
    if (!r) throw notFound(`no recipe ${params.name}`);
    return recipeObject(r);
  },
});
