import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../handlers/core/parse-error';
import { krb5Conf, type Krb5Conf, parseKrb5Conf } from '../../../handlers/kerberos/parse/krb5-conf';
import {
  krb5ConfInput,
  type Krb5ConfInput,
  krb5ConfProblems,
  Krb5RenderError,
  renderKrb5Conf,
} from '../../../handlers/kerberos/render/krb5-conf';
import { parseError } from '../../helpers/parse-error';

const dir = resolve(__dirname, '../../../fixtures/krb5-conf');
const confs = readdirSync(dir)
  .filter((f) => f.endsWith('.conf'))
  .sort();
const text = (name: string) => readFileSync(join(dir, name), 'utf8');

const lineOf = (src: string) => parseError(() => parseKrb5Conf(src)).line;

function renderProblems(input: unknown): string[] {
  try {
    renderKrb5Conf(input as Krb5ConfInput);
  } catch (e) {
    if (e instanceof Krb5RenderError) return e.problems.map((p) => `${p.path.join('.')}: ${p.message}`);
    throw e;
  }
  return [];
}

describe('krb5.conf fixtures', () => {
  it('include the required kinds of file', () => {
    expect(confs).toEqual(
      expect.arrayContaining([
        'debian12-krb5-config-default.conf',
        'ad-multi-realm.conf',
        'syntax-edge-cases.conf',
        'module-directive.conf',
      ]),
    );
  });

  for (const name of confs) {
    describe(name, () => {
      const parsed = parseKrb5Conf(text(name));
      it('parses to its expected JSON', () => {
        const expected: unknown = JSON.parse(text(name.replace(/\.conf$/, '.expected.json')));
        expect(parsed).toEqual(expected);
        expect(() => krb5Conf.parse(parsed)).not.toThrow();
      });
      it('round-trips through the renderer', () => {
        const rendered = renderKrb5Conf(parsed);
        expect(parseKrb5Conf(rendered)).toEqual(parsed);
        // Rendering is deterministic: a second trip gives the same text.
        expect(renderKrb5Conf(parseKrb5Conf(rendered))).toBe(rendered);
        expect(krb5ConfInput.safeParse(parsed).success).toBe(true);
      });
      it('is rejected with a line number when cut inside a subsection', () => {
        const lines = text(name).split('\n');
        for (let n = 0; n <= lines.length; n++) {
          const cut = lines.slice(0, n).join('\n');
          try {
            krb5Conf.parse(parseKrb5Conf(cut));
          } catch (e) {
            expect(e, `${name} cut after line ${n}`).toBeInstanceOf(ParseError);
            expect((e as ParseError).line, `${name} cut after line ${n}`).toBeGreaterThan(0);
          }
        }
      });
    });
  }

  it('reads the grammar details of syntax-edge-cases.conf as MIT does', () => {
    const c = parseKrb5Conf(text('syntax-edge-cases.conf'));
    const lib = c.sections.libdefaults;
    expect(lib.default_tgs_enctypes).toBe('aes256-cts-hmac-sha1-96 # not a comment');
    expect(lib.err_fmt).toBe('%M (code %C)\t["quoted" \\ backslash]\nsecond line');
    expect(lib.qualify_shortname).toBe('');
    expect(lib.kdc_timesync).toBe('1');
    expect(c.sections.realms['OTHER.TEST']).toEqual({
      kdc: ['kdc.other.test'],
      include: 'not-a-directive-because-indented',
    });
    expect(c.finals).toContainEqual(['realms', 'EXAMPLE.TEST']);
  });
});

