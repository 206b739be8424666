import type { RouteModule } from '../../handlers/core/route';
import configGet from '../../handlers/pod/routes/config-get';
import configSet from '../../handlers/pod/routes/config-set';
import destroy from '../../handlers/pod/routes/destroy';
import details from '../../handlers/pod/routes/details';
import inspect from '../../handlers/pod/routes/inspect';
import kill from '../../handlers/pod/routes/kill';
import list from '../../handlers/pod/routes/list';
import log from '../../handlers/pod/routes/log';
import pause from '../../handlers/pod/routes/pause';
import set from '../../handlers/pod/routes/set';
import suggestedGet from '../../handlers/pod/routes/suggested-get';
import suggestedList from '../../handlers/pod/routes/suggested-list';
import test from '../../handlers/pod/routes/test';
import unpause from '../../handlers/pod/routes/unpause';
import update from '../../handlers/pod/routes/update';

/** In manifest order (static paths before `:name` ones, as the build lists them). */
export const POD_ROUTES: RouteModule[] = [
  configGet,
  configSet,
  suggestedList,
  suggestedGet,
  list,
  details,
  set,
  update,
  destroy,
  inspect,
  log,
  test,
  pause,
  unpause,
  kill,
];
