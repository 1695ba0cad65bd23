/**
 * One scenario across the whole service, run against any Target (the synthesised app run as Lambda runs it, or the
 * local server of `npm start`), recording every answer under a step name so that two runs can be compared:
 * create (small, and large enough to be stored in S3), single and batched spends with a double spend, setMined on the
 * longest chain, the signal consumer draining what was sent, the reorg and double-spend resolution routes, reads,
 * direct invocations, and cleanup passes that delete only what is fully spent and stable.
 *
 * The transactions are built once and sent to both targets, so their txids, fees and sizes are equal.
 */
import { makeTx, rootTx, spendItem, type Fixture } from '../../test/fixtures/txs';

export interface Answer {
  status: number;
  body: unknown;
}

export interface Target {
  name: string;
  http(role: string, method: string, url: string, body?: unknown): Promise<Answer>;
  /** a direct invocation (Lambda Invoke) of the function that serves `event.route`, by `role` */
  direct(fn: string, role: string, event: Record<string, unknown>): Promise<Answer>;
  /** the signal consumer handles what the functions sent (no-op where signals are inline) */
  drainSignals(): Promise<void>;
  /** the scheduled cleanup pass's report */
  scheduledCleanup(): Promise<Answer>;
}

export interface Step {
  name: string;
  answer: Answer;
  /** the status the step must answer (a step both runs answer alike but wrongly still fails) */
  expected?: number;
}

/** The transactions of the scenario. */
export function scenarioTxs() {
  const parent = rootTx([50_000, 40_000, 30_000]);
  // one output script of 1.1 MB (OP_PUSHDATA4 <1.1 MB> OP_DROP OP_TRUE): over MAX_TX_SIZE_IN_STORE (1 MiB), so the
  // tx is stored in S3 (external); spending both its outputs raises DAHSET for the signal consumer
  const pushLength = Buffer.alloc(4);
  pushLength.writeUInt32LE(1_100_000);
  const big = rootTx([
    { satoshis: 5000, script: `4e${pushLength.toString('hex')}${'00'.repeat(1_100_000)}7551` },
    7000,
  ]);
  const batchA = rootTx([20_000, 20_000]);
  const batchB = rootTx([10_000]);
  const spendOne = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [49_000] });
  const spendTwo = makeTx({ inputs: [{ parent, vout: 1 }], outputs: [39_000] });
  const spendThree = makeTx({
    inputs: [
      { parent, vout: 2 },
      { parent: batchB, vout: 0 },
    ],
    outputs: [39_000],
  });
  // the double spend: parent:0 again, created as conflicting
  const doubleSpend = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [48_000] });
  const bigSpend = makeTx({
    inputs: [
      { parent: big, vout: 0 },
      { parent: big, vout: 1 },
    ],
    outputs: [11_000],
  });
  // reorg: a mined parent, a first spender and its child, then a conflicting spender that wins the resolution
  const reorgParent = rootTx([100_000, 100_000]);
  const reorgFirst = makeTx({ inputs: [{ parent: reorgParent, vout: 0 }], outputs: [1000] });
  const reorgChild = makeTx({ inputs: [{ parent: reorgFirst, vout: 0 }], outputs: [100] });
  const reorgSecond = makeTx({
    inputs: [
      { parent: reorgParent, vout: 0 },
      { parent: reorgParent, vout: 1 },
    ],
    outputs: [1000],
  });
  const missing = rootTx();
  return {
    missing,
    parent,
    big,
    batchA,
    batchB,
    spendOne,
    spendTwo,
    spendThree,
    doubleSpend,
    bigSpend,
    reorgParent,
    reorgFirst,
    reorgChild,
    reorgSecond,
  };
}

export type ScenarioTxs = ReturnType<typeof scenarioTxs>;

const TIP = 1000;

