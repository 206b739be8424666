/**
 * Reads compose YAML in a worker thread (the code it runs: compose-yaml.ts), one text at a time,
 * so hostile text costs a worker's time and heap, never the host's event loop or its stack.
 * A text not read within the deadline, or that fills the worker's heap, is refused (400 on
 * `fileContents`) and the worker is replaced; a few texts wait, past them the caller gets 503
 * busy. The worker stops after a while without work (its memory goes back).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { Semaphore } from '../../system/semaphore';
import {
  readYaml,
  YAML_MAX_ALIASES,
  YAML_MAX_DEPTH,
  yamlWorkerMain,
  type YamlRead,
  type YamlTask,
} from './compose-yaml';

export interface YamlReaderOptions {
  /** a text not read by then is refused (default 5 s: a compose file takes milliseconds) */
  deadlineMs?: number;
  /** the worker's old-generation heap (default 256 MB: a 1 MiB file of tiny tokens needs ~150) */
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
      const onMessage = (m: { id: number; r: YamlRead }) => {
        if (m.id === id) done(m.r, false);
      };
      const onError = (e: Error) => (failure = e);
      const onExit = () => {
        if (this.worker === worker) this.worker = null;
        // a full heap is the text's doing (400); anything else is the host's (500)
        if ((failure as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY')
          done({ message: `not usable YAML: reading it needs more than ${this.heapMb} MB` }, false);
        else done(new Error(`the YAML reader stopped: ${failure?.message ?? 'it exited'}`), false);
      };
      const timer = setTimeout(
        () => done({ message: `not usable YAML: not read within ${this.deadlineMs} ms` }, true),
        this.deadlineMs,
      );
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
