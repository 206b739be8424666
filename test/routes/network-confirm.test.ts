/**
 * Issue 30, route side: which window a change gets (handlers/network/change-window.ts). The
 * lockout guard's cases get settings.network.confirmDefaultS unless the request says otherwise;
 * `force` without `confirmWithin` is the unsafe path; 0 keeps the guard's 409. The system test
 * (test/system/network-confirm.test.ts) shows the windows at work.
 */
import { describe, expect, it } from 'vitest';
import { conflict } from '../../handlers/core/errors';
import { networkSettings } from '../../handlers/network/contract';
import { windowFor } from '../../handlers/network/change-window';
import { configureBody } from '../../handlers/network/requests';

const guard = conflict('refusing to re-address eth0');
const settings = (confirmDefaultS?: number) =>
  networkSettings.parse(confirmDefaultS === undefined ? {} : { confirmDefaultS });

describe('the confirmation window of a change', () => {
  it('a change cutting this connection gets the default window (60 s), without force or confirmWithin', () => {
    expect(settings().confirmDefaultS).toBe(60);
    expect(windowFor(settings(), { force: false }, guard)).toBe(60);
    expect(windowFor(settings(30), { force: false }, guard)).toBe(30);
  });

  it('confirmWithin wins; force alone is the unsafe path (no window); other changes get none', () => {
    expect(windowFor(settings(), { force: false, confirmWithin: 5 }, guard)).toBe(5);
    expect(windowFor(settings(), { force: true, confirmWithin: 7 }, null)).toBe(7);
    expect(windowFor(settings(), { force: true }, guard)).toBeUndefined();
    expect(windowFor(settings(), { force: false }, null)).toBeUndefined();
  });

  it('confirmDefaultS 0 keeps the guard: 409 without force or confirmWithin', () => {
    expect(() => windowFor(settings(0), { force: false }, guard)).toThrow(guard);
    expect(windowFor(settings(0), { force: true }, guard)).toBeUndefined();
  });

  it('confirmWithin is 5 to 3600 seconds, a number or a numeric string', () => {
    const body = { device: 'eth0', isdhcp: true };
    expect(configureBody.parse({ ...body, confirmWithin: '30' }).confirmWithin).toBe(30);
    expect(configureBody.parse(body).confirmWithin).toBeUndefined();
    expect(configureBody.safeParse({ ...body, confirmWithin: 4 }).success).toBe(false);
    expect(configureBody.safeParse({ ...body, confirmWithin: 3601 }).success).toBe(false);
    expect(configureBody.safeParse({ ...body, confirmWithin: 5.5 }).success).toBe(false);
  });
});
