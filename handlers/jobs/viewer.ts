import type { Principal } from '../core/auth';
import type { JobViewer } from './contract';

/** Who asks, as the host's job ops filter by it (the token's id and permissions, never its secret). */
export function viewerOf(p: Principal): JobViewer {
  return { tokenId: p.tokenId, permissions: p.permissions };
}
