/**
 * The local stand-in of every AWS resource a function's environment or an event can name: a bucket or a queue is one
 * of the local fauxqs (e2e/aws-emulator.ts, which creates them with these names), a function is the local
 * function of the same logical id, the Aerospike nodes' DNS names (the cluster stack's A records of its instances)
 * are the local Aerospike hosts. A resource type without a stand-in is an error, so a new reference in the template
 * fails the run instead of reaching a made-up value.
 */
import type { Assembly, StackArtifact } from './assembly';
import { resourcesOfType } from './assembly';
import { resolveValue, UnresolvedReferenceError, type PseudoParameters, type Resolver } from './intrinsics';

export interface StandInOptions {
  /** a queue URL's scheme, host and port (e2e/aws-emulator.ts queueUrlHost): <sqsUrlHost>/<account>/<name> */
  sqsUrlHost: string;
  /** host:port[,host:port] of the local Aerospike */
  aerospikeHosts: string;
  pseudo?: Partial<PseudoParameters>;
  /** template parameters (e.g. package checksums of the cluster stack) */
  parameters?: Record<string, string>;
}

export const LOCAL_PSEUDO: PseudoParameters = {
  'AWS::AccountId': '000000000000',
  'AWS::Region': 'us-east-1',
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
};

/** A name within `max` characters of [A-Za-z0-9-_] from the stack and logical id (deterministic). */
function localName(stack: StackArtifact, id: string, max: number): string {
  const name = `${stack.name}-${id}`.replace(/[^A-Za-z0-9_-]/g, '-');
  return name.length <= max ? name : name.slice(name.length - max);
}

export function bucketName(stack: StackArtifact, id: string): string {
  return localName(stack, id, 63)
    .toLowerCase()
    .replace(/_/g, '-')
    .replace(/^[^a-z0-9]+/, '');
}

export function functionName(stack: StackArtifact, id: string): string {
  return localName(stack, id, 64);
}

export function queueName(stack: StackArtifact, id: string): string {
  return localName(stack, id, 80);
}

export interface StandIns {
  resolver: Resolver;
  /** the environment value with the cluster's node names replaced by the local Aerospike hosts */
  substituteHosts(value: string): string;
}

export function standIns(assembly: Pick<Assembly, 'stacks'>, o: StandInOptions): StandIns {
  const pseudo = { ...LOCAL_PSEUDO, ...o.pseudo };
  const account = pseudo['AWS::AccountId'];
  const region = pseudo['AWS::Region'];
  const arn = (service: string, rest: string, withRegion = true) =>
    `arn:${pseudo['AWS::Partition']}:${service}:${withRegion ? region : ''}:${service === 's3' ? '' : account}:${rest}`;

  const resource = (stack: StackArtifact, id: string, attribute: string | undefined): string => {
    const type = stack.template.Resources[id].Type;
    const where = `${stack.name}/${id} (${type})${attribute ? `.${attribute}` : ''}`;
    const unsupported = (): never => {
      throw new UnresolvedReferenceError(where, 'has no local stand-in');
    };
    switch (type) {
      case 'AWS::S3::Bucket': {
        const name = bucketName(stack, id);
        if (attribute === undefined) return name;
        if (attribute === 'Arn') return `arn:${pseudo['AWS::Partition']}:s3:::${name}`;
        return unsupported();
      }
      case 'AWS::SQS::Queue': {
        const name = queueName(stack, id);
        if (attribute === undefined || attribute === 'QueueUrl') return `${o.sqsUrlHost}/${account}/${name}`;
        if (attribute === 'Arn') return arn('sqs', name);
        if (attribute === 'QueueName') return name;
        return unsupported();
      }
      case 'AWS::Lambda::Function': {
        const name = functionName(stack, id);
        if (attribute === undefined) return name;
        if (attribute === 'Arn') return arn('lambda', `function:${name}`);
        return unsupported();
      }
      case 'AWS::IAM::Role': {
        const name = localName(stack, id, 64);
        if (attribute === undefined) return name;
        if (attribute === 'Arn') return `arn:${pseudo['AWS::Partition']}:iam::${account}:role/${name}`;
        return unsupported();
      }
      case 'AWS::ApiGateway::RestApi':
        if (attribute === undefined) return 'e2eapi';
        if (attribute === 'RootResourceId') return 'root';
        return unsupported();
      case 'AWS::ApiGateway::Resource':
      case 'AWS::ApiGateway::Model':
      case 'AWS::ApiGateway::RequestValidator':
        if (attribute === undefined) return id;
        return unsupported();
      case 'AWS::Lambda::LayerVersion':
        if (attribute === undefined) return arn('lambda', `layer:${localName(stack, id, 64)}:1`);
        return unsupported();
      default:
        return unsupported();
    }
  };
  const resolver: Resolver = { stacks: assembly.stacks, pseudo, resource, parameters: o.parameters };

  // the Aerospike nodes' DNS names: A records whose target is an EC2 instance's private IP
  const nodeNames = new Set<string>();
  for (const { stack, resource: r } of resourcesOfType(assembly, 'AWS::Route53::RecordSet')) {
    const targets = (r.Properties?.ResourceRecords ?? []) as unknown[];
    const toInstance = targets.some((t) => {
      const att = (t as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      return att !== undefined && stack.template.Resources[att[0]]?.Type === 'AWS::EC2::Instance';
    });
    if (r.Properties?.Type === 'A' && toInstance)
      nodeNames.add(resolveValue(resolver, stack, r.Properties.Name, 'RecordSet.Name').replace(/\.$/, ''));
  }

  const substituteHosts = (value: string): string => {
    const m = /^aerospike:\/\/([^/?]+)(\/.*)$/.exec(value);
    if (!m) return value;
    const hosts = m[1].split(',').map((h) => h.replace(/:\d+$/, ''));
    const foreign = hosts.filter((h) => !nodeNames.has(h));
    if (foreign.length > 0)
      throw new UnresolvedReferenceError(
        'UTXO_STORE',
        `${foreign.join(', ')} is not an Aerospike node of the assembly (${[...nodeNames].join(', ') || 'none'})`,
      );
    return `aerospike://${o.aerospikeHosts}${m[2]}`;
  };
  return { resolver, substituteHosts };
}
