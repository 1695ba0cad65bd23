/**
 * The CDK app: `npx cdk synth|deploy -c stage=prod -c key=value ...` (README.md, section Deploy, lists every key).
 * Synthesises offline: env-agnostic unless account/region are given, no context lookups, esbuild bundling locally.
 *
 * Three stacks, each depending only on the ones before it:
 *   BsvUtxoStore-<stage>-Cluster      network, Aerospike nodes, backups, cluster alarms (termination protection)
 *   BsvUtxoStore-<stage>-ClusterPolicy sets the cluster stack's stack policy (cdk/stack-policy.ts)
 *   BsvUtxoStore-<stage>              storage, functions, API, triggers, dashboard
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { aerospikeMetricsNamespace, ClusterStack } from './cluster-stack';
import { loadConfig, type UtxoStoreConfig } from './config';
import { applyNagSuppressions } from './nag';
import { StackPolicyStack } from './stack-policy';
import { stackName, UtxoStoreStack } from './stack';

export interface UtxoStoreApp {
  cluster: ClusterStack;
  policy: StackPolicyStack;
  service: UtxoStoreStack;
}

export function buildApp(app: App, config: UtxoStoreConfig = loadConfig(app.node)): UtxoStoreApp {
  const env = config.account || config.region ? { account: config.account, region: config.region } : undefined;
  const name = stackName(config);
  const cluster = new ClusterStack(app, `${name}-Cluster`, {
    config,
    env,
    description: `bsv-utxo-store (${config.stage}): network and Aerospike cluster (the UTXO set), backups`,
  });
  const policy = new StackPolicyStack(app, `${name}-ClusterPolicy`, {
    env,
    target: cluster,
    logRetentionDays: config.logRetentionDays,
    description: `bsv-utxo-store (${config.stage}): the stack policy of ${cluster.stackName}`,
  });
  const service = new UtxoStoreStack(app, name, {
    config,
    env,
    description: `bsv-utxo-store (${config.stage}): serverless API, functions and storage`,
    vpc: cluster.network.vpc,
    functionSubnets: cluster.network.functionSubnets,
    functionsSecurityGroup: cluster.network.functionsSecurityGroup,
    utxoStoreUrl: cluster.connectionString(),
    clusterName: cluster.clusterName,
    aerospikeMetricsNamespace: aerospikeMetricsNamespace(config),
    alarmTopic: cluster.topic,
  });
  service.addStackDependency(cluster);
  applyNagSuppressions({ config, cluster, policy, service });
  return { cluster, policy, service };
}

/**
 * Context when the app runs without the CDK CLI (`npx tsx cdk/app.ts -c stage=prod`): cdk.json's context, then
 * `-c key=value` arguments. Under the CLI (CDK_OUTDIR set) the CLI supplies the context itself.
 */
export function standaloneContext(argv: string[], cdkJsonPath: string): Record<string, unknown> {
  const context: Record<string, unknown> = existsSync(cdkJsonPath)
    ? { ...((JSON.parse(readFileSync(cdkJsonPath, 'utf8')) as { context?: object }).context ?? {}) }
    : {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = arg === '-c' || arg === '--context' ? argv[++i] : /^--context=/.test(arg) ? arg.slice(10) : null;
    if (value === null || value === undefined) continue;
    const eq = value.indexOf('=');
    if (eq <= 0) throw new Error(`expected -c key=value, got "${value}"`);
    context[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return context;
}

if (require.main === module) {
  const underCli = process.env.CDK_OUTDIR !== undefined;
  const root = path.resolve(__dirname, '..');
  const app = underCli
    ? new App()
    : new App({
        outdir: path.join(root, 'cdk.out'),
        context: standaloneContext(process.argv.slice(2), path.join(root, 'cdk.json')),
      });
  buildApp(app);
  // cdk-nag AwsSolutions (v3: a policy validation plugin) on every synth: an unacknowledged finding stops the synth.
  // `-c nag=false` skips it.
  const nag = app.node.tryGetContext('nag');
  if (nag !== 'false' && nag !== false) Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  app.synth();
}
