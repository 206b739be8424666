/**
 * The global krb5.conf and the realm files of its include directory: where they live, what may
 * be written to them, and how they are shown.
 */
import { ApiError } from '../core/errors';
import { isUnder } from '../core/paths';
import { ParseError } from '../core/parse-error';
import { path, type Vars } from '../core/vars';
import { checkConfPaths, checkRealmFile, policyRoots } from './conf-policy';
import { getOwn, type Krb5Conf, type Krb5Section, parseKrb5Conf } from './parse/krb5-conf';
import { type Krb5ConfInput, renderKrb5Conf } from './render/krb5-conf';
import type { RealmFile } from './responses';

/** The spec's rule 1: the global file's first line includes every realm file. */
export const INCLUDEDIR_LINE = 'includedir /etc/krb5.conf.d';

const stripSlash = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);

export const realmDir = (vars: Vars): string => stripSlash(path(vars, 'krb5ConfD'));

/**
 * The file name a realm name stands for when a file is created: `name` itself when it ends in
 * `.conf` (a listing key), else `<name>.conf` (`CORP.EXAMPLE.COM` → `CORP.EXAMPLE.COM.conf`,
 * which MIT reads: it ends in `.conf` and is no dotfile). `name` has passed realmFileName.
 */
export const realmConfFileName = (name: string): string => (name.endsWith('.conf') ? name : `${name}.conf`);

/** `<krb5ConfD>/<realmConfFileName(name)>`: where create writes. */
export const realmFilePath = (vars: Vars, name: string): string => `${realmDir(vars)}/${realmConfFileName(name)}`;

/**
 * The files a name may address, in order: a name MIT reads as it is (only `[A-Za-z0-9_-]`, as
 * the listing shows such a file: `plain_name`) names that file first; then `realmConfFileName(name)`.
 * Details, update and delete take the first that exists, so every listing key is addressable.
 */
export function realmFileCandidates(vars: Vars, name: string): string[] {
  const dir = realmDir(vars);
  const out = /^[A-Za-z0-9_-]+$/.test(name) ? [`${dir}/${name}`] : [];
  return [...out, `${dir}/${realmConfFileName(name)}`];
}

/** The existing file `name` addresses (see realmFileCandidates), or null. */
export async function findRealmFile(
  vars: Vars,
  name: string,
  isFile: (p: string) => Promise<boolean>,
): Promise<string | null> {
  for (const p of realmFileCandidates(vars, name)) if (await isFile(p)) return p;
  return null;
}

/** `dir/x.conf` → `x.conf`. */
export const baseName = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/**
 * The names MIT's includedir reads (prof_parse.c, 1.20): only `[A-Za-z0-9_-]` names, or names
 * ending in `.conf` that are not dotfiles; editor backups and `.rpmsave` files are skipped.
 */
export const isIncludedFileName = (name: string): boolean =>
  /^[A-Za-z0-9_-]+$/.test(name) || (name.endsWith('.conf') && !name.startsWith('.'));

function invalidConf(message: string): ApiError {
  return new ApiError('validation_failed', `invalid body: body.conf: ${message}`, {
    issues: [{ path: 'body.conf', message }],
  });
}

/** 1-based line of the first line of `text` that matches. */
function lineOf(text: string, test: (line: string) => boolean): number | undefined {
  const i = text.split('\n').findIndex(test);
  return i < 0 ? undefined : i + 1;
}

/** Every relation named `tag` anywhere below a section (plugin settings nest in subsections). */
function hasTag(section: Krb5Section, tag: string): boolean {
  for (const [k, v] of Object.entries(section)) {
    if (k === tag) return true;
    for (const item of Array.isArray(v) ? v : [v]) if (typeof item === 'object' && hasTag(item, tag)) return true;
  }
  return false;
}

/**
 * What would make Kerberos programs (run as root by this service) load code or stop starting:
 * plugin modules and plugin directories (`[plugins] <interface> = { module = name:/path.so }`,
 * `plugin_base_dir`), and include lines naming a path outside the configured Kerberos files.
 * Whether an included path exists is checked by the route (it needs the host).
 */
function refuseCodeLoading(conf: Krb5Conf, text: string, vars: Vars): void {
  const at = (re: RegExp | ((line: string) => boolean)) => {
    const n = lineOf(text, typeof re === 'function' ? re : (l) => re.test(l));
    return n === undefined ? '' : ` (line ${n})`;
  };
  const plugins = Object.hasOwn(conf.sections, 'plugins') ? conf.sections.plugins : undefined;
  if (plugins && hasTag(plugins, 'module'))
    throw invalidConf(
      `plugin modules are not allowed${at(/^\s*module\s*=/)}: they load a library into every Kerberos program`,
    );
  for (const section of Object.values(conf.sections)) {
    if (hasTag(section, 'plugin_base_dir'))
      throw invalidConf(
        `plugin_base_dir is not allowed${at(/^\s*plugin_base_dir\s*=/)}: it chooses where plugins are loaded from`,
      );
  }
  const allowed = [realmDir(vars), '/etc/krb5.conf.d', path(vars, 'krb5Conf')];
  for (const d of conf.directives) {
    if (d.type === 'module') continue; // refused by the caller
    const p = stripSlash(d.path.trim());
    const inside = allowed.some((a) => isUnder(p, a)) && !p.split('/').includes('..');
    if (!inside) {
      throw invalidConf(
        `${d.type} ${d.path}${at((l) => l.trim().startsWith(`${d.type} `) && l.includes(d.path))} is outside the Kerberos configuration this host manages (${realmDir(vars)})`,
      );
    }
  }
}

