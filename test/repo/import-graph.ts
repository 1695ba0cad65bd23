/**
 * The repository's import graph, read with the TypeScript compiler's parser (no other tool): every relative import
 * of a .ts file (import and export ... from, import type, import x = require, require(), import() and
 * typeof import()), type-only ones included, since a type import ties two files' vocabularies as much as a value
 * one. Package imports (zod, aws-cdk-lib, ...) are not edges. import-graph.test.ts checks the rules on it.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/** file (repository-relative, '/' separated) -> the repository files it imports */
export type ImportGraph = Map<string, Set<string>>;

/** The module specifiers a source text imports, in order of appearance. */
export function specifiersOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const literal = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require'))
        literal(node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The repository file a relative specifier names (x, x.ts, x/index.ts; a .js specifier names its .ts), if any. */
export function resolveImport(from: string, specifier: string, exists: (file: string) => boolean): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.join(path.posix.dirname(from), specifier);
  const stem = base.replace(/\.js$/, '');
  return [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.d.ts`, `${base}/index.ts`].find(
    (f) => /\.tsx?$/.test(f) && exists(f),
  );
}

/** The graph of the given files (texts by repository-relative name). */
export function buildGraph(files: Map<string, string>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [file, text] of files) {
    const edges = new Set<string>();
    for (const spec of specifiersOf(file, text)) {
      const target = resolveImport(file, spec, (f) => files.has(f));
      if (target) edges.add(target);
    }
    graph.set(file, edges);
  }
  return graph;
}

/** Every .ts file below the given top-level folders of `root` (node_modules, dist and cdk.out skipped). */
export function readTree(root: string, folders: string[]): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'dist', 'cdk.out'].includes(entry.name)) walk(rel);
      } else if (/\.tsx?$/.test(entry.name)) files.set(rel, fs.readFileSync(path.join(root, rel), 'utf8'));
    }
  };
  for (const folder of folders) if (fs.existsSync(path.join(root, folder))) walk(folder);
  return files;
}

/** The import circles among the files `inScope` accepts: each strongly connected set of 2+ files, or a self import. */
export function cycles(graph: ImportGraph, inScope: (file: string) => boolean = () => true): string[][] {
  // Tarjan's algorithm, iterative over the files in name order (stable output)
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const nodes = [...graph.keys()].filter(inScope).sort();
  const edges = (n: string) => [...(graph.get(n) ?? [])].filter(inScope).sort();
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; out: string[]; i: number }[] = [];
    const enter = (node: string) => {
      index.set(node, next);
      low.set(node, next++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, out: edges(node), i: 0 });
    };
    enter(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      if (top.i < top.out.length) {
        const to = top.out[top.i++];
        if (!index.has(to)) enter(to);
        else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          component.push(n);
        } while (n !== top.node);
        if (component.length > 1 || graph.get(top.node)?.has(top.node)) found.push(component.sort());
      }
    }
  }
  return found;
}

/** A rule: files under `from` may not import files under any of `to` (folder prefixes, or exact files). */
export interface ForbiddenImport {
  from: string;
  to: string[];
  why: string;
}

const under = (file: string, prefix: string) => file === prefix || file.startsWith(prefix.replace(/\/?$/, '/'));

/** Each import that breaks a rule, as `a.ts -> b.ts (why)`. */
export function forbiddenImports(graph: ImportGraph, rules: ForbiddenImport[]): string[] {
  const out: string[] = [];
  for (const [file, edges] of graph)
    for (const rule of rules)
      if (under(file, rule.from))
        for (const target of edges)
          if (rule.to.some((t) => under(target, t))) out.push(`${file} -> ${target} (${rule.why})`);
  return out.sort();
}

/** Imports from files under `from` into files under `into` that are not one of `allowed` (exact files). */
export function importsOutside(graph: ImportGraph, from: string, into: string, allowed: string[]): string[] {
  const out: string[] = [];
  for (const [file, edges] of graph)
    if (under(file, from))
      for (const target of edges)
        if (under(target, into) && !allowed.includes(target)) out.push(`${file} -> ${target}`);
  return out.sort();
}

/** Every file reachable from the files under `from` (their imports, and theirs, ...). */
export function reachable(graph: ImportGraph, from: string): Set<string> {
  const seen = new Set<string>();
  const todo = [...graph.keys()].filter((f) => under(f, from));
  while (todo.length > 0) {
    const f = todo.pop()!;
    for (const t of graph.get(f) ?? [])
      if (!seen.has(t)) {
        seen.add(t);
        todo.push(t);
      }
  }
  return seen;
}
