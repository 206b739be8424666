import * as z from 'zod';

/**
 * A trusted certificate's name: the file `<name>.crt` in the trust store. Letters, digits, `_`,
 * `-`, `.`; no leading dot or dash, no `..`, at most 64 characters before the optional `.crt`
 * (which is dropped: `corp-ca` and `corp-ca.crt` name the same file).
 */
export const trustName = z
  .string()
  .max(68)
  .transform((s) => (s.endsWith('.crt') ? s.slice(0, -4) : s))
  .pipe(
    z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
        'must be 1-64 of A-Z a-z 0-9 _ . - (optionally followed by .crt) and not start with . or -',
      )
      .refine((s) => !s.includes('..'), 'must not contain ..'),
  )
  .describe('name of the trusted certificate: the file <name>.crt in the trust store (the .crt suffix is optional)');
