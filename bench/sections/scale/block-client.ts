/**
 * The scale block's client side, in a process of its own (forked by block.ts): the typed client builds the block's
 * txs and sends them to the local server, so that the bench process's CPU in a phase is the server's alone (what the
 * functions' processes would spend), and this process's CPU is the client's.
 *
 * Messages from block.ts: `setup` (the server's URL; the block's txs are built on the first one and sent again to every
 * round's fresh server), `phase` (runs one phase; answers `done` with its wall time, this process's CPU and, for
 * cleanup, the parents deleted), `exit`. Any failure answers `error`.
 */
import { makeTx, rootTx, type Fixture } from '../../../test/fixtures/txs';
import { chunks, inFlight, IN_FLIGHT, must, R } from './common';

export type BlockPhase = 'parents' | 'create' | 'spend' | 'setMined' | 'cleanup';
export type ToBlockClient =
  { type: 'setup'; url: string; block: number } | { type: 'phase'; phase: BlockPhase } | { type: 'exit' };
export type FromBlockClient =
  | { type: 'ready'; txs: number; inputs: number }
  | { type: 'done'; phase: BlockPhase; ms: number; cpuUs: number; deleted: number }
  | { type: 'error'; message: string };

/** What the client sends of a tx: its hex and txid (not the SDK's objects: see buildBlock). */
interface BlockTx {
  hex: string;
  txid: string;
  inputs: number;
}

interface Block {
  parents: BlockTx[];
  txs: BlockTx[];
  large: BlockTx[];
}

/**
 * The previous block's parents (4 outputs each, mined) and the block: 1-3 inputs, 2 outputs; 3 large external txs.
 * Only each tx's hex and txid are kept: the SDK's Transaction objects of 150k txs (and 105k outputs of the large ones)
 * kept alive made every full collection of this process mark them, CPU taken from the two cores the server and
 * Aerospike share (a node service sends txs it holds as bytes).
 */
function buildBlock(size: number): Block {
  const parents = Array.from({ length: Math.ceil((size * 2) / 4) }, () => rootTx(4));
  const outputs = parents.flatMap((p) => [0, 1, 2, 3].map((vout) => ({ parent: p, vout })));
  const txs: Fixture[] = [];
  let at = 0;
  for (let i = 0; i < size - 3 && at < outputs.length; i++) {
    const k = 1 + (i % 3);
    txs.push(makeTx({ inputs: outputs.slice(at, at + k), outputs: [400, 400] }));
    at += k;
  }
  const large = Array.from({ length: 3 }, () => rootTx(35000));
  const lean = (f: Fixture): BlockTx => ({ hex: f.hex, txid: f.txid, inputs: f.tx.inputs.length });
  return { parents: parents.map(lean), txs: txs.map(lean), large: large.map(lean) };
}

type Client = ReturnType<typeof import('@bsv-utxo-store/client').localClient>;

/** A block validator reads only the failures of its write batches: successes are answered by their status alone. */
const BRIEF = { brief: true } as const;

async function runPhase(client: Client, block: Block, phase: BlockPhase): Promise<number> {
  const { parents, txs, large } = block;
  switch (phase) {
    case 'parents': {
      await client.forceChainTip(1000);
      const prev = { minedBlocks: [{ blockId: 999, blockHeight: 999, subtreeIdx: 0 }] };
      await inFlight(chunks(parents, 1000), IN_FLIGHT, async (b) =>
        must(
          await client.createMany(
            b.map((p) => ({ tx: p.hex, ...prev })),
            BRIEF,
          ),
          'parents',
        ),
      );
      return 0;
    }
    case 'create':
      await inFlight([...chunks(txs, 1000), ...large.map((l) => [l])], IN_FLIGHT, async (b) =>
        must(
          await client.createMany(
            b.map((t) => ({ tx: t.hex })),
            BRIEF,
          ),
          'block createMany',
        ),
      );
      return 0;
    case 'spend':
      await inFlight(chunks(txs, 1000), IN_FLIGHT, async (b) =>
        must(
          await client.spendMany(
            b.map((t) => t.hex),
            BRIEF,
          ),
          'block spendMany',
        ),
      );
      return 0;
    case 'setMined':
      await client.forceChainTip(1001);
      await client.setMinedMany(
        [...txs, ...large].map((t) => t.txid),
        { blockId: 1001, blockHeight: 1001, subtreeIdx: 0 },
        { concurrency: IN_FLIGHT },
      );
      return 0;
    case 'cleanup': {
      await client.forceChainTip(1001 + R + 1);
      let deleted = 0;
      for (let pass = 0; pass < 100; pass++) {
        const report = await client.cleanup(60);
        deleted += report.deleted;
        if (!report.more) break;
      }
      return deleted;
    }
  }
}

async function main(): Promise<void> {
  const { localClient } = await import('@bsv-utxo-store/client');
  let block: Block | undefined;
  let client: Client | undefined;
  const send = (m: FromBlockClient) => process.send?.(m);
  process.on('message', (m: ToBlockClient) => {
    void (async () => {
      try {
        if (m.type === 'setup') {
          await client?.close();
          client = localClient(m.url, { batching: false });
          block ??= buildBlock(m.block);
          send({ type: 'ready', txs: block.txs.length + block.large.length, inputs: inputsOf(block) });
        } else if (m.type === 'phase') {
          if (!client || !block) throw new Error('block client: phase before setup');
          const cpu = process.cpuUsage();
          const t = performance.now();
          const deleted = await runPhase(client, block, m.phase);
          const ms = performance.now() - t;
          const used = process.cpuUsage(cpu);
          send({ type: 'done', phase: m.phase, ms, cpuUs: used.user + used.system, deleted });
        } else {
          await client?.close();
          process.exit(0);
        }
      } catch (err) {
        send({ type: 'error', message: String((err as Error).message ?? err) });
      }
    })();
  });
}

function inputsOf(block: Block): number {
  return block.txs.reduce((s, t) => s + t.inputs, 0);
}

if (process.send) void main();
