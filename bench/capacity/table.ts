/** The capacity table (docs/performance.md): the model's deployments at each rate, as markdown. Pure. */
import { PHASES, plan, withIndexOnFlash, type CapacityInputs, type Deployment, type Limit } from './model';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const fixed = (n: number, d = 2) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const money = (n: number) => (n >= 100 ? `$${int(n)}` : `$${fixed(n)}`);
const bytes = (n: number) =>
  n >= 1e12 ? `${fixed(n / 1e12, 1)} TB` : n >= 1e9 ? `${fixed(n / 1e9, 1)} GB` : `${fixed(n / 1e6, 1)} MB`;
const count = (n: number) => (n >= 1e9 ? `${fixed(n / 1e9, 1)} G` : n >= 1e6 ? `${fixed(n / 1e6, 1)} M` : int(n));

/** "33 x i4i.large (memory binds)", "does not fit: ..." when a limit of the cluster's shape is exceeded. */
function cluster(d: Deployment): string {
  const head = `${int(d.nodes)} x ${d.instance.name} (${d.binds} binds)`;
  return d.limits.some((l) => l.shape && l.use > 1) ? `does not fit: ${head}` : head;
}

const use = (l: Limit) => `${l.name} ${int(l.need)} of ${int(l.limit)}`;

/** Every limit the deployment exceeds, most exceeded first; or the most used one when none is. */
export function limitsNote(d: Deployment): string {
  const over = d.limits.filter((l) => l.use > 1);
  return over.length
    ? over.map(use).join('; ')
    : `none (most used: ${d.limits[0].name}, ${fixed(d.limits[0].use * 100, 0)} %)`;
}

/** One row per figure, one column per rate: Community Edition's cluster, then Enterprise's and what it needs. */
export function capacityTable(i: CapacityInputs, rates: readonly number[]): string {
  const ce = rates.map((r) => plan(i, r, 'community'));
  const ee = rates.map((r) => plan(i, r, 'enterprise'));
  const flash = rates.map((r) => plan(withIndexOnFlash(i), r, 'enterprise'));
  const row = (name: string, cells: string[]) => `| ${name} | ${cells.join(' | ')} |`;
  const each = (name: string, f: (d: Deployment) => string) => row(name, ee.map(f));
  return [
    row('block txs a second', rates.map(int)),
    `|---|${rates.map(() => '---').join('|')}|`,
    row('Community Edition (8 nodes, 640 GB of device a node)', ce.map(cluster)),
    each('Enterprise, primary index in RAM', cluster),
    each('its nodes by CPU / RAM / device / network', (d) =>
      [d.nodesBy.cpu, d.nodesBy.memory, d.nodesBy.device, d.nodesBy.network].join(' / '),
    ),
    row(
      'Enterprise, primary index on flash',
      flash.map((d) => `${cluster(d)}, ${money(d.cost.total)} an hour`),
    ),
    each("nodes' CPU work (vCPUs busy)", (d) => fixed(d.asdVcpus, 1)),
    each('records alive; device, every copy; index RAM', (d) =>
      [count(d.recordsAlive), bytes(d.deviceBytes), bytes(d.indexRamBytes)].join('; '),
    ),
    each('network per node / baseline (Gbps)', (d) => `${fixed(d.perNodeGbps)} / ${fixed(d.instance.baselineGbps)}`),
    each('partition copies per node', (d) => int((i.partitions * i.rf) / d.nodes)),
    each(
      `Lambda concurrency (${PHASES.join(' / ')})`,
      (d) => `${int(d.totalConcurrency)} (${PHASES.map((p) => int(d.concurrency[p])).join(' / ')})`,
    ),
    each('API Gateway requests a second', (d) => int(d.apiRps)),
    each('connections per node', (d) => int(d.connectionsPerNode)),
    each('per hour: EC2 / Lambda / API Gateway / cross-AZ', (d) =>
      [d.cost.ec2, d.cost.lambdaDuration + d.cost.lambdaRequests, d.cost.apiGateway, d.cost.crossAz]
        .map(money)
        .join(' / '),
    ),
    each('per hour; per million txs', (d) => `${money(d.cost.total)}; $${fixed(d.cost.perMillionTxs, 3)}`),
    each('limits exceeded (the index-in-RAM cluster)', limitsNote),
  ].join('\n');
}