describe('parseKrb5Conf errors name the line', () => {
  const cases: [string, string, number][] = [
    ['relation outside a section', 'kdc = a\n[realms]\n', 1],
    ['garbage before the first section', 'hello\n[libdefaults]\n', 1],
    ['indented first section header', '  [libdefaults]\n\tx = 1\n', 1],
    ['garbage line in a section', '[libdefaults]\n\tdefault_realm = A\nthis is not a relation\n', 3],
    ['unclosed subsection', '[realms]\n\tA = {\n\t\tkdc = a\n', 2],
    ['nested unclosed subsection', '[realms]\n\tA = {\n\t\tB = {\n\t\t}\n', 2],
    ['extra closing brace', '[realms]\n\tA = {\n\t}\n\t}\n', 4],
    ['section header inside a subsection', '[realms]\n\tA = {\n[domain_realm]\n', 3],
    ['blank line between tag = and {', '[realms]\n\tA =\n\n\t{\n\t}\n', 3],
    ['tag = at end of file', '[realms]\n\tA =\n', 2],
    ['section header without ]', '[realms\n', 1],
    ['text after section header', '[realms] x\n', 1],
    ['empty section name', '[]\n', 1],
    ['relation without tag', '[a]\n\t= b\n', 2],
    ['two words before =', '[a]\n\tb c = d\n', 2],
    ['star inside a tag', '[a]\n\tb*c = d\n', 2],
    ['unterminated quote', '[a]\n\tb = "abc\n', 2],
    ['text after closing quote', '[a]\n\tb = "abc" def\n', 2],
    ['backslash at end of quoted value', '[a]\n\tb = "abc\\\n', 2],
    ['text after }', '[a]\n\tb = {\n\t} x\n', 3],
    ['text after { line', '[a]\n\tb =\n\t{ x\n\t}\n', 3],
    ['NUL byte', '[a]\n\tb = c\0d\n', 2],
    ['control character', '[a]\n\tb = c\x1bd\n', 2],
    ['include without path', '[a]\ninclude\n', 2],
    ['module without colon', 'module /usr/lib/x.so\n[a]\n', 1],
    ['module after the first section', '[a]\nmodule /x.so:y\n', 2],
    ['line longer than MIT reads', `[a]\n\tb = ${'x'.repeat(2100)}\n`, 2],
  ];
  for (const [what, src, line] of cases) {
    it(what, () => {
      expect(lineOf(src)).toBe(line);
      expect(parseError(() => parseKrb5Conf(src)).parser).toBe('krb5.conf');
    });
  }

  it('never echoes the value of a line in the message', () => {
    const e = parseError(() => parseKrb5Conf('[a]\n\tpassword = "s3cr3t-value\n'));
    expect(e.message).not.toContain('s3cr3t');
  });

  it('keeps prototype-named tags as plain data', () => {
    const c = parseKrb5Conf('[a]\n\t__proto__ = x\n\tconstructor = y\n\tconstructor = z\n');
    expect(Object.getPrototypeOf(c.sections.a)).toBe(Object.prototype);
    expect(Object.keys(c.sections.a)).toEqual(['__proto__', 'constructor']);
    expect(c.sections.a.constructor).toEqual(['y', 'z']);
    expect(parseKrb5Conf(renderKrb5Conf(c))).toEqual(c);
  });
});

