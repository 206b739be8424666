/** Answer of the pure refusal rules (device-free.ts, the checksum-file check): `code` is stable, `reason` is for people. */
export type CheckResult = { ok: true } | { ok: false; code: string; reason: string };
