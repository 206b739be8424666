/** A send that did not succeed. The message says why, for people; it never holds a secret. */
export class SendError extends Error {
  /** Retrying cannot help (e.g. a webhook answered 410 Gone, or the stored config is unusable). */
  readonly permanent: boolean;
  /** The destination asked us to wait this long (Retry-After). */
  readonly retryAfterMs?: number;

  constructor(message: string, o: { permanent?: boolean; retryAfterMs?: number } = {}) {
    super(message);
    this.name = 'SendError';
    this.permanent = o.permanent ?? false;
    this.retryAfterMs = o.retryAfterMs;
  }
}
