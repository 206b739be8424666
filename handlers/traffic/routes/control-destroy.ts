import { route } from '../../core/route';
import { ApiError, notFound } from '../../core/errors';
import { commandFailed } from '../../core/system';
import { isOurRoot, planRemoveRoot, planRemoveRule, showQdiscArgv } from '../plan';
import { parseTcQdisc } from '../parse/tc-qdisc';
import { destroyRuleBody, destroyRuleParams } from '../requests';
import { destroyRuleAnswer } from '../responses';
import { execTc, isGone, tcArgv, type TcContext } from '../state';
import { deleteRule, findRule, rulesOnDevice } from '../store';
import { dropTrafficChange, keepTrafficChange, openTrafficChange } from '../checkpoint';

/**
 * POST /network/traffic/control/:rule_name/destroy: remove a rule's filter and class, forget the
 * rule, and answer the id it occupied. The other rules keep their ids (ids are stored per rule,
 * never positions in a list).
 *
 * - The usage example also sends {"name": ...} in the body: accepted when it names the same rule.
 * - A filter or class that is already gone (deleted by hand, or lost with the root qdisc) counts
 *   as removed: the rule is still forgotten. Any other tc failure (e.g. "class in use" because
 *   someone pointed another filter at it) is a 502 and the rule stays, whole, in the DB.
 * - Filter first, then class: the kernel refuses to delete a class a filter still points at.
 * - When the last rule of a device goes, our htb root goes too, so the device is back on the
 *   kernel's default root (mq on a multi-queue NIC: htb is one queue behind one lock). Failing
 *   that is logged, not reported: the rule itself is gone and unclassified traffic is unshaped.
 */
export default route({
  method: 'POST',
  path: '/network/traffic/control/:rule_name/destroy',
  permission: 'network:manage',
  examples: [
    {
      summary: 'remove the rule backup-link, once the create example made it',
      params: { rule_name: 'backup-link' },
      before: [
        {
          method: 'POST',
          path: '/network/traffic/control/create',
          body: { name: 'backup-link', device: 'eno1', ip: '192.168.10.50', rate: 10 },
        },
      ],
      // eno1 is back to its fresh-demo queue: the default mq root
      then: [
        {
          method: 'GET',
          path: '/network/traffic/control',
          shows: { devices: { eno1: { queue: [{ qtype: 'mq', owner: 'root' }] } } },
        },
      ],
    },
    { summary: 'a fresh demo has no rule named backup-link', params: { rule_name: 'backup-link' }, status: 404 },
  ],
  summary: 'Destroy a traffic control rule; answers the id it occupied',
  params: destroyRuleParams,
  body: destroyRuleBody,
  response: destroyRuleAnswer,
  async handler({ params, body, system, vars, db, events, requestId }) {
    const t: TcContext = { system, vars };
    const name = params.rule_name;
    if (body.name !== undefined && body.name !== name) {
      const message = `body.name ${body.name} does not match the rule name ${name} in the URL`;
      throw new ApiError('validation_failed', `invalid body: ${message}`, { issues: [{ path: 'body.name', message }] });
    }
    const rule = await findRule(db, name);
    if (!rule) throw notFound(`no traffic rule named ${name}`);

    // 409 while another network change waits for its confirmation; with confirmWithin, the
    // checkpoint: its rollback stores the rule again and re-applies it (root, class, filter)
    const change = await openTrafficChange(system, {
      change: `traffic rule destroy ${name}`,
      device: rule.device,
      rule: name,
      ...(body.confirmWithin === undefined ? {} : { confirmWithin: body.confirmWithin }),
    });
    try {
      for (const argv of planRemoveRule(rule)) {
        const r = await execTc(t, argv);
        if (r.code !== 0 && !isGone(r.stderr)) throw commandFailed(tcArgv(vars, argv), r);
      }
      // name AND id: a concurrent destroy (and maybe a new rule of the same name) already won.
      if (!(await deleteRule(db, rule))) throw notFound(`no traffic rule named ${name}`);
    } catch (e) {
      await dropTrafficChange(system, change);
      throw e;
    }

    if ((await rulesOnDevice(db, rule.device)) === 0) {
      try {
        const q = await execTc(t, showQdiscArgv(rule.device));
        // Only our own root, and only while still no rule uses the device (re-checked after the
        // read, to keep the window with a concurrent create on this device small).
        if (
          q.code === 0 &&
          parseTcQdisc(q.stdout, rule.device).some(isOurRoot) &&
          (await rulesOnDevice(db, rule.device)) === 0
        ) {
          for (const argv of planRemoveRoot(rule.device)) {
            const r = await execTc(t, argv);
            if (r.code !== 0 && !isGone(r.stderr))
              console.warn(`[${requestId}] traffic: could not remove our root on ${rule.device}: ${r.stderr.trim()}`);
          }
        }
      } catch (e) {
        console.warn(`[${requestId}] traffic: could not remove our root on ${rule.device}:`, e);
      }
    }

    await keepTrafficChange(system, change, []);
    try {
      await events.send({
        kind: 'traffic.rule.destroyed',
        data: { name, device: rule.device, ip: rule.ip, rate: rule.rate, id: rule.id },
      });
    } catch (e) {
      console.error(`[${requestId}] traffic: rule ${name} destroyed but its event could not be stored:`, e);
    }
    return { id: rule.id };
  },
});
