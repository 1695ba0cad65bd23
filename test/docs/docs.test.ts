/**
 * docs/ against the code's own tables: the route table, the bin names, the error codes and their HTTP statuses, the
 * signals, the UDF functions and the settings loadConfig reads. Also: no file of the repository refers to anything
 * outside it, relative markdown links resolve (file and heading), and repository paths named in docs/ exist.
 * Each failure names the document to update.
 */
import { execFileSync } from 'child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import * as path from 'path';
import { BIN, INDEXED_BINS } from '../../lib/domain/bins';
import { DEFAULTS, loadConfig } from '../../lib/domain/config';
import { STORE_ERROR_CODES, UDF_ERROR_CODES } from '../../lib/domain/errors';
import { UDF_FUNCTIONS } from '../../lib/domain/udf';
import { TOMBSTONE_BIN } from '../../lib/engine/port';
import { HTTP_ERROR_CODES, statusForCode } from '../../lib/http/errors';
import { ROUTES } from '../../lib/http/routes';
import { SIGNALS } from '../../lib/signals/port';

const ROOT = path.resolve(__dirname, '..', '..');

function read(relative: string): string {
  return readFileSync(path.join(ROOT, relative), 'utf8');
}

/** The text of a markdown section: from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`heading "${heading}" not found`);
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  const end = lines.findIndex((l, i) => {
    if (i <= start) return false;
    const m = /^(#+) /.exec(l);
    return m !== null && m[1].length <= level;
  });
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** Rows of the markdown tables in `text`, as trimmed cells (header and separator rows included). */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.trimStart().startsWith('|'))
    .map((l) =>
      l
        .trim()
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

/** Every `UPPER_CASE` code in backticks. */
function codesIn(text: string): string[] {
  return [...text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);
}

/** The files of the repository: tracked plus new files that are not ignored (a walk when git is unavailable). */
function repositoryFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out
      .split('\0')
      .filter((f) => f !== '')
      .filter((f) => existsSync(path.join(ROOT, f)));
  } catch {
    const skip = new Set(['node_modules', '.git', 'cdk.out', 'data', 'coverage']);
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(path.join(ROOT, dir))) {
        if (skip.has(name)) continue;
        const rel = dir === '' ? name : `${dir}/${name}`;
        if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
        else files.push(rel);
      }
    };
    walk('');
    return files;
  }
}

const FILES = repositoryFiles();
const MARKDOWN = FILES.filter((f) => f.endsWith('.md'));

