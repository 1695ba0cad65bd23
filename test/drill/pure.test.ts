/**
 * The disaster-recovery drill's pure parts (scripts/drill/): what counts as lost after a restore (the RPO), the order
 * and grouping of the replay, the manifest the restore verifies as the drill reads it, cleanup's invariants over
 * records, the txs it builds, asinfo's and asrestore's output, the options. The drill itself needs a server binary,
 * root and the tools: `npm run drill` (docs/reliability.md), not part of `npm test`.
 */
import { BACKUP_PREFIX } from '../../cdk/backup';
import { parseTx } from '../../lib/domain/tx';
import type { FinalState } from '../../scripts/partition/history';
import { parseDrillArgs, DRILL_PREFIX } from '../../scripts/drill/args';
import { parseAsinfoArgs } from '../../scripts/drill/asinfo';
import { parseManifest } from '../../scripts/drill/backups';
import {
  childSafe,
  dahViolations,
  deletable,
  passViolations,
  type TxFacts,
} from '../../scripts/drill/cleanup-invariants';
import { parseDrillHistory, type DrillEvent } from '../../scripts/drill/events';
import { asrestoreCounts } from '../../scripts/drill/partial';
import { applied, recoveryPoint, replayBatches } from '../../scripts/drill/recovery';
import { toolMs } from '../../scripts/drill/report';
import { seedTx, spenderTx } from '../../scripts/drill/txs';

const base = (start: number, end = start + 1) => ({ client: 'load', mode: 'single' as const, start, end });
const create = (txid: string, end: number, answer: 'ok' | 'refused' = 'ok'): DrillEvent => ({
  kind: 'create',
  txid,
  hex: `hex-${txid}`,
  ...base(end - 1, end),
  answer,
});
const spend = (spender: string, parent: string, end: number, answer: 'ok' | 'refused' = 'ok'): DrillEvent => ({
  kind: 'spend',
  spender,
  inputs: [{ txid: parent, vout: 0 }],
  hex: `hex-${spender}`,
  ...base(end - 1, end),
  answer,
});
const mined = (txids: string[], blockId: number, end: number): DrillEvent => ({
  kind: 'setMined',
  txids,
  blockId,
  blockHeight: 100 + blockId,
  ...base(end - 1, end),
  mode: 'batch',
  answer: 'ok',
});

// seed s; a spends s:0 and is stored; block 1 (s, a); b spends a:0 (a rival c refused); b stored; block 2 (b)
const history: DrillEvent[] = [
  create('s', 10),
  spend('a', 's', 20),
  create('a', 30),
  mined(['s', 'a'], 1, 40),
  spend('b', 'a', 50),
  spend('c', 'a', 51, 'refused'),
  create('b', 60),
  mined(['b'], 2, 70),
];

/** The records a backup holds when it saw everything acknowledged up to `until` (ms). */
function stateUpTo(until: number): FinalState {
  const final: FinalState = { spenders: { 's:0': null, 'a:0': null }, txs: {} };
  for (const e of history.filter((x) => x.answer === 'ok' && x.end <= until)) {
    if (e.kind === 'create') final.txs[e.txid] = { blockIds: [], conflicting: false };
    else if (e.kind === 'spend') final.spenders[`${e.inputs[0].txid}:0`] = e.spender;
    else e.txids.forEach((t) => final.txs[t].blockIds.push(e.blockId));
  }
  if (!final.txs.a) delete final.spenders['a:0'];
  return final;
}

describe('what a restore lacks (RPO)', () => {
  test('the writes acknowledged since the backup began, those the restored records miss, the blocks to replay', () => {
    // the backup began at 35 and its scan saw the store as it was at 45
    const rp = recoveryPoint(history, stateUpTo(45), 35, 80);
    expect(rp.since).toEqual({ creates: 1, spends: 1, blocks: 2 });
    expect(rp.missing).toEqual({ creates: 1, spends: 1, blocks: 1 });
    expect(rp.missingBefore).toEqual({ creates: 0, spends: 0, blocks: 0 });
    expect(rp.firstMissingMs).toBe(50 - 35);
    expect(rp.lastAckMs).toBe(70 - 35);
    expect(rp.blockHeights).toEqual({ from: 101, to: 102 });
  });

  test('a backup that lacks a write acknowledged before it began is named (missingBefore)', () => {
    const broken = stateUpTo(100);
    delete broken.txs.a;
    expect(recoveryPoint(history, broken, 35, 80).missingBefore).toEqual({ creates: 1, spends: 0, blocks: 0 });
    expect(recoveryPoint(history, stateUpTo(100), 35, 80).missing).toEqual({ creates: 0, spends: 0, blocks: 0 });
  });

  test('applied: a spend by another spender or a block missing on one of its txs is not applied', () => {
    const final = stateUpTo(100);
    expect(history.filter((e) => e.answer === 'ok').every((e) => applied(e, final))).toBe(true);
    final.spenders['a:0'] = 'c';
    final.txs.s.blockIds = [];
    expect(applied(history[4], final)).toBe(false);
    expect(applied(history[3], final)).toBe(false);
  });
});

