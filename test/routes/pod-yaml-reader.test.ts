/**
 * The compose text reader (runtime/areas/pod/yaml-reader.ts) with a real worker thread: it
 * answers what readYaml answers, and its limits (deadline, heap, queue) hold, with the worker
 * replaced after a text that broke one.
 */
import * as yaml from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { readYaml, YAML_MAX_ALIASES, YAML_MAX_DEPTH } from '../../runtime/areas/pod/compose-yaml';
import { YamlReader } from '../../runtime/areas/pod/yaml-reader';

const read = (text: string) => readYaml(yaml, text, YAML_MAX_DEPTH, YAML_MAX_ALIASES);
const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('YamlReader (a worker thread)', () => {
  const readers: YamlReader[] = [];
  const reader = (o: ConstructorParameters<typeof YamlReader>[0] = {}) => {
    const r = new YamlReader(o);
    readers.push(r);
    return r;
  };
  afterAll(async () => {
    await Promise.all(readers.map((r) => r.close()));
  });

  it('answers what readYaml answers, text after text', async () => {
    const r = reader();
    expect(await r.read('services: {a: {image: x}}\n')).toEqual({ json: '{"services":{"a":{"image":"x"}}}' });
    expect(await r.read(nested(YAML_MAX_DEPTH + 1))).toEqual(read(nested(YAML_MAX_DEPTH + 1)));
    expect(await r.read('a: 1\na: 2\n')).toEqual(read('a: 1\na: 2\n'));
  });

  it('refuses a text not read by the deadline, and reads the next with a new worker', async () => {
    const r = reader({ deadlineMs: 300 });
    const t0 = performance.now();
    // 1 MiB of `[`: the first 64 are read in a moment, but yaml's parser takes seconds for the rest
    expect(await r.read(`${'['.repeat(1 << 20)}`)).toEqual({ message: 'not usable YAML: not read within 300 ms' });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(await r.read('a: 1\n')).toEqual({ json: '{"a":1}' });
  });

  it('refuses a text that fills the worker heap, and reads the next', async () => {
    const r = reader({ heapMb: 8, deadlineMs: 60_000 });
    const big = `a:\n${'  - {x: 1, y: 2}\n'.repeat(200_000)}`;
    expect(await r.read(big)).toEqual({ message: 'not usable YAML: reading it needs more than 8 MB' });
    expect(await r.read('b: 2\n')).toEqual({ json: '{"b":2}' });
  });

  it('reads one text at a time; past its queue, 503 busy', async () => {
    const r = reader({ queue: 1, deadlineMs: 400 });
    const slow = '['.repeat(1 << 20);
    const answers = await Promise.allSettled([r.read(slow), r.read('a: 1\n'), r.read('b: 1\n')]);
    expect(answers[0]).toEqual({ status: 'fulfilled', value: { message: 'not usable YAML: not read within 400 ms' } });
    expect(answers[1]).toEqual({ status: 'fulfilled', value: { json: '{"a":1}' } });
    expect(answers[2]).toMatchObject({ status: 'rejected', reason: { code: 'busy', status: 503 } });
  });
});