export async function runScenario(t: Target, x: ScenarioTxs): Promise<Step[]> {
  const steps: Step[] = [];
  const step = async (name: string, answer: Promise<Answer>, expected?: number) => {
    steps.push({ name, answer: await answer, ...(expected !== undefined && { expected }) });
  };
  const get = (role: string, url: string) => t.http(role, 'GET', url);
  const post = (role: string, url: string, body: unknown) => t.http(role, 'POST', url, body);
  const mined = (txs: Fixture[], blockId: number, blockHeight: number) =>
    post('blockValidation', '/v1/mined', { txids: txs.map((f) => f.txid), blockId, blockHeight, subtreeIdx: 0 });

  await step('force the chain tip', t.http('admin', 'PUT', '/v1/chain/tip/force', { height: TIP }));
  await step('read the chain tip', get('validator', '/v1/chain/tip'));
  await step('health', get('validator', '/v1/health'));

  // create: small, large (S3), batched
  await step('create a small tx', post('validator', '/v1/txs', { tx: x.parent.hex }), 201);
  await step('create a large tx (S3)', post('validator', '/v1/txs', { tx: x.big.hex }));
  await step('create the same tx again', post('validator', '/v1/txs', { tx: x.parent.hex }));
  await step(
    'create a batch',
    post('validator', '/v1/batch/txs', { txs: [{ tx: x.batchA.hex }, { tx: x.batchB.hex }] }),
  );
  await step('mine the parents', mined([x.parent, x.big, x.batchA, x.batchB], 1, TIP + 1));

  // spends: single, batched, a double spend
  await step(
    'create the spenders',
    post('validator', '/v1/batch/txs', {
      txs: [x.spendOne, x.spendTwo, x.spendThree, x.bigSpend].map((f) => ({ tx: f.hex })),
    }),
  );
  await step('spend one tx', post('validator', '/v1/spends', { tx: x.spendOne.hex }), 200);
  await step(
    'spend a batch',
    post('validator', '/v1/batch/spends', { txs: [x.spendTwo.hex, x.spendThree.hex, x.bigSpend.hex] }),
  );
  await step('double spend (single)', post('validator', '/v1/spends', { tx: x.doubleSpend.hex }), 409);
  await step('double spend (batch)', post('validator', '/v1/batch/spends', { txs: [x.doubleSpend.hex] }));
  await step(
    'spend by explicit item, same spender again',
    post('validator', '/v1/spends', {
      spends: [spendItem(x.parent, 0, x.spendOne)],
    }),
  );
  await step(
    'mine the spenders on the longest chain',
    mined([x.spendOne, x.spendTwo, x.spendThree, x.bigSpend], 2, TIP + 2),
  );
  await t.drainSignals();

  // reads
  await step(
    'read the parent (all spent)',
    get('validator', `/v1/txs/${x.parent.txid}?fields=fee,blockIDs,blockHeights,utxos`),
  );
  await step('read the large tx from S3', get('validator', `/v1/txs/${x.big.txid}?fields=tx,fee,sizeInBytes`));
  await step('read a utxo (spent)', get('validator', `/v1/utxos/${x.parent.txid}/0`));
  await step('read a utxo (unspent)', get('validator', `/v1/utxos/${x.spendOne.txid}/0`));
  await step(
    'batch get',
    post('validator', '/v1/batch/get', {
      txids: [x.parent.txid, x.batchA.txid, x.missing.txid],
      fields: ['fee', 'blockIDs'],
    }),
  );
  await step(
    'batch outputs',
    post('validator', '/v1/batch/outputs', {
      outpoints: [
        { txid: x.big.txid, vout: 1 },
        { txid: x.parent.txid, vout: 2 },
      ],
    }),
  );
  await step(
    'batch utxos',
    post('validator', '/v1/batch/utxos', {
      utxos: [
        { txid: x.parent.txid, vout: 1 },
        { txid: x.batchA.txid, vout: 0 },
      ],
    }),
  );
  await step('unmined txs', get('blockValidation', '/v1/unmined/txs?limit=100'));

  // reorg and double-spend resolution
  await step(
    'create the reorg parent',
    post('validator', '/v1/txs', {
      tx: x.reorgParent.hex,
      minedBlocks: [{ blockId: 3, blockHeight: TIP + 2, subtreeIdx: 0 }],
    }),
  );
  await step('first spender', post('validator', '/v1/txs', { tx: x.reorgFirst.hex }));
  await step('first spender spends', post('validator', '/v1/spends', { tx: x.reorgFirst.hex }), 200);
  await step('its child', post('validator', '/v1/txs', { tx: x.reorgChild.hex }));
  await step('its child spends', post('validator', '/v1/spends', { tx: x.reorgChild.hex }), 200);
  await step('the conflicting spender', post('validator', '/v1/txs', { tx: x.reorgSecond.hex, conflicting: true }));
  await step('counter-conflicting', get('validator', `/v1/txs/${x.reorgSecond.txid}/counter-conflicting`));
  await step('conflicting children', get('validator', `/v1/txs/${x.reorgParent.txid}/conflicting-children`));
  await step(
    'off the longest chain',
    post('blockValidation', '/v1/longest-chain', { txids: [x.reorgParent.txid], onLongestChain: false }),
  );
  await step(
    'back on the longest chain',
    post('blockValidation', '/v1/longest-chain', { txids: [x.reorgParent.txid], onLongestChain: true }),
  );
  await step(
    'resolve the double spend',
    post('blockValidation', '/v1/conflicting/resolve', { txids: [x.reorgSecond.txid] }),
  );
  await t.drainSignals();
  await step('the loser is conflicting', get('validator', `/v1/txs/${x.reorgFirst.txid}?fields=conflicting`));
  await step(
    'the winner holds the outputs',
    post('validator', '/v1/batch/utxos', {
      utxos: [0, 1].map((vout) => ({ txid: x.reorgParent.txid, vout })),
    }),
  );

  // direct invocation: the same routes through the Lambda Invoke API
  await step(
    'direct: get a tx',
    t.direct('get', 'blockValidation', { route: 'GET /v1/txs/{txid}', pathParameters: { txid: x.parent.txid } }),
  );
  await step(
    'direct: batch utxos',
    t.direct('getUtxo', 'validator', {
      route: 'POST /v1/batch/utxos',
      body: { utxos: [{ txid: x.spendTwo.txid, vout: 0 }] },
    }),
  );
  await step('direct: chain tip', t.direct('status', 'validator', { route: 'GET /v1/chain/tip' }));

  await step(
    'direct: create a tx that exists',
    // create is invocable directly from blockValidation up (its create fields minedBlocks/locked/conflicting are)
    t.direct('create', 'blockValidation', { route: 'POST /v1/txs', body: { tx: x.parent.hex } }),
  );
  await step(
    'direct: unspend with no spends',
    t.direct('unspend', 'validator', { route: 'POST /v1/unspends', body: { spends: [] } }),
  );
  await step(
    'direct: setMined of a missing tx',
    t.direct('setMined', 'blockValidation', {
      route: 'POST /v1/mined',
      body: { txids: [x.missing.txid], blockId: 9, blockHeight: TIP + 2, subtreeIdx: 0 },
    }),
  );
  await step(
    'direct: spend again by the same spender',
    t.direct('spend', 'validator', { route: 'POST /v1/spends', body: { tx: x.spendOne.hex } }),
  );

  // cleanup: nothing is stable yet; then the tip passes the retention and the parent (fully spent) goes
  await step('scheduled cleanup before retention', t.scheduledCleanup());
  await step(
    'move the tip past retention and safety window',
    t.http('admin', 'PUT', '/v1/chain/tip/force', { height: TIP + 2 + 288 + 10 }),
  );
  await step('scheduled cleanup after retention', t.scheduledCleanup());
  await t.drainSignals();
  await step('cleanup on demand', post('admin', '/v1/cleanup', {}));
  await step('the fully spent parent is gone', get('validator', `/v1/txs/${x.parent.txid}`));
  await step(
    'its spenders stay (unspent outputs)',
    post('validator', '/v1/batch/get', { txids: [x.spendOne.txid, x.spendTwo.txid], fields: ['fee'] }),
  );
  await step('the large tx (S3, fully spent) is gone', get('validator', `/v1/txs/${x.big.txid}?fields=fee`));
  await step('its spender stays', get('validator', `/v1/txs/${x.bigSpend.txid}?fields=fee`));
  await step('delete a tx', t.http('admin', 'DELETE', `/v1/txs/${x.batchA.txid}`));
  await step('read the deleted tx', get('validator', `/v1/txs/${x.batchA.txid}`));
  return steps;
}

