import { route } from '../../core/route';
import { hasPermission } from '../../core/auth';
import { buildListing } from '../listing';
import { applyReconcile, describeReport, listLinks, readDevices, type TcContext } from '../state';
import { trafficListing } from '../responses';
import { listRules } from '../store';

/**
 * GET /network/traffic/control: the devices with their tc queues/classes/filters, the rules under
 * our control, and their ids.
 *
 * Devices shown: every interface `ip -j link show` reports except loopback, plus any device a
 * stored rule names (so a rule on lo is still visible). Each device is read with three tc
 * commands; devices are read concurrently.
 *
 * For a caller who may change traffic control (network:manage) the listing also repairs: stored
 * rules whose class/filter/root tc no longer shows (deleted by hand, lost with a qdisc reset) are
 * re-applied before answering, with `replace` commands that only ever restore what the DB says;
 * what ran, failed or was skipped is logged. A failed repair does not fail the listing: it
 * answers with the state as it is. A read-only caller gets the state as it is and never causes a
 * tc write (the host also reconciles at start-up).
 */
export default route({
  method: 'GET',
  path: '/network/traffic/control',
  permission: 'network:read',
  examples: [{ summary: 'the demo rules' }],
  summary: 'Traffic control: devices (queues, classes, filters), rules under control, and their ids',
  response: trafficListing,
  async handler({ system, vars, db, requestId, principal }) {
    const t: TcContext = { system, vars };
    const [rules, links] = await Promise.all([listRules(db), listLinks(t)]);
    const order = links.filter((l) => !l.loopback || rules.some((r) => r.device === l.name)).map((l) => l.name);
    // Rule devices that do not exist are not read: reconcile() reports them as skipped.
    let states = await readDevices(t, order);

    if (!hasPermission(principal.permissions, 'network:manage')) return buildListing(order, states, rules);
    const report = await applyReconcile(t, rules, states);
    if (report.applied.length > 0 || report.failed.length > 0) {
      for (const line of describeReport(report)) console.warn(`[${requestId}] traffic: ${line}`);
      // Show the state after the repair, not before it.
      states = { ...states, ...(await readDevices(t, report.touched)) };
    }
    return buildListing(order, states, rules);
  },
});
