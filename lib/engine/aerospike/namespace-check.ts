/**
 * What the store needs of its namespace, checked when the engine opens (start-up): a namespace the settings cannot
 * work with is refused with a ConfigError naming the setting, rather than failing request by request later.
 *
 * - Records with a TTL (tombstones, create and cleanup locks) need the namespace supervisor: with `nsup-period 0`
 *   and `allow-ttl-without-nsup false` (the server's defaults) every such write is refused with status 22
 *   (FORBIDDEN), so no cleanup pass can take its range locks and no delete can write its tombstone.
 * - AEROSPIKE_STRONG_CONSISTENCY=true asks for linearizable reads, which a namespace not in strong-consistency mode
 *   refuses on every read.
 */
import { infoAllRetrying } from './info-all';
import type { Client } from 'aerospike';
import { ConfigError } from '../../domain/config';
import { withDeadline } from '../deadline';

export const NAMESPACE_CHECK_DEADLINE_MS = 10_000;

/** The `key=value;...` answer of the info command `namespace/<ns>`. */
export function parseNamespaceInfo(info: string): Map<string, string> {
  const body = info.includes('\t') ? info.slice(info.indexOf('\t') + 1) : info;
  return new Map(
    body
      .trim()
      .split(';')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** Why the namespace's configuration (one node's answer) cannot serve the store, or undefined. */
export function namespaceConfigProblem(
  namespace: string,
  facts: Map<string, string>,
  wanted: { strongConsistency: boolean },
): ConfigError | undefined {
  if (facts.size === 0 || !facts.has('nsup-period')) {
    return new ConfigError('UTXO_STORE', `the cluster has no namespace "${namespace}"`);
  }
  if (facts.get('nsup-period') === '0' && facts.get('allow-ttl-without-nsup') !== 'true') {
    return new ConfigError(
      'UTXO_STORE',
      `namespace "${namespace}" has nsup-period 0 and allow-ttl-without-nsup false: it refuses every record with a ` +
        'TTL (tombstones, create and cleanup locks), so nothing could be deleted; set nsup-period (the deployment ' +
        'sets it, CDK nsupPeriod) or allow-ttl-without-nsup true',
    );
  }
  if (wanted.strongConsistency && facts.get('strong-consistency') !== 'true') {
    return new ConfigError(
      'AEROSPIKE_STRONG_CONSISTENCY',
      `true, but namespace "${namespace}" is not in strong-consistency mode: it would refuse every linearizable read`,
    );
  }
  return undefined;
}

/** Asks every node for the namespace's configuration; throws the first problem (a ConfigError). */
export async function checkNamespace(
  client: Client,
  namespace: string,
  wanted: { strongConsistency: boolean },
  deadlineMs = NAMESPACE_CHECK_DEADLINE_MS,
): Promise<void> {
  const answers = await withDeadline(
    infoAllRetrying(client, `namespace/${namespace}`, deadlineMs),
    deadlineMs,
    `aerospike read the configuration of namespace ${namespace}`,
  );
  for (const answer of answers) {
    const problem = namespaceConfigProblem(namespace, parseNamespaceInfo(answer.info ?? ''), wanted);
    if (problem) throw problem;
  }
}
