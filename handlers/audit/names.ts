import * as z from 'zod';

/** An area as a filter names it (`fs`, `network`). */
export const areaName = z.string().regex(/^[a-z][a-z0-9]{0,31}$/, 'must be an area name (fs, network, …)');

/** A token's id (12 hex digits) or its name. */
export const tokenRef = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/, "must be a token's id or name");