describe('the replay', () => {
  test('acknowledged writes since the backup began, in acknowledgement order, a run of one kind in one call', () => {
    const batches = replayBatches(history, 15);
    expect(batches.map((b) => [b.kind, b.events.map((e) => (e.kind === 'setMined' ? e.blockId : e.answer))])).toEqual([
      ['spend', ['ok']],
      ['create', ['ok']],
      ['setMined', [1]],
      ['spend', ['ok']],
      ['create', ['ok']],
      ['setMined', [2]],
    ]);
    // the refused rival is not sent; neighbours of one kind share a call, up to the batch size
    const spends = Array.from({ length: 5 }, (_, i) => spend(`x${i}`, 's', 200 + i));
    expect(replayBatches([...history, ...spends], 100, 2).map((b) => b.events.length)).toEqual([2, 2, 1]);
    expect(replayBatches(history, 1000)).toEqual([]);
  });

  test('the history file: a create or spend without its tx, a block without its height, is refused', () => {
    const lines = (es: object[]) => es.map((e) => JSON.stringify(e)).join('\n');
    expect(parseDrillHistory(lines(history))).toHaveLength(history.length);
    const { hex: _hex, ...bare } = history[0] as { hex: string };
    expect(() => parseDrillHistory(lines([bare]))).toThrow(/line 1: a create without hex/);
    const { blockHeight: _h, ...noHeight } = history[3] as { blockHeight: number };
    expect(() => parseDrillHistory(lines([history[0], noHeight]))).toThrow(/line 2: a setMined without blockHeight/);
  });
});

describe('the manifest (BACKUP_COMPLETE) as the drill reads it', () => {
  const sha = 'ab'.repeat(32);
  test('the record count and every file; a marker without them or with a malformed line is not a manifest', () => {
    expect(
      parseManifest(
        `namespace=utxo\nnode=A3\nrecords=1000042\nfile=${sha} 123 utxo_00000.asb\nfile=${sha} 9 utxo_00001.asb\nfinished=x\n`,
      ),
    ).toEqual({
      records: 1000042,
      files: [
        { sha256: sha, size: 123, name: 'utxo_00000.asb' },
        { sha256: sha, size: 9, name: 'utxo_00001.asb' },
      ],
    });
    expect(parseManifest('namespace=utxo\nnode=A3\nfinished=x\n')).toBe('no records= line');
    expect(parseManifest('records=1\n')).toBe('no file= line');
    expect(parseManifest(`records=1\nfile=${sha} 1 ../x.asb\n`)).toMatch(/malformed line/);
    expect(parseManifest(`records=1\nfile=${sha.slice(2)} 1 x.asb\n`)).toMatch(/malformed line/);
  });

  test('the drill writes under the prefix the deployment backs up to', () => {
    expect(DRILL_PREFIX).toBe(BACKUP_PREFIX);
  });
});

describe("cleanup's invariants over records", () => {
  const facts = (txid: string, f: Partial<TxFacts> = {}): TxFacts => ({
    txid,
    blockIds: [1],
    blockHeights: [100],
    spentUtxos: 1,
    recordUtxos: 1,
    totalExtraRecs: 0,
    spentExtraRecs: 0,
    reassignments: false,
    conflicting: false,
    locked: false,
    creating: false,
    deleting: false,
    deleteAtHeight: 100 + 288,
    ...f,
  });

  test('the DAH rule: deletable with a DAH >= its block + R, not deletable without one; no marks left', () => {
    expect(dahViolations([facts('ok'), facts('unspent', { spentUtxos: 0, deleteAtHeight: undefined })], 288)).toEqual(
      [],
    );
    expect(
      dahViolations(
        [
          facts('leak', { deleteAtHeight: undefined }),
          facts('low', { deleteAtHeight: 300 }),
          facts('unmined', { unminedSince: 5 }),
          facts('stuck', { creating: true, deleteAtHeight: undefined }),
          facts('marked', { deleting: true }),
          facts('conflicting', { conflicting: true, spentUtxos: 0 }),
        ],
        288,
      ),
    ).toEqual([
      { txid: 'leak', why: 'deletable without a DAH (never cleaned up)' },
      { txid: 'low', why: 'DAH 300 below 388' },
      { txid: 'unmined', why: 'DAH 388 on a tx that is not deletable' },
      { txid: 'stuck', why: 'left creating' },
      { txid: 'marked', why: 'left deleting' },
    ]);
    expect(deletable(facts('locked', { locked: true }))).toBe(false);
    expect(deletable(facts('reassigned', { reassignments: true }))).toBe(false);
  });

  test('a pass: a parent deleted while its child is unmined or not yet buried is unsafe; a due parent left is owed', () => {
    const before = {
      p1: facts('p1'),
      c1: facts('c1', { unminedSince: 7, blockIds: [], blockHeights: [], deleteAtHeight: undefined }),
      p2: facts('p2'),
      c2: facts('c2', { blockHeights: [395], deleteAtHeight: undefined }),
      p3: facts('p3'),
      c3: facts('c3', { blockHeights: [390], deleteAtHeight: undefined }),
    };
    const children = new Map([
      ['p1', ['c1']],
      ['p2', ['c2']],
      ['p3', ['c3']],
    ]);
    // tip 400, window 10: c2 (mined at 395) is not yet safe, c3 (390) is
    expect(childSafe(before.c3, 400, 10)).toBe(true);
    expect(childSafe(before.c2, 400, 10)).toBe(false);
    expect(childSafe(undefined, 400, 10)).toBe(true);
    const everythingGone = new Set<string>(['c1']);
    expect(passViolations(before, everythingGone, children, 400, 10, true).unsafe).toEqual([
      { txid: 'p1', child: 'c1' },
      { txid: 'p2', child: 'c2' },
    ]);
    const kept = new Set(Object.keys(before));
    expect(passViolations(before, kept, children, 400, 10, true)).toEqual({ unsafe: [], owed: ['p3'] });
    expect(passViolations(before, kept, children, 400, 10, false).owed).toEqual([]);
  });
});

