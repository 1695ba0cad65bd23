/**
 * The client's page on the npm registry: its README's links are absolute (a relative one resolves against the
 * registry's page, not the repository), and package.json names the repository and the package's folder in it.
 */
import { readFileSync } from 'fs';
import * as path from 'path';

const DIR = path.resolve(__dirname, '../../packages/client');
const REPOSITORY = 'https://github.com/bsv-utxo-store/bsv-utxo-store';

/** The targets of a Markdown text's inline links and images that are not absolute URLs or anchors. */
export function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)[^)]*\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^(https?:|mailto:|#)/.test(target));
}

describe('the client package as the registry shows it', () => {
  test('its README links only to absolute URLs', () => {
    expect(relativeLinks(readFileSync(path.join(DIR, 'README.md'), 'utf8'))).toEqual([]);
  });

  test('a relative link is found (a fixture), one in code is not', () => {
    const text = 'See [api](../../docs/api.md), [x](https://x.org), [top](#top), ![i](img.png)\n`[c](d.md)`';
    expect(relativeLinks(text)).toEqual(['../../docs/api.md', 'img.png']);
  });

  test('package.json names the repository and the folder of the package in it', () => {
    const pkg = JSON.parse(readFileSync(path.join(DIR, 'package.json'), 'utf8')) as {
      repository?: { type: string; url: string; directory: string };
    };
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPOSITORY}.git`, directory: 'packages/client' });
  });
});
