/**
 * The one "is this path at or below that root" predicate, for routes and the host alike (a
 * security predicate has one implementation). Both are absolute, already resolved or
 * normalised; a sibling that only shares the root's prefix (`/srv/data2` for `/srv/data`) is
 * never under it.
 */
export function isUnder(p: string, root: string, strictly = false): boolean {
  const r = root.length > 1 ? root.replace(/\/+$/, '') : root;
  if (r === '/') return !strictly || p !== '/';
  return p.startsWith(`${r}/`) || (!strictly && p === r);
}
