import * as z from 'zod';
import { route } from '../../core/route';
import { RECIPES } from '../recipes/index';

export default route({
  method: 'GET',
  path: '/pod/suggested',
  permission: 'pod:read',
  summary: 'The names of the recipes shipped with the product',
  response: z.array(z.string()),
  examples: [{ summary: 'the shipped recipes' }],
  async handler() {
    return RECIPES.map((r) => r.name);
  },
});