describe('the txs, the tools output, the options', () => {
  test('a seed and its spenders parse as the store parses them; rivals of one output differ', () => {
    const seed = seedTx(7, 8, 1_000_000);
    expect(parseTx(seed.hex).txidHex).toBe(seed.txid);
    const child = spenderTx(seed.outputs[3]);
    const rival = spenderTx(seed.outputs[3], 1);
    const parsed = parseTx(child.hex);
    expect(parsed.isExtended).toBe(true);
    expect(parsed.inputs[0]).toMatchObject({ prevTxidHex: seed.txid, vout: 3, satoshis: 1_000_000 });
    expect(parsed.txidHex).toBe(child.txid);
    expect(rival.txid).not.toBe(child.txid);
    expect(child.outputs).toEqual([{ txid: child.txid, vout: 0, satoshis: 999_999 }]);
    expect(() => spenderTx({ txid: seed.txid, vout: 0, satoshis: 1 })).toThrow(/too few satoshis/);
  });

  test("asinfo's options as the node scripts call it; asrestore's last counts", () => {
    expect(parseAsinfoArgs(['-v', 'node'])).toEqual({ host: '127.0.0.1', port: 3000, command: 'node' });
    expect(parseAsinfoArgs(['-h', '10.0.0.1', '-p', '4000', '-v', 'statistics']).port).toBe(4000);
    expect(() => parseAsinfoArgs(['-l'])).toThrow(/needs a value/);
    expect(() => parseAsinfoArgs(['-x', '1'])).toThrow(/unknown option -x/);
    expect(() => parseAsinfoArgs([])).toThrow(/-v <command> is required/);
    const log = [
      'Expired 0 : skipped 0 : err_ignored 0 : inserted 10: failed 0 (existed 0 , fresher 0)',
      'Expired 0 : skipped 0 : err_ignored 0 : inserted 12: failed 1000 (existed 0 , fresher 1000)',
    ].join('\n');
    expect(asrestoreCounts(log)).toEqual({ inserted: 12, failed: 1000, fresher: 1000 });
    expect(asrestoreCounts('nothing')).toBeNull();
  });

  test("the tools' own time from their log's timestamps (whole seconds)", () => {
    const log = [
      '2026-11-29 11:02:09 GMT [INF] [14612] Starting backup of 127.0.0.1 (namespace: utxo)',
      '2026-11-29 11:03:00 GMT [INF] [14632] 50% complete',
      '2026-11-29 11:04:21 GMT [INF] [14612] Backed up 1006299 record(s), 0 secondary index(es)',
    ].join('\n');
    expect(toolMs(log, /Starting backup of/, /Backed up \d+ record/)).toBe(132_000);
    expect(toolMs(log, /Starting restore to/, /Backed up/)).toBeNull();
  });

  test('the options: the defaults are the issue; a bad value is named', () => {
    expect(parseDrillArgs([])).toMatchObject({ records: 1_000_000, rf: 2, prefix: 'drl', subnet: '10.21.0' });
    expect(parseDrillArgs(['--rf', '3', '--records', '1000']).records).toBe(1000);
    expect(() => parseDrillArgs(['--rf', '4'])).toThrow(/--rf: expected an integer from 1 to 3/);
    expect(() => parseDrillArgs(['--prefix', 'US19'])).toThrow(/--prefix/);
  });
});
