/**
 * What the pod routes and the host's pod area module (runtime/areas/pod.ts) share: the settings
 * schema (`settings.pod`), the host operations' names, payloads and results.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';

/** Lower-case compose project words: docker compose v2 refuses anything else in `-p`. */
export const POD_WORD = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;
/** A capability name as compose writes it (`NET_ADMIN`, `CAP_NET_ADMIN`). */
const CAPABILITY = /^(CAP_)?[A-Z_]{2,32}$/;

export const COMPOSE_FLAVOURS = ['compose-v2', 'docker-compose-v1', 'podman-compose'] as const;
export type ComposeFlavour = (typeof COMPOSE_FLAVOURS)[number];

/**
 * What compose files may ask for beyond the admission policy (README "Admission policy"). Each
 * switch is root-equivalent: a pod that gets it can get the host. Real-time CPU (`cpu_rt_*`),
 * network drivers other than bridge and volumes whose driver mounts anything but tmpfs or a bind
 * are refused whatever these say (runtime/areas/pod/admission/admit.ts).
 */
const allow = z.strictObject({
  /** `privileged` truthy, security_opt other than no-new-privileges */
  privileged: z.boolean().default(false),
  /** `network_mode: host` */
  hostNetwork: z.boolean().default(false),
  /** `pid`, `ipc`, `uts`, `userns_mode`, `cgroup`: host */
  hostNamespaces: z.boolean().default(false),
  /** capabilities a service may add beyond PSS baseline's list (upper case, with or without CAP_) */
  capabilities: z.array(z.string().regex(CAPABILITY)).default([]),
  /** `devices`, `device_cgroup_rules`, `gpus`, device reservations, per-device blkio */
  devices: z.boolean().default(false),
  /** sysctls beyond PSS baseline's safe set (namespaced ones only: net.*, kernel.shm*, kernel.msg*, kernel.sem*, fs.mqueue.*) */
  sysctls: z
    .array(
      z
        .string()
        .regex(/^(net\.[a-z0-9_.]+|kernel\.(shm|msg|sem)[a-z_]*|fs\.mqueue\.[a-z_]+)$/, 'a namespaced sysctl name'),
    )
    .default([]),
});

/**
 * `settings.pod` of the host config (all optional; see handlers/pod/README.md):
 *   prefix            pods are named `<prefix>-pod-<name>` (compose project, unit, directory)
 *   composeCommand    argv of the compose tool; [/usr/bin/docker, compose] (compose v2),
 *                     [/usr/bin/docker-compose] (1.x) or [/usr/bin/podman-compose]
 *   composeFlavour    how to ask for and read `ps`; derived from composeCommand when absent
 *   env               environment of every compose command and of the pod units (DOCKER_HOST…);
 *                     each name must also be in system.envAllow
 *   engineUnit        the container engine's unit, restarted by POST /pod/config
 *   dataMountpoint    the pod data mount location as /etc/fstab names it (normally equal to
 *                     paths.podData, which tests and the demo move under a private root)
 *   bindRoots         directories every pod may bind besides its own data directory (shared by
 *                     all pods: a pod that writes there reaches what others bind from there)
 *   mountRoots        where a podImageFs / podDataFs given as a mounted path must lie
 *   allow             what compose files may ask for beyond the admission policy (root-equivalent)
 *   engineCheck       run the compose tool's `config` and admit its resolved model too (off only
 *                     where no compose tool runs: the demo and the route tests replay commands)
 *   verifyCommand     argv the pod units run before compose (`ExecStartPre=<argv> -- <project>`):
 *                     the host's own check of the stored file at every start
 *   maxComposeBytes   a compose file's size once YAML aliases are expanded
 *   checkHostPorts    refuse published host ports the host already listens on
 *   logDefaultLines / logMaxLines / logMaxBytes   bounds of GET /pod/{name}/log
 *   composeTimeoutMs  time limit of compose up/down/kill and systemctl start/stop
 */
