/**
 * What a `kerberos:manage` token may write into the files every Kerberos program on the box reads
 * as root (issue 27 item 9). Two tables, read by one walk over the parser's lines:
 *
 * - a realm file (`<krb5ConfD>/<name>.conf`) holds realm data only: `[realms]` with one realm's
 *   block, whose relations are those of krb5.conf(5) [realms] (REALM_RELATIONS), and
 *   `[domain_realm]`. Any other section, relation, subsection or directive is refused;
 * - the global krb5.conf may hold anything MIT reads, but a relation that names a file or a
 *   directory (PATH_TAGS, or any value that is an absolute path or a `FILE:`/`DIR:` residual) is
 *   kept only when the path lies inside the Kerberos paths this host manages (policyRoots).
 *
 * Each refusal is a 400 on `body.conf` naming the line's number and text.
 */
import { areaSettings } from '../core/settings';
import { ApiError } from '../core/errors';
import { isUnder } from '../core/paths';
import { path, type Vars } from '../core/vars';
import { kerberosSettings } from './contract';
import { parseKrb5Conf, type Krb5LineEvent } from './parse/krb5-conf';

/**
 * The relations of a realm's block, krb5.conf(5) [realms]. None names a file or loads code, so
 * `http_anchors` (a CA file or directory), the PKINIT relations (files, PKCS#11 modules) and the
 * kdc.conf(5) relations (database, ACL and stash files) are left out; so are the Kerberos 4 ones.
 * `names`: a subsection of plain relations (principal = local user).
 */
export const REALM_RELATIONS: Readonly<Record<string, 'value' | 'names'>> = {
  admin_server: 'value',
  auth_to_local: 'value',
  auth_to_local_names: 'names',
  default_domain: 'value',
  disable_encrypted_timestamp: 'value',
  kdc: 'value',
  kpasswd_server: 'value',
  master_kdc: 'value',
  primary_kdc: 'value',
};

/** How a relation's value names a path (krb5.conf(5), kdc.conf(5)). */
type PathKind =
  /** `TYPE:residual` credential cache; FILE/DIR name a path, KEYRING/KCM/MEMORY/API do not */
  | 'ccache'
  /** `FILE:`/`WRFILE:` or a bare path; MEMORY names none */
  | 'keytab'
  /** `dfl:`/`none:` name no path; `file2:` does */
  | 'rcache'
  /** an absolute path (`-`: none, for kcm_socket) */
  | 'path'
  /** PKINIT-style locations: `FILE:a[,b]`, `DIR:`, `PKCS12:`; `PKCS11:` loads a module, `ENV:` hides the path */
  | 'pkix'
  /** code loading: never written through the API */
  | 'code';

export const PATH_TAGS: Readonly<Record<string, PathKind>> = {
  default_ccache_name: 'ccache',
  default_keytab_name: 'keytab',
  default_client_keytab_name: 'keytab',
  admin_keytab: 'keytab',
  default_rcache_name: 'rcache',
  k5login_directory: 'path',
  kcm_socket: 'path',
  database_name: 'path',
  acl_file: 'path',
  key_stash_file: 'path',
  dict_file: 'path',
  iprop_logfile: 'path',
  ldap_service_password_file: 'path',
  http_anchors: 'pkix',
  pkinit_anchors: 'pkix',
  pkinit_pool: 'pkix',
  pkinit_revoke: 'pkix',
  pkinit_identities: 'pkix',
  pkinit_identity: 'pkix',
  db_module_dir: 'code',
  plugin_base_dir: 'code',
};

/** Where a path a relation names may lie, per kind of file. */
export interface PolicyRoots {
  keytab: string[];
  ccache: string[];
  /** every other file or directory */
  files: string[];
}

const stripSlash = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);

/**
 * The configured Kerberos paths: the keytab and the keytab roots for keytabs, the routes' ticket
 * cache for caches, and for any other file these plus the global file and the include directory.
 */
