/**
 * CloudFormation intrinsic functions resolved against local stand-ins: Ref, Fn::GetAtt, Fn::Join, Fn::Sub,
 * Fn::Select, Fn::Split, Fn::ImportValue (the exports of the assembly's other stacks) and the pseudo parameters. What
 * a Ref or GetAtt becomes is the stand-in's business (`Resolver.resource`): a reference to a resource that has no
 * stand-in is an error naming the resource, never a made-up value.
 */
import type { CfnTemplate, StackArtifact } from './assembly';

export class UnresolvedReferenceError extends Error {
  readonly code = 'E2E_UNRESOLVED_REFERENCE';
  constructor(
    readonly where: string,
    problem: string,
  ) {
    super(`${where}: ${problem}`);
    this.name = 'UnresolvedReferenceError';
  }
}

export interface PseudoParameters {
  'AWS::AccountId': string;
  'AWS::Region': string;
  'AWS::Partition': string;
  'AWS::URLSuffix': string;
  'AWS::StackName'?: string;
}

/** What a resource of a stack is locally: `attribute` undefined for Ref. */
export type ResourceValue = (stack: StackArtifact, logicalId: string, attribute: string | undefined) => string;

export interface Resolver {
  stacks: StackArtifact[];
  pseudo: PseudoParameters;
  resource: ResourceValue;
  /** values of template parameters (a parameter without one here and without a default is an error) */
  parameters?: Record<string, string>;
}

function exportsOf(r: Resolver): Map<string, { stack: StackArtifact; value: unknown }> {
  const out = new Map<string, { stack: StackArtifact; value: unknown }>();
  for (const stack of r.stacks)
    for (const o of Object.values(stack.template.Outputs ?? {})) {
      if (o.Export === undefined) continue;
      const name = resolveValue(r, stack, o.Export.Name, 'Export.Name');
      out.set(name, { stack, value: o.Value });
    }
  return out;
}

function ref(r: Resolver, stack: StackArtifact, name: string, where: string): string {
  if (name.startsWith('AWS::')) {
    if (name === 'AWS::StackName') return stack.name;
    const v = (r.pseudo as unknown as Record<string, string | undefined>)[name];
    if (v === undefined) throw new UnresolvedReferenceError(where, `pseudo parameter ${name} has no local value`);
    return v;
  }
  const template: CfnTemplate = stack.template;
  if (template.Parameters?.[name]) {
    const v = r.parameters?.[name] ?? template.Parameters[name].Default;
    if (v === undefined) throw new UnresolvedReferenceError(where, `parameter ${name} has no value`);
    return String(v);
  }
  if (!template.Resources[name]) throw new UnresolvedReferenceError(where, `${stack.name} has no resource ${name}`);
  return r.resource(stack, name, undefined);
}

/** Resolves one value of `stack`'s template to a string. */
export function resolveValue(r: Resolver, stack: StackArtifact, value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UnresolvedReferenceError(where, `expected a string or an intrinsic, got ${JSON.stringify(value)}`);
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new UnresolvedReferenceError(where, `not an intrinsic: ${JSON.stringify(value)}`);
  const [fn] = keys;
  const arg = (value as Record<string, unknown>)[fn];
  switch (fn) {
    case 'Ref':
      return ref(r, stack, String(arg), where);
    case 'Fn::GetAtt': {
      const [id, attribute] = typeof arg === 'string' ? arg.split('.', 2) : (arg as [string, string]);
      if (!stack.template.Resources[id])
        throw new UnresolvedReferenceError(where, `${stack.name} has no resource ${id}`);
      return r.resource(stack, id, attribute);
    }
    case 'Fn::Join': {
      const [sep, parts] = arg as [string, unknown[]];
      return parts.map((p, i) => resolveValue(r, stack, p, `${where}[${i}]`)).join(sep);
    }
    case 'Fn::Select': {
      const [index, list] = arg as [unknown, unknown];
      const items = resolveList(r, stack, list, where);
      const i = Number(resolveValue(r, stack, index, where));
      if (!(i >= 0 && i < items.length))
        throw new UnresolvedReferenceError(where, `Fn::Select index ${i} out of range`);
      return items[i];
    }
    case 'Fn::Sub': {
      const [text, vars] = typeof arg === 'string' ? [arg, {}] : (arg as [string, Record<string, unknown>]);
      return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
        if (Object.hasOwn(vars, name)) return resolveValue(r, stack, vars[name], `${where}.${name}`);
        const dot = name.indexOf('.');
        if (dot > 0 && !name.startsWith('AWS::'))
          return resolveValue(r, stack, { 'Fn::GetAtt': [name.slice(0, dot), name.slice(dot + 1)] }, where);
        return ref(r, stack, name, where);
      });
    }
    case 'Fn::ImportValue': {
      const name = resolveValue(r, stack, arg, where);
      const exported = exportsOf(r).get(name);
      if (!exported) throw new UnresolvedReferenceError(where, `no stack of the assembly exports ${name}`);
      return resolveValue(r, exported.stack, exported.value, `${where} (export ${name})`);
    }
    default:
      throw new UnresolvedReferenceError(where, `${fn} is not resolved locally`);
  }
}

function resolveList(r: Resolver, stack: StackArtifact, list: unknown, where: string): string[] {
  if (Array.isArray(list)) return list.map((x, i) => resolveValue(r, stack, x, `${where}[${i}]`));
  const split = (list as Record<string, unknown> | null)?.['Fn::Split'] as [string, unknown] | undefined;
  if (split) return resolveValue(r, stack, split[1], where).split(split[0]);
  throw new UnresolvedReferenceError(where, `expected a list, got ${JSON.stringify(list)}`);
}
