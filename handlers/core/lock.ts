/**
 * Named in-process locks. Changes that read state, plan, then write config and run commands
 * (network stanzas, bonds) must not interleave: two requests would each plan from the same old
 * file. Route bundles share this module through the host's shared chunk (and app.mjs is one
 * module), so a name means the same lock for every route in the process; one host serves one box.
 */
const tails = new Map<string, Promise<void>>();

export async function withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(name) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = previous.then(() => mine);
  tails.set(name, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(name) === tail) tails.delete(name);
  }
}