describe('renderKrb5Conf for client objects', () => {
  const realmFile = {
    realms: { 'EXAMPLE.TEST': { kdc: ['kdc1.example.test'], admin_server: 'kdc1.example.test' } },
    domain_realm: { '.example.test': 'EXAMPLE.TEST', 'example.test': 'EXAMPLE.TEST' },
  };

  it('accepts the short realm-file shape (sections at top level)', () => {
    const rendered = renderKrb5Conf(realmFile);
    expect(rendered).toBe(
      '[realms]\n\tEXAMPLE.TEST = {\n\t\tkdc = kdc1.example.test\n\t\tadmin_server = kdc1.example.test\n\t}\n\n' +
        '[domain_realm]\n\t.example.test = EXAMPLE.TEST\n\texample.test = EXAMPLE.TEST\n',
    );
    const back = parseKrb5Conf(rendered);
    expect(back.sections).toEqual(realmFile);
    expect(back).toEqual({ directives: [], sections: realmFile, finals: [] });
  });

  it('accepts the full shape, with directives in place and final markers', () => {
    const full: Krb5Conf = {
      directives: [
        { type: 'includedir', path: '/etc/krb5.conf.d/' },
        { type: 'include', path: '/etc/krb5.site.conf', section: 'realms' },
      ],
      sections: {
        libdefaults: { default_realm: 'EXAMPLE.TEST', qualify_shortname: '' },
        realms: {
          'EXAMPLE.TEST': { kdc: ['a', 'b'], admin_server: 'a', auth_to_local_names: { root: 'admin' } },
        },
        capaths: { 'EXAMPLE.TEST': { 'OTHER.TEST': ['MID.TEST', 'OTHER.TEST'] } },
      },
      finals: [['libdefaults'], ['libdefaults', 'default_realm'], ['realms', 'EXAMPLE.TEST']],
    };
    const rendered = renderKrb5Conf(full);
    expect(rendered.split('\n')[0]).toBe('includedir /etc/krb5.conf.d/');
    expect(rendered).toContain('[libdefaults]*\n\tdefault_realm* = EXAMPLE.TEST\n\tqualify_shortname = ""\n');
    expect(rendered).toContain('\t}*\ninclude /etc/krb5.site.conf\n');
    expect(parseKrb5Conf(rendered)).toEqual(full);
  });

  it('gives the canonical form for a non-canonical client object', () => {
    // kdc is a documented list: always an array; admin_server is not: one value is a string.
    const c = parseKrb5Conf(renderKrb5Conf({ realms: { R: { kdc: 'k', admin_server: ['a'] } } }));
    expect(c.sections.realms.R).toEqual({ kdc: ['k'], admin_server: 'a' });
    // finals are a set: any order in, sorted out.
    const f = parseKrb5Conf(renderKrb5Conf({ sections: { b: {}, a: {} }, finals: [['b'], ['a'], ['b']] }));
    expect(f.finals).toEqual([['a'], ['b']]);
  });

  it('quotes values so they cannot add relations, sections or subsections', () => {
    const hostile = [
      'x\n[realms]\nEVIL.TEST = {\n\tkdc = evil\n}',
      '"quoted',
      'a" b = "c',
      '{',
      '{ }',
      '}',
      ' leading',
      'trailing ',
      '',
      'back\\slash',
      'tab\tinside',
      '\ttab first',
      '# looks like a comment',
      '; also',
      '[section]',
      'bs\bx',
    ];
    for (const v of hostile) {
      const conf = { libdefaults: { default_realm: v } };
      const rendered = renderKrb5Conf(conf);
      const back = parseKrb5Conf(rendered);
      expect(back.sections, JSON.stringify(v)).toEqual(conf);
      expect(rendered.split('\n').filter(Boolean), JSON.stringify(v)).toHaveLength(2);
    }
  });

  it('refuses names and values that would change the structure', () => {
    const bad: [unknown, string][] = [
      [{ 'lib]defaults': {} }, "']' in section name"],
      [{ 'a\n[b': {} }, 'control character in section name'],
      [{ 'a b': {} }, 'whitespace in section name'],
      [{ '': {} }, 'empty section name'],
      [{ a: { 'b = c': 'd' } }, 'whitespace in tag'],
      [{ a: { 'b=c': 'd' } }, "'=' in tag"],
      [{ a: { 'b*': 'd' } }, "'*' in tag"],
      [{ a: { '#b': 'd' } }, "tag starts with '#'"],
      [{ a: { '[b': 'd' } }, "tag starts with '['"],
      [{ a: { '}': 'd' } }, "tag starts with '}'"],
      [{ a: { 'b\nc': 'd' } }, 'control character in tag'],
      [{ a: { b: 'c\rd' } }, 'control character other than tab, newline or backspace'],
      [{ a: { b: 'c\0d' } }, 'control character'],
      [{ a: { b: [] } }, 'empty list'],
      [{ a: { b: [['c']] } }, 'must be a string, an object, or a list of them'],
      [{ a: { b: 1 } }, 'must be a string, an object, or a list of them'],
      [{ a: 'x' }, 'must be an object'],
      [
        { sections: { a: {} }, directives: [{ type: 'include', path: '/x\n[evil]' }] },
        'control character in include path',
      ],
      [{ sections: { a: {} }, directives: [{ type: 'includedir', path: '' }] }, 'must be'],
      [
        { sections: { a: {} }, directives: [{ type: 'include', path: '/x', section: 'nope' }] },
        "section 'nope' does not exist",
      ],
      [
        { sections: { a: {} }, directives: [{ type: 'module', path: '/x.so', residual: 'r', section: 'a' }] },
        'before the first section',
      ],
      [
        { sections: { a: {} }, directives: [{ type: 'module', path: 'C:/x.so', residual: 'r' }] },
        "module path contains ':'",
      ],
      [{ sections: { a: {} }, directives: [{ type: 'exec', path: '/bin/sh' }] }, 'must be'],
      [{ sections: { a: { b: 'c' } }, finals: [['a', 'x']] }, 'names nothing'],
      [{ sections: { a: { b: 'c' } }, finals: [['a', 'b', 'c']] }, 'names nothing'],
      [{ a: { b: 'x'.repeat(3000) } }, 'longer than'],
    ];
    for (const [input, message] of bad) {
      const problems = renderProblems(input);
      expect(problems.join('; '), JSON.stringify(input).slice(0, 80)).toContain(message);
      expect(krb5ConfInput.safeParse(input).success, JSON.stringify(input).slice(0, 80)).toBe(false);
    }
  });

  it('reports problems as zod issues with paths', () => {
    const r = krb5ConfInput.safeParse({
      realms: { 'EXAMPLE.TEST': { 'bad tag': 'x', kdc: ['ok', 'bad\rvalue'] } },
    });
    expect(r.success).toBe(false);
    const paths = r.error?.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['realms.EXAMPLE.TEST.bad tag', 'realms.EXAMPLE.TEST.kdc.1']));
    expect(krb5ConfProblems({ realms: {} })).toEqual([]);
  });

  it('renders an empty object as an empty file', () => {
    expect(renderKrb5Conf({})).toBe('');
    expect(parseKrb5Conf('')).toEqual({ directives: [], sections: {}, finals: [] });
  });
});
