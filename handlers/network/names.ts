/** Name patterns of the network area. */
import * as z from 'zod';

/**
 * A Linux interface name as ifupdown sees it: IFNAMSIZ is 16 incl. NUL; `:` is allowed because
 * ifupdown logical names may be aliases (`eth0:1`). No whitespace, `/`, `#` or leading dash.
 */
export const ifaceName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}$/, 'not a valid interface name')
  .refine((s) => s !== '.' && s !== '..', 'not a valid interface name');
