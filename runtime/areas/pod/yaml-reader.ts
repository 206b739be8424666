/**
 * Reads compose YAML in a worker thread (the code it runs: compose-yaml.ts), one text at a time,
 * so hostile text costs a worker's time and heap, never the host's event loop or its stack.
 * A text not read within the deadline, or that fills the worker's heap, is refused (400 on
 * `fileContents`) and the worker is replaced; a few texts wait, past them the caller gets 503
 * busy. The worker stops after a while without work (its memory goes back).
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { Worker } from 'node:worker_threads';
import { Semaphore } from '../../system/semaphore';
import { readYaml, YAML_MAX_ALIASES, YAML_MAX_DEPTH, type YamlRead, type YamlTask } from './compose-yaml';

/** The worker (stands alone: it runs as text): loads yaml from `yamlPath`, answers each task with `read`. */
function yamlWorkerMain(yamlPath: string, read: typeof readYaml): void {
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  const { createRequire: requireFrom } = process.getBuiltinModule('node:module');
  const yaml = requireFrom(yamlPath)(yamlPath) as typeof Yaml;
  parentPort!.on('message', (t: YamlTask) => {
    parentPort!.postMessage({ id: t.id, started: true }); // the deadline counts from here, not the start-up
    let r: YamlRead;
    try {
      r = read(yaml, t.text, t.maxDepth, t.maxAliases);
    } catch (e) {
      r = { message: `not usable YAML: ${String((e as Error).message).split('\n')[0]}` };
    }
    parentPort!.postMessage({ id: t.id, r });
  });
}

export interface YamlReaderOptions {
  /** a text not read by then, from when the worker takes it, is refused (default 5 s: a compose file takes milliseconds) */
  deadlineMs?: number;
  /** the worker's old-generation heap (default 256 MB, above what a legitimate compose file needs by far) */
  heapMb?: number;
  /** texts that may wait for the worker (default 8), then 503 busy */
  queue?: number;
  /** the worker stops after this long without a text (default 30 s) */
  idleMs?: number;
}

export class YamlReader {
  private worker: Worker | null = null;
  private nextId = 0;
  private idle: NodeJS.Timeout | null = null;
  private readonly gate: Semaphore;
  private readonly deadlineMs: number;
  private readonly heapMb: number;
  private readonly idleMs: number;

  constructor(o: YamlReaderOptions = {}) {
    this.deadlineMs = o.deadlineMs ?? 5000;
    this.heapMb = o.heapMb ?? 256;
    this.idleMs = o.idleMs ?? 30_000;
    this.gate = new Semaphore(1, o.queue ?? 8);
  }

  read(text: string): Promise<YamlRead> {
    return this.gate.run(() => this.once(text));
  }

  /** Stops the worker (a text being read is refused). */
  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }

  private once(text: string): Promise<YamlRead> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise<YamlRead>((resolve, reject) => {
      let failure: Error | undefined;
      const done = (r: YamlRead | Error, stop: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
        if (stop && this.worker === worker) {
          this.worker = null;
          void worker.terminate();
        }
        if (this.worker) {
          this.idle = setTimeout(() => void this.close(), this.idleMs);
          this.idle.unref();
        }
        if (r instanceof Error) reject(r);
        else resolve(r);
      };
      let timer: NodeJS.Timeout | undefined;
      const onMessage = (m: { id: number; started?: true; r?: YamlRead }) => {
        if (m.id !== id) return;
        if (m.r) done(m.r, false);
        else if (m.started) {
          clearTimeout(timer);
          timer = setTimeout(
            () => done({ message: `not usable YAML: not read within ${this.deadlineMs} ms` }, true),
            this.deadlineMs,
          );
        }
      };
      const onError = (e: Error) => (failure = e);
      const onExit = () => {
        if (this.worker === worker) this.worker = null;
        // a full heap is the text's doing (400); anything else is the host's (500)
        if ((failure as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY')
          done({ message: `not usable YAML: reading it needs more than ${this.heapMb} MB` }, false);
        else done(new Error(`the YAML reader stopped: ${failure?.message ?? 'it exited'}`), false);
      };
      // a worker that does not start reading at all is the host's fault, not the text's
      timer = setTimeout(() => done(new Error('the YAML reader did not start within 60 s'), true), 60_000);
      worker.on('message', onMessage);
      worker.once('exit', onExit);
      worker.on('error', onError);
      const task: YamlTask = { id, text, maxDepth: YAML_MAX_DEPTH, maxAliases: YAML_MAX_ALIASES };
      worker.postMessage(task);
    });
  }

  private spawn(): Worker {
    const yamlPath = createRequire(import.meta.url).resolve('yaml');
    const source = `(${yamlWorkerMain.toString()})(${JSON.stringify(yamlPath)}, ${readYaml.toString()});`;
    const worker = new Worker(source, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: 16 },
    });
    worker.unref(); // a reader never keeps the host (or `ballast pod verify`) alive
    worker.on('error', () => undefined); // the text being read is answered at its exit (onExit)
    this.worker = worker;
    return worker;
  }
}
