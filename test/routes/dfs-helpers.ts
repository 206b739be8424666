/** Every dfs route module (the route tests mount only these). */
import deviceDetails from '../../handlers/dfs/routes/device-details';
import deviceList from '../../handlers/dfs/routes/device-list';
import deviceMgs from '../../handlers/dfs/routes/device-mgs';
import flrGet from '../../handlers/dfs/routes/flr-get';
import flrUpdate from '../../handlers/dfs/routes/flr-update';
import fsCreateMdt from '../../handlers/dfs/routes/fs-create-mdt';
import fsCreateMgs from '../../handlers/dfs/routes/fs-create-mgs';
import fsCreateOst from '../../handlers/dfs/routes/fs-create-ost';
import fsDetails from '../../handlers/dfs/routes/fs-details';
import fsList from '../../handlers/dfs/routes/fs-list';
import fsMount from '../../handlers/dfs/routes/fs-mount';
import fsVerify from '../../handlers/dfs/routes/fs-verify';
import lnetAdd from '../../handlers/dfs/routes/lnet-add';
import lnetExportConfig from '../../handlers/dfs/routes/lnet-export-config';
import lnetImportConfig from '../../handlers/dfs/routes/lnet-import-config';
import lnetList from '../../handlers/dfs/routes/lnet-list';
import lnetPeerList from '../../handlers/dfs/routes/lnet-peer-list';
import lnetPing from '../../handlers/dfs/routes/lnet-ping';
import lnetPrepare from '../../handlers/dfs/routes/lnet-prepare';
import lnetProperties from '../../handlers/dfs/routes/lnet-properties';
import lnetRemove from '../../handlers/dfs/routes/lnet-remove';
import lnetShowConfig from '../../handlers/dfs/routes/lnet-show-config';
import lnetStatus from '../../handlers/dfs/routes/lnet-status';
import type { RouteModule } from '../../handlers/core/route';

export const DFS_ROUTES: RouteModule[] = [
  deviceDetails,
  deviceList,
  deviceMgs,
  flrGet,
  flrUpdate,
  fsCreateMdt,
  fsCreateMgs,
  fsCreateOst,
  fsDetails,
  fsList,
  fsMount,
  fsVerify,
  lnetAdd,
  lnetExportConfig,
  lnetImportConfig,
  lnetList,
  lnetPeerList,
  lnetPing,
  lnetPrepare,
  lnetProperties,
  lnetRemove,
  lnetShowConfig,
  lnetStatus,
];
