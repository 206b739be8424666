import * as z from 'zod';

/** Shared input types. Strict patterns: a name can never be a path, an option or a newline. */

export const absolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => p.startsWith('/'), 'must be an absolute path')
  .refine((p) => !p.includes('\0'), 'must not contain NUL')
  .refine((p) => !p.split('/').includes('..'), 'must not contain ..')
  .refine((p) => !/[\n\r]/.test(p), 'must not contain a line break');

/** A file or object name: letters, digits, `_`, `-`, `.`; no leading dot or dash. */
export const safeName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 of A-Z a-z 0-9 _ . - and not start with . or -')
  .refine((s) => !s.includes('..'), 'must not contain ..');

/** Linux interface names: IFNAMSIZ 16 incl. NUL, no `/`, whitespace or `:` (aliases are not devices). */
export const interfaceName = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$/, 'not a valid interface name');

export const ipv4 = z
  .string()
  .regex(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, 'must be a dotted IPv4 address')
  .refine(
    (s) => s.split('.').every((o) => Number(o) <= 255 && String(Number(o)) === o),
    'each octet must be 0-255 without leading zeros',
  );

/** A boolean given in a query string (`true`/`false`/`1`/`0`) or JSON. */
export const queryBoolean = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);

export const emptyObject = z.object({}).strict();
export const messageResponse = z.object({ message: z.string() });