/** The include/includedir paths a configuration names (for the route's existence check). */
export function includedPaths(conf: Krb5Conf): { type: string; path: string }[] {
  return conf.directives.filter((d) => d.type !== 'module').map((d) => ({ type: d.type, path: d.path }));
}

/** Parse text a client wants written; a ParseError names the line (never its content). */
function parseForWrite(text: string, vars?: Vars): Krb5Conf {
  let conf: Krb5Conf;
  try {
    conf = parseKrb5Conf(text);
  } catch (e) {
    if (e instanceof ParseError) throw invalidConf(`does not parse: ${e.message}`);
    throw e;
  }
  // `module PATH:RESIDUAL` makes every Kerberos program dlopen PATH and ignore the rest of the
  // file: a write through this API must not be able to load code into root processes.
  if (conf.directives.some((d) => d.type === 'module')) throw invalidConf('the module directive is not allowed');
  if (vars) refuseCodeLoading(conf, text, vars);
  return conf;
}

/**
 * First line `includedir /etc/krb5.conf.d` (rule 1), or the configured include directory
 * (paths.krb5ConfD), either with a trailing slash, which MIT reads alike. The spec's line names
 * the configured directory in what is stored: when krb5ConfD is elsewhere (tests, the demo, a
 * box configured so) `includedir /etc/krb5.conf.d` is written as `includedir <krb5ConfD>`, so
 * MIT reads the directory the realm routes write. Answers the text to store and its parse.
 */
export function globalConfText(text: string, vars: Vars): { text: string; parsed: Krb5Conf } {
  checkGlobalConf(text, vars);
  const nl = text.indexOf('\n');
  const first = nl < 0 ? text : text.slice(0, nl);
  const dir = stripSlash((/^includedir[ \t]+(\/\S*)/.exec(first) ?? ['', ''])[1]);
  const stored = dir === realmDir(vars) ? text : `includedir ${realmDir(vars)}${nl < 0 ? '' : text.slice(nl)}`;
  const parsed = parseForWrite(stored, vars);
  checkConfPaths(stored, policyRoots(vars));
  return { text: stored, parsed };
}

export function checkGlobalConf(text: string, vars: Vars): Krb5Conf {
  const first = (text.split('\n', 1)[0] ?? '').replace(/[ \t\r]+$/, '');
  const m = /^includedir[ \t]+(\/\S*)$/.exec(first);
  const dir = m ? stripSlash(m[1]) : undefined;
  if (dir === undefined || (dir !== '/etc/krb5.conf.d' && dir !== realmDir(vars))) {
    throw invalidConf(`the first line must be \`${INCLUDEDIR_LINE}\`: it includes every realm file`);
  }
  return parseForWrite(text, vars);
}

/**
 * The text to store for the realm file `name` (as the route was given it) from raw text or an
 * object (rendered), checked alike: it must parse, load no code and hold realm data only.
 */
export function realmFileText(
  conf: string | Krb5ConfInput,
  vars: Vars,
  name: string,
): { text: string; parsed: Krb5Conf } {
  // krb5ConfInput has already refused whatever cannot be rendered
  const text = typeof conf === 'string' ? conf : renderKrb5Conf(conf);
  const parsed = parseForWrite(text, vars);
  checkRealmFile(text, name);
  return { text, parsed };
}

/** 400 naming the line when an include/includedir of a file to be written names a missing path. */
export async function checkIncludesExist(
  conf: Krb5Conf,
  text: string,
  vars: Vars,
  exists: (p: string) => Promise<boolean>,
): Promise<void> {
  // the realm directory itself (the spec's first line) is the routes' own: realm create makes it
  const own = new Set(['/etc/krb5.conf.d', realmDir(vars)]);
  for (const d of includedPaths(conf)) {
    if (own.has(stripSlash(d.path.trim())) || (await exists(d.path.trim()))) continue;
    const n = lineOf(text, (l) => l.trim().startsWith(`${d.type} `) && l.includes(d.path));
    throw invalidConf(
      `${d.type} ${d.path}${n === undefined ? '' : ` (line ${n})`} names a path that does not exist: every Kerberos program would fail to start`,
    );
  }
}

/** A realm file as the list and details routes show it. */
export function realmFileEntry(raw: string): RealmFile {
  try {
    return { raw, json: parseKrb5Conf(raw) };
  } catch (e) {
    if (e instanceof ParseError) return { raw, json: null, error: e.message };
    throw e;
  }
}

/** `default_realm` of the global file (the first one if repeated, as MIT reads it), if any. */
export async function defaultRealm(
  read: (file: string) => Promise<string | null>,
  vars: Vars,
): Promise<string | undefined> {
  const raw = await read(path(vars, 'krb5Conf'));
  if (raw === null) return undefined;
  const { sections } = parseKrb5Conf(raw);
  const lib = Object.hasOwn(sections, 'libdefaults') ? sections.libdefaults : undefined;
  const v = lib ? getOwn(lib, 'default_realm') : undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' && first !== '' ? first : undefined;
}