export function policyRoots(vars: Vars): PolicyRoots {
  const keytabRoots = areaSettings(vars, 'kerberos', kerberosSettings).keytabRoots ?? [];
  const keytab = [path(vars, 'keytab'), ...keytabRoots].map(stripSlash);
  const ccache = [stripSlash(path(vars, 'krb5Ccache'))];
  const conf = [path(vars, 'krb5Conf'), path(vars, 'krb5ConfD')].map(stripSlash);
  return { keytab, ccache, files: [...conf, ...keytab, ...ccache] };
}

function refusal(text: string, line: number, why: string): ApiError {
  const src = (text.split('\n')[line - 1] ?? '').replace(/\r+$/, '').trim();
  const shown = src.length > 120 ? `${src.slice(0, 120)}…` : src;
  const message = `line ${line} \`${shown}\`: ${why}`;
  return new ApiError('validation_failed', `invalid body: body.conf: ${message}`, {
    issues: [{ path: 'body.conf', message }],
  });
}

/** Runs `check` on every line event of text the caller has already parsed without error. */
function walk(text: string, check: (e: Krb5LineEvent) => string | undefined): void {
  parseKrb5Conf(text, (e) => {
    const why = check(e);
    if (why !== undefined) throw refusal(text, e.line, why);
  });
}

const REALM_ONLY = 'a realm file holds only [realms] (one realm) and [domain_realm]';

/**
 * A realm file: `[realms]` with the block of one realm and `[domain_realm]`, nothing else. A file
 * named after a realm (`CORP.EXAMPLE.COM.conf`: the name has a dot) holds that realm's block.
 * `name` is the realm name the route was given, with or without `.conf`.
 */
export function checkRealmFile(text: string, name: string): void {
  const base = name.endsWith('.conf') ? name.slice(0, -'.conf'.length) : name;
  let realm: string | undefined;
  walk(text, (e) => {
    if (e.type === 'directive') return `${REALM_ONLY}; include lines belong in krb5.conf (conf/update)`;
    if (e.type === 'section')
      return e.name === 'realms' || e.name === 'domain_realm' ? undefined : `${REALM_ONLY}, not [${e.name}]`;
    const [section, ...inner] = e.path;
    if (section === 'domain_realm')
      return e.type === 'relation' ? undefined : '[domain_realm] maps host and domain names to realms: no subsections';
    // [realms]
    if (inner.length === 0) {
      if (e.type === 'relation') return `a realm in [realms] is a block: ${e.tag} = { … }`;
      if (base.includes('.') && e.tag.toUpperCase() !== base.toUpperCase())
        return `realm file ${base} is named after realm ${base}: its [realms] holds only that realm`;
      if (realm !== undefined && realm !== e.tag)
        return `a realm file holds one realm: ${realm} is here already (one file per realm)`;
      realm = e.tag;
      return undefined;
    }
    if (inner.length === 1) {
      const kind = Object.hasOwn(REALM_RELATIONS, e.tag) ? REALM_RELATIONS[e.tag] : undefined;
      if (kind === undefined)
        return `${e.tag} is not a realm relation (allowed: ${Object.keys(REALM_RELATIONS).join(', ')})`;
      if ((kind === 'names') !== (e.type === 'subsection'))
        return kind === 'names' ? `${e.tag} is a block: ${e.tag} = { principal = user }` : `${e.tag} takes a value`;
      return undefined;
    }
    return e.type === 'relation' ? undefined : `${inner[inner.length - 1]} holds plain relations: no subsections`;
  });
}

const EXPANSION = 'parameter expansion (%{…}) in a path cannot be checked';

/** Why `p` may not be written, or undefined when it lies at or below one of `roots`. */
function pathProblem(p: string, roots: readonly string[]): string | undefined {
  if (!p.startsWith('/')) return `${p || '(empty)'} is not an absolute path`;
  if (p.includes('%{')) return EXPANSION;
  if (p.split('/').some((s) => s === '.' || s === '..')) return `${p} has . or .. segments`;
  const q = stripSlash(p.replace(/\/{2,}/g, '/'));
  if (roots.some((r) => isUnder(q, r))) return undefined;
  return `${p} is outside the Kerberos paths this host manages (${roots.join(', ')})`;
}

