/**
 * The persistent network configuration: Debian ifupdown files.
 *
 * What is read: the main file (paths.networkInterfaces) and then every regular file of
 * paths.networkInterfacesD whose name does not start with a dot, in name order — exactly what
 * Debian's stock `source /etc/network/interfaces.d/*` line pulls in. Other `source` lines are
 * not followed (their paths are outside what this service manages).
 *
 * Where a change is written: an interface's stanza is edited in the file that already holds
 * it (so a hand-made interfaces.d/eth3 stays the one place eth3 is configured); a new stanza
 * goes to the main file. Removal takes the name out of every file. Each changed file is
 * written once per request, atomically, keeping its previous version for rollback.
 */
import { ApiError } from '../core/errors';
import { ParseError } from '../core/parse-error';
import type { SystemClient } from '../core/system';
import { path, type Vars } from '../core/vars';
import {
  findInetIface,
  parseIfupdownWithSpans,
  type IfupdownFile,
  type IfupdownIface,
  type ParsedWithSpans,
} from './parse/ifupdown';
import { replaceIfaceStanza, setIfaceOption, type IfaceStanzaInput } from './render/ifupdown';

export interface ConfigFile {
  path: string;
  /** null: the file does not exist (only the main file can be absent) */
  text: string | null;
  parsed: ParsedWithSpans;
}

export interface NetworkConfig {
  files: ConfigFile[];
  /** all files as one, in read order (what ifupdown sees after `source`) */
  merged: IfupdownFile;
}

function parseFile(file: string, text: string | null): ConfigFile {
  try {
    return { path: file, text, parsed: parseIfupdownWithSpans(text ?? '') };
  } catch (e) {
    if (e instanceof ParseError) {
      throw new ApiError(
        'bad_gateway',
        `cannot read ${file}${e.line !== undefined ? ` (line ${e.line})` : ''}: ${e.message}`,
      );
    }
    throw e;
  }
}

function merge(files: ConfigFile[]): IfupdownFile {
  const out: IfupdownFile = { auto: [], allow: {}, ifaces: [], mappings: [], sources: [], other: [] };
  for (const { parsed } of files) {
    const f = parsed.file;
    for (const n of f.auto) if (!out.auto.includes(n)) out.auto.push(n);
    for (const [cls, names] of Object.entries(f.allow)) {
      const target = (out.allow[cls] ??= []);
      for (const n of names) if (!target.includes(n)) target.push(n);
    }
    out.ifaces.push(...f.ifaces);
    out.mappings.push(...f.mappings);
    out.sources.push(...f.sources);
    out.other.push(...f.other);
  }
  return out;
}

export async function readNetworkConfig(system: SystemClient, vars: Vars): Promise<NetworkConfig> {
  const main = path(vars, 'networkInterfaces');
  const dir = path(vars, 'networkInterfacesD');
  const [mainText, entries] = await Promise.all([system.readFile(main), system.listDir(dir)]);
  const names = (entries ?? []).filter((e) => e.type === 'file' && !e.name.startsWith('.')).map((e) => e.name);
  const texts = await Promise.all(names.map((n) => system.readFile(`${dir}/${n}`)));
  const files = [parseFile(main, mainText)];
  names.forEach((n, i) => {
    const text = texts[i];
    if (text !== null && text !== undefined) files.push(parseFile(`${dir}/${n}`, text));
  });
  return { files, merged: merge(files) };
}

/** The inet stanza ifupdown would use for `name` (repeated stanzas merged), or null. */
export function inetStanza(config: NetworkConfig, name: string): IfupdownIface | null {
  return findInetIface(config.merged, name);
}

export function hasAnyStanza(config: NetworkConfig, name: string): boolean {
  return config.merged.ifaces.some((i) => i.name === name);
}

/** Value of the first option among `names` in the stanza, or undefined. */
export function optionValue(iface: IfupdownIface | null, names: string[]): string | undefined {
  return iface?.options.find((o) => names.includes(o.name))?.value;
}

/**
 * Pending edits of the configuration. Each edit is applied to the current text of the file it
 * concerns, so several edits to one file compose; `changes()` lists the files whose text
 * differs from what was read.
 */
export class ConfigEdit {
  private readonly texts = new Map<string, string>();

  constructor(private readonly config: NetworkConfig) {
    for (const f of config.files) this.texts.set(f.path, f.text ?? '');
  }

  private get mainPath(): string {
    const main = this.config.files[0];
    if (!main) throw new Error('internal: no main network configuration file');
    return main.path;
  }

  private holderOf(name: string): string {
    const f = this.config.files.find((x) =>
      x.parsed.spans.some((s) => s.iface.name === name && s.iface.family === 'inet'),
    );
    return f?.path ?? this.mainPath;
  }

  /** Replace (or create) the inet stanza of `stanza.name`. */
  setStanza(stanza: IfaceStanzaInput): this {
    const file = this.holderOf(stanza.name);
    this.texts.set(file, replaceIfaceStanza(this.texts.get(file) ?? '', stanza.name, stanza));
    return this;
  }

  /** Remove every stanza of `name` (all families) and its auto/allow entries, in every file. */
  removeStanza(name: string): this {
    for (const f of this.config.files) {
      const mentions =
        f.parsed.spans.some((s) => s.iface.name === name) || f.parsed.allowLines.some((l) => l.names.includes(name));
      if (mentions) this.texts.set(f.path, replaceIfaceStanza(this.texts.get(f.path) ?? '', name, null));
    }
    return this;
  }

  /** Set one option of an existing inet stanza, keeping the rest of it byte for byte. */
  setOption(name: string, aliases: string[], option: { name?: string; value: string | string[] } | null): this {
    const file = this.holderOf(name);
    const out = setIfaceOption(this.texts.get(file) ?? '', name, aliases, option);
    if (out === null) throw new ApiError('conflict', `${name} has no inet stanza to change`);
    this.texts.set(file, out);
    return this;
  }

  /**
   * The files whose text differs from what was read. A file of interfaces.d that an edit leaves
   * empty (nothing but blank lines: its last stanza was removed) is removed rather than left as
   * a 0-byte file; the main file is always kept. A file that did not exist and would stay empty
   * is not a change (nothing is created by an edit that writes nothing).
   */
  changes(): FileChange[] {
    const out: FileChange[] = [];
    for (const f of this.config.files) {
      const after = this.texts.get(f.path);
      if (after === undefined || after === (f.text ?? '')) continue;
      const emptied = f.path !== this.mainPath && after.trim() === '';
      if (emptied && f.text === null) continue;
      out.push({ path: f.path, before: f.text, after: emptied ? null : after });
    }
    return out;
  }
}

export interface FileChange {
  path: string;
  /** null: the file did not exist */
  before: string | null;
  /** null: the file is removed (an interfaces.d file whose last stanza was removed) */
  after: string | null;
}
