import { describe, expect, it } from 'vitest';
import { parseKrb5Error } from '../../../handlers/kerberos/parse/krb5-error';

describe('parseKrb5Error', () => {
  // The error lines of ../shared/upstream-samples/kinit/debian12-krb5-1.20.1-kinit-errors.transcript.txt
  // (Debian 12, krb5 1.20.1), copied here because the transcript mixes stdout and stderr and
  // does not give the argv, so it is not a fixture. fixtures/kinit has the same cases recorded
  // locally with their exact argv.
  const upstream: [string, string, string | undefined][] = [
    ['kinit: Password incorrect while getting initial credentials', 'password-incorrect', undefined],
    [
      "kinit: Client 'bob@EXAMPLE.TEST' not found in Kerberos database while getting initial credentials",
      'client-not-found',
      'bob@EXAMPLE.TEST',
    ],
    [
      "kinit: Cannot contact any KDC for realm 'OTHER.TEST' while getting initial credentials",
      'kdc-unreachable',
      'OTHER.TEST',
    ],
    [
      'kinit: Cannot find KDC for realm "NOWHERE.TEST" while getting initial credentials',
      'realm-unknown',
      'NOWHERE.TEST',
    ],
    [
      "kinit: Key table file '/srv/storage1/scratch/krb/none.keytab' not found while getting initial credentials",
      'keytab-not-found',
      '/srv/storage1/scratch/krb/none.keytab',
    ],
    [
      'kinit: Keytab contains no suitable keys for cifs/nas01.example.test@EXAMPLE.TEST while getting initial credentials',
      'keytab-no-suitable-keys',
      'cifs/nas01.example.test@EXAMPLE.TEST',
    ],
    [
      "klist: Key table file '/srv/storage1/scratch/krb/none.keytab' not found while starting keytab scan",
      'keytab-not-found',
      '/srv/storage1/scratch/krb/none.keytab',
    ],
    ["kinit: Client's credentials have been revoked while getting initial credentials", 'client-revoked', undefined],
    ["kinit: Client's entry in database has expired while getting initial credentials", 'client-expired', undefined],
    ['kinit: Cannot read password while getting initial credentials', 'cannot-read-password', undefined],
  ];
  for (const [line, kind, subject] of upstream) {
    it(`classifies upstream "${line.slice(7, 50)}…"`, () => {
      const e = parseKrb5Error(`${line}\n`);
      expect(e?.kind).toBe(kind);
      expect(e?.subject).toBe(subject);
      expect(e?.tool).toBe(line.slice(0, 5));
    });
  }

  it('reports an expired password when stdout shows the change prompt', () => {
    const stdout =
      'Password for alice@EXAMPLE.TEST: \nPassword expired.  You must change it now.\nEnter new password: \n';
    const stderr = 'kinit: Cannot read password while getting initial credentials\n';
    expect(parseKrb5Error(stderr, stdout)?.kind).toBe('password-expired');
    expect(parseKrb5Error(stderr)?.kind).toBe('cannot-read-password');
  });

  it('keeps unknown messages, takes the last tool line, and returns null without one', () => {
    expect(parseKrb5Error('kinit: Something new while doing things\n')).toEqual({
      tool: 'kinit',
      kind: 'unknown',
      message: 'Something new',
      during: 'doing things',
    });
    expect(
      parseKrb5Error(
        'Warning: Your password will expire soon\nkinit: Clock skew too great while getting initial credentials\n',
      )?.kind,
    ).toBe('clock-skew');
    expect(parseKrb5Error('')).toBeNull();
    expect(parseKrb5Error('\n\n')).toBeNull();
  });

  it('classifies an unreadable include/includedir as a configuration error (krb5 1.20, checked here)', () => {
    // `includedir` naming a directory that does not exist stops every MIT tool before it starts.
    expect(
      parseKrb5Error('kinit: Included profile directory could not be read while initializing Kerberos 5 library\n'),
    ).toEqual({
      tool: 'kinit',
      kind: 'config-invalid',
      message: 'Included profile directory could not be read',
      during: 'initializing Kerberos 5 library',
    });
    expect(parseKrb5Error('klist: Included profile file could not be read while initializing krb5\n')?.kind).toBe(
      'config-invalid',
    );
  });

  it('splits " while " at its last occurrence', () => {
    const e = parseKrb5Error("klist: Key table file '/tmp/a while b.keytab' not found while starting keytab scan\n");
    expect(e?.subject).toBe('/tmp/a while b.keytab');
    expect(e?.during).toBe('starting keytab scan');
  });
});
