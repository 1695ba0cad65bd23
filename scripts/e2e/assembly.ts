/**
 * A synthesised cloud assembly (cdk.out) read the way CloudFormation and the CDK's asset publishing see it: the
 * stacks' templates, and for each asset object key the directory cdk-assets zips and uploads. Nothing here knows
 * this app's construct ids: functions, layers and everything else are found by resource type in the templates.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
  Parameters?: Record<string, { Type: string; Default?: unknown }>;
}

export interface StackArtifact {
  name: string;
  template: CfnTemplate;
}

export interface Assembly {
  dir: string;
  stacks: StackArtifact[];
  /** S3 object key (`<hash>.zip`) -> the asset's directory in the assembly */
  assetDirs: Map<string, string>;
}

export class AssemblyError extends Error {
  readonly code = 'E2E_ASSEMBLY';
  constructor(message: string) {
    super(message);
    this.name = 'AssemblyError';
  }
}

interface Manifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string; file?: string } }>;
}

interface AssetManifest {
  files?: Record<
    string,
    { source: { path: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }
  >;
}

export function readAssembly(dir: string): Assembly {
  const manifestPath = path.join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw new AssemblyError(`${dir} is not a cloud assembly (no manifest.json)`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const stacks: StackArtifact[] = [];
  const assetDirs = new Map<string, string>();
  for (const [name, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.type === 'aws:cloudformation:stack' && artifact.properties?.templateFile) {
      const template = JSON.parse(
        readFileSync(path.join(dir, artifact.properties.templateFile), 'utf8'),
      ) as CfnTemplate;
      stacks.push({ name, template });
    }
    if (artifact.type === 'cdk:asset-manifest' && artifact.properties?.file) {
      const assets = JSON.parse(readFileSync(path.join(dir, artifact.properties.file), 'utf8')) as AssetManifest;
      for (const file of Object.values(assets.files ?? {})) {
        if (file.source.packaging !== 'zip') continue;
        for (const d of Object.values(file.destinations)) assetDirs.set(d.objectKey, path.join(dir, file.source.path));
      }
    }
  }
  if (stacks.length === 0) throw new AssemblyError(`${dir} has no CloudFormation stack`);
  return { dir, stacks, assetDirs };
}

/** The resources of `type` across the stacks, with the stack each is in. */
export function resourcesOfType(
  assembly: Pick<Assembly, 'stacks'>,
  type: string,
): { stack: StackArtifact; id: string; resource: CfnResource }[] {
  return assembly.stacks.flatMap((stack) =>
    Object.entries(stack.template.Resources)
      .filter(([, r]) => r.Type === type)
      .map(([id, resource]) => ({ stack, id, resource })),
  );
}

/** The directory of the asset a `Code`/`Content` property ({S3Bucket, S3Key}) uploads. */
export function assetDirOf(assembly: Assembly, code: unknown, what: string): string {
  const key = (code as { S3Key?: unknown } | undefined)?.S3Key;
  if (typeof key !== 'string')
    throw new AssemblyError(`${what}: its code is not an S3 asset (${JSON.stringify(code)})`);
  const dir = assembly.assetDirs.get(key);
  if (!dir) throw new AssemblyError(`${what}: no asset of the assembly is uploaded as ${key}`);
  return dir;
}

/**
 * Functions CloudFormation itself invokes while deploying (the ServiceToken of a custom resource, e.g. the provider
 * that sets the cluster stack's policy): not part of the running service, and not run locally.
 */
export function isDeployTimeFunction(stack: StackArtifact, logicalId: string): boolean {
  return Object.values(stack.template.Resources).some((r) => {
    if (!r.Type.startsWith('Custom::') && r.Type !== 'AWS::CloudFormation::CustomResource') return false;
    return JSON.stringify(r.Properties?.ServiceToken ?? null).includes(`"${logicalId}"`);
  });
}
