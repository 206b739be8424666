/**
 * Credentials the S3 server refuses at start: create and update still write them (as the spec
 * says) and the answer's `warnings` names each problem (README "Weak credentials").
 */

/** Warnings for credentials MinIO refuses (minio/minio internal/auth/credentials.go). */
export function credentialWarnings(rootUser: string, rootPassword: string): string[] {
  const w: string[] = [];
  if ([...rootUser].length < 3)
    w.push('rootUser is shorter than 3 characters (the S3 minimum): the service will not start');
  if (/[=,]/.test(rootUser))
    w.push('rootUser contains "=" or ",", which S3 access keys may not: the service will not start');
  if ([...rootPassword].length < 8)
    w.push('rootPassword is shorter than 8 characters (the S3 minimum): the service will not start');
  return w;
}