/**
 * Fields whose values differ between two correct runs, replaced before comparing: timings (`durationMs`, any
 * `...Ms`, `latencyMs`), and the health report's queue and blob store descriptions (the two targets are configured
 * with different adapters: SQS and the signal consumer for the functions, the inline queue for `npm start`).
 */
export const VARIABLE_FIELDS = ['durationMs', 'latencyMs', '*Ms', 'health: queue, blobStore, engine details'];

export function normalize(stepName: string, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => normalize(stepName, v));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (/Ms$/.test(k) && typeof v === 'number') out[k] = '<ms>';
    else if (stepName === 'health' && ['queue', 'blobStore', 'engine'].includes(k)) out[k] = '<adapter>';
    else out[k] = normalize(stepName, v);
  }
  return out;
}

export interface Difference {
  step: string;
  left: unknown;
  right: unknown;
}

export function compareRuns(left: Step[], right: Step[]): Difference[] {
  const diffs: Difference[] = [];
  const n = Math.max(left.length, right.length);
  for (let i = 0; i < n; i++) {
    const l = left[i];
    const r = right[i];
    const name = l?.name ?? r?.name ?? String(i);
    const a = l ? { status: l.answer.status, body: normalize(name, l.answer.body) } : undefined;
    const b = r ? { status: r.answer.status, body: normalize(name, r.answer.body) } : undefined;
    if (JSON.stringify(a) !== JSON.stringify(b)) diffs.push({ step: name, left: a, right: b });
  }
  return diffs;
}

/** The steps that did not answer the status they must (both runs are checked, so an answer wrong alike fails). */
export function unexpectedStatuses(steps: Step[]): string[] {
  return steps
    .filter((st) => st.expected !== undefined && st.answer.status !== st.expected)
    .map((st) => `${st.name}: answered ${st.answer.status}, must answer ${st.expected}`);
}