export const podSettings = z.strictObject({
  prefix: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_]{0,23}$/, 'prefix: lower-case letters, digits and _')
    .default('ballast'),
  composeCommand: z
    .array(
      z
        .string()
        .min(1)
        .regex(/^[^\0\n]+$/),
    )
    .min(1)
    .refine((a) => a[0].startsWith('/'), 'composeCommand[0] must be an absolute binary')
    .default(['/usr/bin/docker', 'compose']),
  composeFlavour: z.enum(COMPOSE_FLAVOURS).optional(),
  env: z.record(z.string().regex(ENV_NAME), z.string().regex(/^[^\0\n]*$/)).default({}),
  engineUnit: z
    .string()
    .regex(/^[A-Za-z0-9@_.-]+\.service$/)
    .default('docker.service'),
  dataMountpoint: absolutePath.default('/srv/pods'),
  bindRoots: z.array(absolutePath).default([]),
  mountRoots: z.array(absolutePath).min(1).default(['/srv', '/mnt', '/media', '/data']),
  allow: allow.default({
    privileged: false,
    hostNetwork: false,
    hostNamespaces: false,
    capabilities: [],
    devices: false,
    sysctls: [],
  }),
  engineCheck: z.boolean().default(true),
  verifyCommand: z
    .array(
      z
        .string()
        .min(1)
        .regex(/^[^\0\n]+$/),
    )
    .min(1)
    .refine((a) => a[0].startsWith('/'), 'verifyCommand[0] must be an absolute binary')
    .default(['/usr/bin/ballast', 'pod', 'verify']),
  maxComposeBytes: z
    .number()
    .int()
    .min(4096)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  checkHostPorts: z.boolean().default(true),
  logDefaultLines: z.number().int().min(1).max(100_000).default(200),
  logMaxLines: z.number().int().min(1).max(100_000).default(5000),
  logMaxBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  composeTimeoutMs: z.number().int().min(1000).max(3_600_000).default(300_000),
});
export type PodSettings = z.output<typeof podSettings>;

export function flavourOf(s: Pick<PodSettings, 'composeCommand' | 'composeFlavour'>): ComposeFlavour {
  if (s.composeFlavour) return s.composeFlavour;
  const base = s.composeCommand[0].slice(s.composeCommand[0].lastIndexOf('/') + 1);
  if (base === 'docker-compose') return 'docker-compose-v1';
  if (base === 'podman-compose') return 'podman-compose';
  return 'compose-v2';
}

/**
 * The compose file of a pod, in its directory under paths.podFiles (root's: no container may bind
 * it, so none can rewrite what its unit will run); its data directory is under paths.podData.
 */
export const COMPOSE_FILE_NAME = 'compose.json';

// ---- host op: pod/validate --------------------------------------------------------------

export const VALIDATE_OP = 'pod/validate';

export const validatePayload = z.strictObject({
  /** `<prefix>-pod-<name>`: the host derives the pod directory (relative bind sources) from it */
  project: z.string().regex(POD_WORD),
  /** an object, or YAML/JSON text */
  fileContents: z.unknown(),
  /** services to add (from recipes), keyed by service name; a name already present is a conflict */
  merge: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  /** update: ports the pod's current compose file publishes are not clashes with the host */
  ignoreOwnPorts: z.boolean().optional(),
  /** require `version` (set/update, per the spec) */
  requireVersion: z.boolean().optional(),
  /** refuse published ports the host listens on (set/update; never test, which a read token may call) */
  probeHostPorts: z.boolean().optional(),
});
export type ValidatePayload = z.infer<typeof validatePayload>;

export interface ValidateIssue {
  /** `fileContents.services.web.privileged` */
  path: string;
  message: string;
}
export type ValidateResult =
  | { ok: true; data: Record<string, unknown> }
  | { ok: false; status: 400 | 409; message: string; issues: ValidateIssue[] };

// ---- host op: pod/remove ----------------------------------------------------------------

export const REMOVE_OP = 'pod/remove';
export const removePayload = z.strictObject({ project: z.string().regex(POD_WORD) });
export interface RemoveResult {
  removed: boolean;
}

// ---- host op: pod/resolve ---------------------------------------------------------------

/** realpath of a path's longest existing prefix, the rest appended (where a mount would land). */
export const RESOLVE_OP = 'pod/resolve';
export const resolvePayload = z.strictObject({ path: absolutePath });
export interface ResolveResult {
  real: string;
}

// ---- host op: pod/apply -----------------------------------------------------------------

/**
 * A pod's create or update in one host crossing, under the intent journal: admit the file (as
 * pod/validate), write the compose file and the unit, reload systemd and (update of a running
 * pod) restart it. A failure puts both files back at once; a host killed part way puts them back
 * at its next start (the journal), so a pod is its old files or its new ones, never a mix.
 */
export const APPLY_OP = 'pod/apply';
export const applyPayload = validatePayload.omit({ ignoreOwnPorts: true, probeHostPorts: true }).extend({
  mode: z.enum(['create', 'update']),
  /** the unit as the route renders it (handlers/pod/render/unit.ts) */
  unitText: z.string().min(1).max(65_536),
  /** update: the unit was online, so it is restarted for the change to take effect */
  restart: z.boolean().optional(),
});
export type ApplyPayload = z.infer<typeof applyPayload>;
/** A command of the change failed (the route answers it as 502/504 with these details). */
export interface ApplyCommandFailure {
  ok: false;
  status: 502 | 504;
  command: string[];
  exitCode: number | null;
  stderr: string;
  durationMs: number;
  /** what the rollback did: both files put back and systemd reloaded, or not */
  rolledBack: boolean;
}
export type ApplyResult = ValidateResult | ApplyCommandFailure;
