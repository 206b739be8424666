import { route } from '../../core/route';
import { ApiError, conflict } from '../../core/errors';
import type { D1Database } from '../../core/bindings';
import {
  idsInUseOnDevice,
  isOurRoot,
  planAddRule,
  planEnsureRoot,
  planRemoveRoot,
  planRemoveRule,
  showQdiscArgv,
  type Argv,
} from '../plan';
import { createRuleBody } from '../requests';
import { createRuleAnswer } from '../responses';
import { execTc, isGone, readDevice, runTc, tcArgv, withKernelRoot, type TcContext } from '../state';
import { deleteRule, duplicateName, findRule, listRules, reserveRule, rulesOnDevice, type StoredRule } from '../store';
import { parseTcQdisc } from '../parse/tc-qdisc';
import { dropTrafficChange, keepTrafficChange, openTrafficChange } from '../checkpoint';

/**
 * POST /network/traffic/control/create {name, device, ip, rate}: limit what this box sends to
 * `ip` on `device` to `rate` megabytes per second.
 *
 * Order, and why:
 * 1. Validate: the body schema (name, IPv4, rate > 0), then a free name (409), the device
 *    (tc reads it; "Cannot find device" is a 400 on body.device), a root we may use (our htb or
 *    the kernel's default; anything an administrator set up is a 409 with the reason), and no
 *    other rule for the same ip on the device (409: two u32 matches for one address would make
 *    one rule silently dead).
 * 2. Reserve the id by inserting the rule row (store.ts: UNIQUE(id) serialises concurrent
 *    creates, so no two rules get the same id).
 * 3. Apply: our htb root if needed, the class, the filter. `replace` rather than `add` for the
 *    class and filter: the id is ours by the reservation, and a listing running at the same time
 *    may already have re-applied this very rule from the new row; `add` would then fail on our
 *    own class.
 * 4. Any failure in 3 undoes it (filter, class, and the root if this create installed it and no
 *    other rule uses the device) and deletes the row, then answers the tc error (502). So a
 *    create either fully happens or leaves tc and the DB as they were.
 */
export default route({
  method: 'POST',
  path: '/network/traffic/control/create',
  permission: 'network:manage',
  examples: [
    {
      summary: 'cap what eno1 sends to 192.168.10.50 at 10 MB/s',
      body: { name: 'backup-link', device: 'eno1', ip: '192.168.10.50', rate: 10 },
      then: [
        {
          method: 'GET',
          path: '/network/traffic/control',
          shows: { rules: [{ name: 'backup-link', ip: '192.168.10.50', rate: 10, qtype: 'htb' }] },
        },
      ],
    },
  ],
  summary: 'Create a traffic control rule: cap what this box sends to one IPv4 address on a device',
  body: createRuleBody,
  response: createRuleAnswer,
  async handler({ body, system, vars, db, events, requestId }) {
    const t: TcContext = { system, vars };
    const { name, device, ip, rate } = body;

    if (await findRule(db, name)) throw duplicateName(name);
    const same = (await listRules(db)).find((r) => r.device === device && r.ip === ip);
    if (same) throw conflict(`traffic to ${ip} on ${device} is already limited by rule ${same.name}`);

    const state = await readDevice(t, device);
    if (!state) {
      throw new ApiError('validation_failed', `invalid body: body.device: device ${device} does not exist`, {
        issues: [{ path: 'body.device', message: `device ${device} does not exist` }],
      });
    }
    const root = planEnsureRoot(device, withKernelRoot(device, state.queues));
    if (!root.ok) throw conflict(root.reason);

    // 409 while another network change waits for its confirmation; with confirmWithin, the checkpoint
    const change = await openTrafficChange(system, {
      change: `traffic rule create ${name}`,
      device,
      rule: name,
      ...(body.confirmWithin === undefined ? {} : { confirmWithin: body.confirmWithin }),
    });
    let rule: StoredRule;
    let installedRoot: boolean;
    try {
      const id = await reserveRule(db, { name, device, ip, rate }, idsInUseOnDevice(state.classes, state.filters));
      rule = { name, device, ip, rate, id };
      try {
        installedRoot = await apply(t, db, rule, root.argv);
      } catch (e) {
        await deleteRule(db, rule);
        throw e;
      }
    } catch (e) {
      await dropTrafficChange(system, change);
      throw e;
    }
    // what takes it back at the deadline (the stored row goes back with the checkpoint's rows)
    const undo = [...planRemoveRule(rule), ...(installedRoot ? planRemoveRoot(device) : [])].map((a) =>
      tcArgv(vars, a),
    );
    await keepTrafficChange(system, change, undo);

    try {
      await events.send({ kind: 'traffic.rule.created', data: { name, device, ip, rate, id: rule.id } });
    } catch (e) {
      // The rule exists in tc and the DB; failing the request now would report a create that
      // happened as failed. The outbox is the same DB, so this is a DB failure worth logging.
      console.error(`[${requestId}] traffic: rule ${name} created but its event could not be stored:`, e);
    }
    return { error: null, name, device, ip, rate };
  },
});

/**
 * Steps 3 and 4 above. Throws the first tc failure after undoing what was done; answers whether
 * it installed our root (a rollback of the change removes it again).
 */
async function apply(t: TcContext, db: D1Database, rule: StoredRule, rootArgv: Argv[]): Promise<boolean> {
  let installedRoot = false;
  try {
    for (const argv of rootArgv) {
      const r = await execTc(t, argv);
      if (r.code === 0) {
        installedRoot = true;
        continue;
      }
      // A concurrent create on the same device may have installed our root a moment ago; htb
      // then refuses the `replace` ("Change operation not supported"). Ours is what we wanted.
      const now = await execTc(t, showQdiscArgv(rule.device));
      const ours = now.code === 0 && parseTcQdisc(now.stdout, rule.device).some(isOurRoot);
      if (!ours) await runTc(t, argv); // fails again, with the real error for the client
    }
    for (const argv of planAddRule(rule, 'replace')) await runTc(t, argv);
    return installedRoot;
  } catch (e) {
    await undo(t, db, rule, installedRoot);
    throw e;
  }
}

/**
 * Best effort, every step tried: the failure being reported matters more than one of these
 * failing too, which is logged. "Already gone" is expected (the step that failed never made it).
 */
async function undo(t: TcContext, db: D1Database, rule: StoredRule, installedRoot: boolean): Promise<void> {
  const attempt = async (argv: Argv) => {
    try {
      const r = await execTc(t, argv);
      if (r.code !== 0 && !isGone(r.stderr))
        console.error(`traffic: undo of rule ${rule.name}: ${argv.join(' ')}: ${r.stderr.trim()}`);
    } catch (e) {
      console.error(`traffic: undo of rule ${rule.name}: ${argv.join(' ')}:`, e);
    }
  };
  for (const argv of planRemoveRule(rule)) await attempt(argv);
  // Our row is still there, so "only ours" means a count of 1.
  if (installedRoot && (await rulesOnDevice(db, rule.device)) === 1) {
    for (const argv of planRemoveRoot(rule.device)) await attempt(argv);
  }
}
