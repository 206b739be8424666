import * as z from 'zod';

/** A token's name, as `ballast token create NAME` takes it. */
export const tokenName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/, 'must be 1-64 of A-Z a-z 0-9 _ . @ - not starting with a symbol');

/** A token's id (12 hex digits) or its name. */
export const tokenRef = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/, "must be a token's id or name");