describe('docs/api.md matches the route table (ROUTE_TABLE in lib/http/route-table.ts)', () => {
  const api = read('docs/api.md');
  const documented = [...api.matchAll(/^### (GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) (\/\S*)$/gm)].map(
    (m) => `${m[1]} ${m[2]}`,
  );
  const routes = ROUTES.map((r) => `${r.method} ${r.path}`);

  test('every route has its own "### METHOD /path" section in docs/api.md', () => {
    const missing = routes.filter((r) => !documented.includes(r));
    expect({ 'update docs/api.md: routes without a section': missing }).toEqual({
      'update docs/api.md: routes without a section': [],
    });
  });

  test('docs/api.md documents no route that ROUTES lacks, and none twice', () => {
    const extra = documented.filter((r) => !routes.includes(r));
    const twice = documented.filter((r, i) => documented.indexOf(r) !== i);
    expect({ 'update docs/api.md: sections of routes not in ROUTES': extra, 'documented twice': twice }).toEqual({
      'update docs/api.md: sections of routes not in ROUTES': [],
      'documented twice': [],
    });
  });

  test("each route's section names the function that serves it", () => {
    const wrong = ROUTES.filter((r) => {
      const heading = `### ${r.method} ${r.path}`;
      return documented.includes(`${r.method} ${r.path}`) && !section(api, heading).includes(`function \`${r.fn}\``);
    }).map((r) => `${r.method} ${r.path} is served by function \`${r.fn}\``);
    expect({ 'update docs/api.md': wrong }).toEqual({ 'update docs/api.md': [] });
  });
});

describe('docs/api.md lists every error code under its HTTP status', () => {
  const errorRows = tableRows(section(read('docs/api.md'), '## Errors')).filter((row) => /^\d{3}$/.test(row[0]));
  const statusOf = (code: string): string[] =>
    errorRows.filter((row) => codesIn(row.slice(1).join(' ')).includes(code)).map((row) => row[0]);

  test('every store error code (STORE_ERROR_CODES) in the row of the status statusForCode gives it', () => {
    const wrong = STORE_ERROR_CODES.map((code) => ({ code, want: String(statusForCode(code)), got: statusOf(code) }))
      .filter(({ want, got }) => got.length !== 1 || got[0] !== want)
      .map(({ code, want, got }) => `${code}: status ${want}, documented under [${got.join(', ')}]`);
    expect({ 'update the Errors table of docs/api.md': wrong }).toEqual({
      'update the Errors table of docs/api.md': [],
    });
  });

  test('every code of the HTTP layer (HttpErrorCode, and each HttpError raised) under its status', () => {
    const httpCodes: string[] = [...HTTP_ERROR_CODES];
    expect(httpCodes.length).toBeGreaterThan(0);
    const missing = httpCodes.filter((code) => statusOf(code).length === 0);

    const raised = new Map<string, Set<string>>();
    for (const file of FILES.filter((f) => /^(lib|functions|scripts)\/.*\.ts$/.test(f))) {
      for (const m of read(file).matchAll(/new HttpError\(\s*(\d{3}),\s*'([A-Z_]+)'/g)) {
        raised.set(m[2], (raised.get(m[2]) ?? new Set()).add(m[1]));
      }
    }
    expect(raised.size).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const [code, statuses] of raised) {
      for (const status of statuses) {
        if (!statusOf(code).includes(status)) wrong.push(`${code} is answered with ${status}`);
      }
    }
    expect({ 'update the Errors table of docs/api.md': [...missing, ...wrong] }).toEqual({
      'update the Errors table of docs/api.md': [],
    });
  });

  test('the Errors table of docs/api.md names no code the code does not have', () => {
    const httpCodes = [...read('lib/http/errors.ts').matchAll(/'([A-Z][A-Z_]+)'/g)].map((m) => m[1]);
    const known = new Set<string>([...STORE_ERROR_CODES, ...httpCodes]);
    const unknown = codesIn(errorRows.map((row) => row.slice(1).join(' ')).join(' ')).filter((c) => !known.has(c));
    expect({ 'update the Errors table of docs/api.md': unknown }).toEqual({
      'update the Errors table of docs/api.md': [],
    });
  });
});

describe('docs/udf.md and docs/signals.md match lib/domain/udf.ts, errors.ts and lib/signals/port.ts', () => {
  const udf = read('docs/udf.md');

  test('every UDF function (UDF_FUNCTIONS) is described with its arguments in docs/udf.md', () => {
    const missing = UDF_FUNCTIONS.filter((fn) => !udf.includes(`\`${fn}(rec`));
    expect({ 'update docs/udf.md: functions without a description': missing }).toEqual({
      'update docs/udf.md: functions without a description': [],
    });
  });

  test('every UDF error code (UDF_ERROR_CODES) has a row in the Error codes table of docs/udf.md, and no other', () => {
    const rows = tableRows(section(udf, '## Error codes'))
      .map((row) => /^`([A-Z_]+)`$/.exec(row[0])?.[1])
      .filter((c): c is string => c !== undefined);
    const missing = UDF_ERROR_CODES.filter((c) => !rows.includes(c));
    const extra = rows.filter((c) => !(UDF_ERROR_CODES as readonly string[]).includes(c));
    expect({ 'update docs/udf.md: missing': missing, extra }).toEqual({ 'update docs/udf.md: missing': [], extra: [] });
  });

  test('every signal (SIGNALS) has a row in docs/signals.md, and no other', () => {
    const rows = tableRows(section(read('docs/signals.md'), '## Signals'))
      .map((row) => /^`([A-Z_]+)`$/.exec(row[0])?.[1])
      .filter((c): c is string => c !== undefined);
    const missing = SIGNALS.filter((s) => !rows.includes(s));
    const extra = rows.filter((s) => !(SIGNALS as readonly string[]).includes(s));
    expect({ 'update docs/signals.md: missing': missing, extra }).toEqual({
      'update docs/signals.md: missing': [],
      extra: [],
    });
  });
});

describe('docs/records.md matches the bin names (lib/domain/bins.ts)', () => {
  const records = read('docs/records.md');
  const binNames = Object.values(BIN) as string[];

  test('every bin of BIN, the tombstone bin and every indexed bin is named in docs/records.md', () => {
    const missing = [...binNames, TOMBSTONE_BIN].filter((b) => !records.includes(`\`${b}\``));
    const indexed = section(records, '### Indexed bins');
    const notIndexed = INDEXED_BINS.filter((b) => !indexed.includes(`\`${b}\``));
    expect({ 'update docs/records.md: bins not named': missing, 'not under Indexed bins': notIndexed }).toEqual({
      'update docs/records.md: bins not named': [],
      'not under Indexed bins': [],
    });
  });

  test('the bin tables of docs/records.md name only bins of BIN', () => {
    const tables = ['### Master and pagination records', '### Master only', '### Create lock record'];
    const documented = tables.flatMap((heading) =>
      tableRows(section(records, heading)).flatMap((row) => [...row[0].matchAll(/`([^`]+)`/g)].map((m) => m[1])),
    );
    expect(documented.length).toBeGreaterThanOrEqual(binNames.length);
    const unknown = documented.filter((b) => !binNames.includes(b));
    expect({ 'update docs/records.md: bins not in lib/domain/bins.ts': unknown }).toEqual({
      'update docs/records.md: bins not in lib/domain/bins.ts': [],
    });
  });
});

describe('docs/settings.md matches the settings loadConfig reads (lib/domain/config.ts)', () => {
  const settings = read('docs/settings.md');
  const [configured] = settings.split('## Read elsewhere');
  const rows = tableRows(configured).filter((row) => /^`[A-Z0-9_]+`$/.test(row[0]));
  const rowOf = (name: string): string[] | undefined => rows.find((row) => row[0] === `\`${name}\``);

  /** The variables loadConfig reads, observed by running it over an environment that records every read. */
  function variablesRead(): string[] {
    const names = new Set<string>();
    const env = new Proxy({} as NodeJS.ProcessEnv, {
      get(_target, key) {
        if (typeof key === 'string') names.add(key);
        return undefined;
      },
    });
    loadConfig(env);
    return [...names];
  }

  test('every variable loadConfig reads has a row in docs/settings.md, with its DEFAULTS value', () => {
    const read = variablesRead();
    expect(read).toContain('UTXO_STORE');
    const missing = read.filter((name) => rowOf(name) === undefined);
    const wrongDefault = Object.entries(DEFAULTS)
      .filter(([name]) => read.includes(name))
      .filter(([name, value]) => rowOf(name) !== undefined && rowOf(name)?.[1] !== `\`${String(value)}\``)
      .map(([name, value]) => `${name}: default ${String(value)}, documented ${rowOf(name)?.[1]}`);
    expect({ 'update docs/settings.md: variables without a row': missing, 'wrong default': wrongDefault }).toEqual({
      'update docs/settings.md: variables without a row': [],
      'wrong default': [],
    });
  });

  test('docs/settings.md documents no loadConfig variable that loadConfig does not read', () => {
    const read = variablesRead();
    const extra = rows.map((row) => row[0].replace(/`/g, '')).filter((name) => !read.includes(name));
    expect({ 'update docs/settings.md (or move the row under "Read elsewhere")': extra }).toEqual({
      'update docs/settings.md (or move the row under "Read elsewhere")': [],
    });
  });
});

describe("docs/usage.md's route table matches the code", () => {
  const usage = read('docs/usage.md');

  test('the Routes table of docs/usage.md lists every route of ROUTES, and no other (GET /openapi.json: local server)', () => {
    const table = section(usage, '## Routes (API v1)');
    const listed = [...table.matchAll(/`(GET|POST|PUT|DELETE|PATCH) (\/[^`\s]*)`/g)].map((m) => `${m[1]} ${m[2]}`);
    const routes = ROUTES.map((r) => `${r.method} ${r.path}`);
    const missing = routes.filter((r) => !listed.includes(r));
    const extra = listed.filter((r) => !routes.includes(r) && r !== 'GET /openapi.json');
    expect({ 'update the Routes table of docs/usage.md: missing': missing, extra }).toEqual({
      'update the Routes table of docs/usage.md: missing': [],
      extra: [],
    });
  });
});

describe('the repository is self-contained', () => {
  // built from parts, so that this file does not match itself
  const outside = [
    new RegExp(['\\.\\.', 'shared'].join('/')),
    new RegExp(['', 'work', 'shared'].join('/')),
    new RegExp(['DESIGN', '\\.md'].join('')),
    new RegExp(['\\bDESIGN', 'sections?', '\\d'].join(' ')),
    new RegExp(['\\bseeds?', '\\d{3}'].join('[ /]')),
  ];

  test('no file refers to the design notes or seed files outside the repository', () => {
    expect(FILES.length).toBeGreaterThan(50);
    const hits: string[] = [];
    for (const file of FILES) {
      const bytes = readFileSync(path.join(ROOT, file));
      if (bytes.includes(0)) continue; // binary
      bytes
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          if (outside.some((re) => re.test(line))) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 100)}`);
        });
    }
    expect({ 'point these at docs/ instead': hits }).toEqual({ 'point these at docs/ instead': [] });
  });

  /** GitHub's heading anchors: lower case, punctuation other than - and _ removed, spaces to hyphens. */
  function anchorsOf(markdown: string): Set<string> {
    const anchors = new Set<string>();
    for (const m of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
      anchors.add(
        m[1]
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\- _]/gu, '')
          .replace(/ /g, '-'),
      );
    }
    return anchors;
  }

  test('relative markdown links resolve to a file (and heading) inside the repository', () => {
    expect(MARKDOWN).toEqual(expect.arrayContaining(['README.md', 'docs/README.md']));
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      const text = read(file);
      for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [pathPart, anchor] = target.split('#');
        const resolved = pathPart === '' ? path.join(ROOT, file) : path.resolve(ROOT, path.dirname(file), pathPart);
        if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) {
          broken.push(`${file}: ${target} leaves the repository`);
        } else if (!existsSync(resolved)) {
          broken.push(`${file}: ${target} does not exist`);
        } else if (anchor !== undefined && statSync(resolved).isFile()) {
          if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor))
            broken.push(`${file}: ${target}: no such heading`);
        }
      }
    }
    expect({ 'fix these links': broken }).toEqual({ 'fix these links': [] });
  });

  test('repository paths named in docs/ exist', () => {
    const roots = ['lib', 'lua', 'functions', 'server', 'cdk', 'scripts', 'test', 'bench', 'docs'];
    const missing: string[] = [];
    for (const file of MARKDOWN.filter((f) => f.startsWith('docs/'))) {
      for (const m of read(file).matchAll(/`([a-z][\w./-]*)`/g)) {
        const named = m[1];
        if (!roots.some((r) => named.startsWith(`${r}/`))) continue;
        if (!existsSync(path.join(ROOT, named))) missing.push(`${file}: ${named}`);
      }
    }
    expect({ 'update docs/: paths that do not exist': missing }).toEqual({
      'update docs/: paths that do not exist': [],
    });
  });
});

describe('the docs read as a reference, not a lab notebook', () => {
  /** Lines of a file as `wc -l` counts them. */
  const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

  /** The headings of a markdown text, fenced code blocks left out (a `# comment` in a shell block is no heading). */
  function headingsOf(markdown: string): string[] {
    const headings: string[] = [];
    let fenced = false;
    for (const line of markdown.split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      else if (!fenced && /^#{1,6} /.test(line)) headings.push(line);
    }
    return headings;
  }

  test('README.md is at most 250 lines and docs/performance-scale.md at most 300', () => {
    const limits: Record<string, number> = { 'README.md': 250, 'docs/performance-scale.md': 300 };
    const over = Object.entries(limits)
      .map(([file, limit]) => ({ file, limit, lines: lineCount(read(file)) }))
      .filter(({ lines, limit }) => lines > limit)
      .map(({ file, limit, lines }) => `${file}: ${lines} lines, at most ${limit}`);
    expect({ 'shorten these (current figures once; git keeps the runs)': over }).toEqual({
      'shorten these (current figures once; git keeps the runs)': [],
    });
  });

  test('no heading of a markdown file is a timestamp (a run diary)', () => {
    expect(headingsOf('# a\n```sh\n# 2026-11-27 03:16 in a block\n```\n## b')).toEqual(['# a', '## b']);
    const stamped = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}|^#+ \d{1,2}:\d{2}\b/;
    const hits = MARKDOWN.flatMap((file) =>
      headingsOf(read(file))
        .filter((h) => stamped.test(h))
        .map((h) => `${file}: ${h}`),
    );
    expect({ 'name these sections by what they measure, not when': hits }).toEqual({
      'name these sections by what they measure, not when': [],
    });
  });
});
