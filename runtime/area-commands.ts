/**
 * `ballast <area> <command> …`: the CLI commands areas bring (AreaModule.commands), found by name
 * so the CLI names no area. They run without the HTTP server, on the host's config and allow-list.
 */
import type { HostConfig } from './config';
import { AREAS } from './areas/index';
import type { AreaModule } from './areas/types';
import { areaSettings, backendFor } from './host';

export function areaWithCommands(name: string): AreaModule<unknown> | undefined {
  return AREAS.find((a) => a.name === name && a.commands && Object.keys(a.commands).length > 0);
}

export function areaCommandUsages(): string[] {
  return AREAS.flatMap((a) => Object.values(a.commands ?? {}).map((c) => c.usage));
}

/** Runs one area command; a usage problem is thrown as `usage` for the CLI to report. */
export async function runAreaCommand(
  area: AreaModule<unknown>,
  sub: string | undefined,
  args: string[],
  config: HostConfig,
  usage: (message: string) => Error,
): Promise<number> {
  const cmd = sub === undefined ? undefined : area.commands?.[sub];
  if (!cmd)
    throw usage(
      `${area.name}: ${sub ? `unknown command ${JSON.stringify(sub)}` : 'needs a command'} (${Object.keys(area.commands ?? {}).join(', ')})`,
    );
  // the host's one parse of settings.<area> (every issue, a hint for a mistyped key)
  const settings = areaSettings(area, config.settings) ?? {};
  return cmd.run({
    args,
    config,
    settings,
    backend: backendFor(config),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}
