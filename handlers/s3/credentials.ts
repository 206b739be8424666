/**
 * Credentials the S3 server refuses at start: create and update still write them (as the spec
 * says) and the answer's `warnings` names each problem (README "Weak credentials").
 */

const bytes = (s: string) => new TextEncoder().encode(s).length;

/**
 * Warnings for credentials MinIO refuses (minio/minio internal/auth/credentials.go). Its minimums
 * are Go's `len`, in UTF-8 bytes: `éé` (two characters, four bytes) is a valid access key. Fewer
 * bytes than the minimum always means fewer characters too, so the messages' "characters" hold.
 */
export function credentialWarnings(rootUser: string, rootPassword: string): string[] {
  const w: string[] = [];
  if (bytes(rootUser) < 3) w.push('rootUser is shorter than 3 characters (the S3 minimum): the service will not start');
  if (/[=,]/.test(rootUser))
    w.push('rootUser contains "=" or ",", which S3 access keys may not: the service will not start');
  if (bytes(rootPassword) < 8)
    w.push('rootPassword is shorter than 8 characters (the S3 minimum): the service will not start');
  return w;
}