/** `TYPE:residual` → [TYPE upper-cased, residual]; a value without a type prefix → ['', value]. */
function typed(v: string): [string, string] {
  const m = /^([A-Za-z][A-Za-z0-9]*):(.*)$/s.exec(v);
  return m ? [m[1].toUpperCase(), m[2]] : ['', v];
}

/** The problem with one value of a PATH_TAGS relation, if any. */
function taggedProblem(tag: string, kind: PathKind, value: string, roots: PolicyRoots): string | undefined {
  const v = value.trim();
  const [type, rest] = typed(v);
  switch (kind) {
    case 'code':
      return `${tag} is not allowed: it chooses where the Kerberos programs load code from`;
    case 'ccache':
      if (type === '' || type === 'FILE') return pathProblem(rest, roots.ccache);
      if (type === 'DIR') return pathProblem(rest.replace(/^:/, ''), roots.ccache);
      if (['KEYRING', 'KCM', 'MEMORY', 'API'].includes(type)) return undefined;
      return `${tag}: cache type ${type} is not one this host can check (FILE, DIR, KEYRING, KCM, MEMORY, API)`;
    case 'keytab':
      if (type === '' || type === 'FILE' || type === 'WRFILE') return pathProblem(rest, roots.keytab);
      if (type === 'MEMORY') return undefined;
      return `${tag}: keytab type ${type} is not one this host can check (FILE, WRFILE, MEMORY)`;
    case 'rcache':
      if (type === 'DFL' || type === 'NONE') return undefined;
      if (type === 'FILE2') return pathProblem(rest, roots.files);
      return `${tag}: replay cache type ${type || '(none)'} is not one this host can check (dfl, none, file2)`;
    case 'path':
      return tag === 'kcm_socket' && v === '-' ? undefined : pathProblem(v, roots.files);
    case 'pkix':
      if (type === 'PKCS11') return `${tag}: PKCS11: loads a module into every Kerberos program`;
      if (type === 'FILE') {
        for (const f of rest.split(',')) {
          const p = pathProblem(f, roots.files);
          if (p) return p;
        }
        return undefined;
      }
      if (type === 'DIR' || type === 'PKCS12') return pathProblem(rest, roots.files);
      return `${tag}: ${type || 'a location'} without FILE:, DIR: or PKCS12: names a path this host cannot check`;
  }
}

/**
 * A value of any other relation that is a path all the same: absolute, or the residual of a
 * FILE:/WRFILE:/DIR:/PKCS12:/file2: location, or `FILE:`/`FILE=`/`DEVICE=` of [logging].
 */
function untaggedProblem(section: string | undefined, value: string, roots: PolicyRoots): string | undefined {
  const v = value.trim();
  if (section === 'logging') {
    const m = /^(?:FILE[:=]|DEVICE=)(.*)$/s.exec(v);
    return m ? pathProblem(m[1], roots.files) : undefined;
  }
  if (v.startsWith('/')) return pathProblem(v, roots.files);
  const [type, rest] = typed(v);
  if (type === 'PKCS11') return 'PKCS11: loads a module into every Kerberos program';
  // a residual of digits is a port (`kdc = file:88`), not a path
  if (['FILE', 'WRFILE', 'DIR', 'PKCS12', 'FILE2'].includes(type) && !/^\d+$/.test(rest)) {
    for (const f of type === 'FILE' ? rest.split(',') : [rest]) {
      const p = pathProblem(f.replace(/^:/, ''), roots.files);
      if (p) return p;
    }
  }
  return undefined;
}

/**
 * The global krb5.conf: every relation that names a file or a directory names one inside the
 * configured Kerberos paths. Code loading (`module`, plugin_base_dir, db_module_dir, PKCS11:) is
 * refused whatever the path.
 */
export function checkConfPaths(text: string, roots: PolicyRoots): void {
  walk(text, (e) => {
    if (e.type !== 'relation') return undefined;
    const kind = Object.hasOwn(PATH_TAGS, e.tag) ? PATH_TAGS[e.tag] : undefined;
    return kind ? taggedProblem(e.tag, kind, e.value, roots) : untaggedProblem(e.path[0], e.value, roots);
  });
}
