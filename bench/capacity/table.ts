/** The capacity table (docs/performance.md): the model's deployments at each rate, as markdown. Pure. */
import { PHASES, plan, withIndexOnFlash, type CapacityInputs, type Deployment } from './model';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const fixed = (n: number, d = 2) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const money = (n: number) => (n >= 100 ? `$${int(n)}` : `$${fixed(n)}`);
const bytes = (n: number) =>
  n >= 1e12 ? `${fixed(n / 1e12, 1)} TB` : n >= 1e9 ? `${fixed(n / 1e9, 1)} GB` : `${fixed(n / 1e6, 1)} MB`;

function cluster(d: Deployment): string {
  const by = Object.entries(d.nodesBy)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const head = `${d.nodes} x ${d.instance.name} (${d.binds} binds; ${by})`;
  return d.fits ? head : `does not fit: ${head}`;
}

const use = (l: Deployment['limits'][number]) =>
  `${l.name}: ${int(l.need)} of ${int(l.limit)} (${fixed(l.use * 100, 0)} %)`;

/** Every limit the deployment exceeds, most exceeded first; or the most used one when none is. */
export function limitsNote(d: Deployment): string {
  const over = d.limits.filter((l) => l.use > 1);
  return over.length ? `over: ${over.map(use).join('; ')}` : `fits; most used: ${use(d.limits[0])}`;
}

/** One row per figure, one column per rate; Community Edition's plan and Enterprise's side by side. */
export function capacityTable(i: CapacityInputs, rates: readonly number[]): string {
  const ce = rates.map((r) => plan(i, r, 'community'));
  const ee = rates.map((r) => plan(i, r, 'enterprise'));
  const flash = rates.map((r) => plan(withIndexOnFlash(i), r, 'enterprise'));
  const row = (name: string, f: (d: Deployment, k: number) => string) =>
    `| ${name} | ${ee.map((d, k) => f(d, k)).join(' | ')} |`;
  const lines = [
    `| block txs a second | ${rates.map(int).join(' | ')} |`,
    `|---|${rates.map(() => '---').join('|')}|`,
    `| Community Edition (8 nodes, 640 GB of device a node) | ${ce.map((d) => cluster(d)).join(' | ')} |`,
    `| CE: limits | ${ce.map(limitsNote).join(' | ')} |`,
    row('Enterprise Edition (no node or data limit)', (d) => cluster(d)),
    `| EE with the primary index on flash | ${flash.map((d) => `${d.nodes} x ${d.instance.name} (${d.binds} binds), ${money(d.cost.total)}/h`).join(' | ')} |`,
    row("nodes' CPU work (vCPUs busy, all phases)", (d) => fixed(d.asdVcpus, 1)),
    row('records alive (retention)', (d) => int(d.recordsAlive)),
    row('device, every copy / unique data', (d) => `${bytes(d.deviceBytes)} / ${bytes(d.uniqueBytes)}`),
    row('primary + secondary index RAM, every copy', (d) => bytes(d.indexRamBytes)),
    row('network per node / baseline', (d) => `${fixed(d.perNodeGbps)} / ${fixed(d.instance.baselineGbps)} Gbps`),
    row('partition copies per node (4096 x RF / nodes)', (d) => int((i.partitions * i.rf) / d.nodes)),
    row(
      `Lambda concurrency (${PHASES.join(' / ')})`,
      (d) => `${int(d.totalConcurrency)} (${PHASES.map((p) => fixed(d.concurrency[p], 1)).join(' / ')})`,
    ),
    row('API Gateway requests a second', (d) => int(d.apiRps)),
    row('connections per node (budget: 80 % of proto-fd-max)', (d) => int(d.connectionsPerNode)),
    row('EC2 / Lambda / API Gateway / cross-AZ, per hour', (d) =>
      [d.cost.ec2, d.cost.lambdaDuration + d.cost.lambdaRequests, d.cost.apiGateway, d.cost.crossAz]
        .map(money)
        .join(' / '),
    ),
    row('cost per hour (Enterprise licence not included)', (d) => money(d.cost.total)),
    row('cost per million txs', (d) => `$${fixed(d.cost.perMillionTxs, 3)}`),
    row('EE: limits', limitsNote),
  ];
  return lines.join('\n');
}
