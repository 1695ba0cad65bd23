/**
 * Issue 5 "Bad input": every route rejects with 400 and the field named (non-hex or wrong-length txids and hashes,
 * negative or non-integer numbers, raw tx with inputs, tx without outputs, missing fields, unknown fields, malformed
 * JSON), 413 over 10 MiB, 404 for unknown routes; nothing is stored by a rejected request.
 */
import './quiet-logs';
import { Transaction } from '@bsv/sdk';
import { makeTx, rootTx, utxoHashOf, type Fixture } from '../fixtures/txs';
import { MAX_BODY_BYTES } from '../../lib/http/payload-limits';
import { expectError, startApi, type Api } from './harness';

let api: Api;
let parent: Fixture;
let child: Fixture;

const BAD_TXIDS = ['abc', 'g'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), `${'a'.repeat(62)} a`, 12];
const BAD_INTS = [-1, 1.5, '3', 2 ** 32, null, true];
const BAD_BOOLS = ['true', 1, 0, null, [], {}];
/** Optional fields (route and field): their absence is valid. */
const OPTIONAL = new Set([
  '/v1/txs blockHeight',
  '/v1/txs isCoinbase',
  '/v1/txs locked',
  '/v1/txs conflicting',
  '/v1/spends blockHeight',
  '/v1/spends ignoreConflicting',
  '/v1/spends ignoreLocked',
  '/v1/unspends blockHeight',
  '/v1/unspends flagAsLocked',
  '/v1/mined onLongestChain',
  '/v1/mined unsetMined',
  '/v1/reassign blockHeight',
]);

beforeAll(async () => {
  api = await startApi();
  await api.put('/v1/chain/tip/force', { height: 500 });
  parent = rootTx(3);
  expect((await api.post('/v1/txs', { tx: parent.hex })).status).toBe(201);
  child = makeTx({ inputs: [{ parent, vout: 0 }] });
});

afterAll(async () => {
  await api?.close();
});

/** The state a rejected request must leave unchanged. */
async function snapshot() {
  const tx = await api.get(`/v1/txs/${parent.txid}?fields=utxos,locked,conflicting,blockIDs,preserveUntil`);
  const tip = await api.get('/v1/chain/tip');
  const childTx = await api.get(`/v1/txs/${child.txid}`);
  return { tx: tx.body, tip: tip.body, child: childTx.status };
}

let before: Awaited<ReturnType<typeof snapshot>>;
beforeEach(async () => {
  before = await snapshot();
});
afterEach(async () => {
  expect(await snapshot()).toEqual(before);
});

function spendItem() {
  return { txid: parent.txid, vout: 0, utxoHash: utxoHashOf(parent, 0), spendingTxid: child.txid, vin: 0 };
}
function outpoint() {
  return { txid: parent.txid, vout: 1, utxoHash: utxoHashOf(parent, 1) };
}

/** Every JSON-body route with a valid body and, per field, the path of a txid/hash/integer inside it. */
function bodies(): { method: string; path: string; body: Record<string, unknown> }[] {
  return [
    {
      method: 'POST',
      path: '/v1/txs',
      body: { tx: rootTx(1).hex, blockHeight: 5, minedBlocks: [{ blockId: 1, blockHeight: 5, subtreeIdx: 0 }] },
    },
    { method: 'POST', path: '/v1/spends', body: { spends: [spendItem()], blockHeight: 5 } },
    { method: 'POST', path: '/v1/unspends', body: { spends: [spendItem()] } },
    {
      method: 'POST',
      path: '/v1/mined',
      body: { txids: [parent.txid], blockId: 1, blockHeight: 501, subtreeIdx: 0, onLongestChain: false },
    },
    { method: 'POST', path: '/v1/locked', body: { txids: [parent.txid], locked: true } },
    { method: 'POST', path: '/v1/conflicting', body: { txids: [parent.txid], conflicting: true } },
    { method: 'POST', path: '/v1/freeze', body: { utxos: [outpoint()] } },
    { method: 'POST', path: '/v1/unfreeze', body: { utxos: [outpoint()] } },
    { method: 'POST', path: '/v1/reassign', body: { ...outpoint(), newUtxoHash: 'cd'.repeat(32), blockHeight: 5 } },
    { method: 'POST', path: '/v1/preserve', body: { txids: [parent.txid], untilHeight: 900 } },
    { method: 'PUT', path: '/v1/chain/tip', body: { height: 7 } },
    { method: 'POST', path: '/v1/longest-chain', body: { txids: [parent.txid], onLongestChain: true } },
    { method: 'POST', path: '/v1/conflicting/resolve', body: { txids: [parent.txid] } },
  ];
}

/** [route, field path, kind] for every txid, hash, integer and boolean field of the bodies above. */
const FIELDS: [string, (string | number)[], 'txid' | 'hash' | 'int' | 'bool'][] = [
  ['/v1/txs', ['blockHeight'], 'int'],
  ['/v1/txs', ['minedBlocks', 0, 'blockId'], 'int'],
  ['/v1/txs', ['minedBlocks', 0, 'blockHeight'], 'int'],
  ['/v1/txs', ['minedBlocks', 0, 'subtreeIdx'], 'int'],
  ['/v1/txs', ['isCoinbase'], 'bool'],
  ['/v1/txs', ['locked'], 'bool'],
  ['/v1/txs', ['conflicting'], 'bool'],
  ['/v1/spends', ['ignoreConflicting'], 'bool'],
  ['/v1/spends', ['ignoreLocked'], 'bool'],
  ['/v1/spends', ['spends', 0, 'txid'], 'txid'],
  ['/v1/spends', ['spends', 0, 'spendingTxid'], 'txid'],
  ['/v1/spends', ['spends', 0, 'utxoHash'], 'hash'],
  ['/v1/spends', ['spends', 0, 'vout'], 'int'],
  ['/v1/spends', ['spends', 0, 'vin'], 'int'],
  ['/v1/spends', ['blockHeight'], 'int'],
  ['/v1/unspends', ['spends', 0, 'txid'], 'txid'],
  ['/v1/unspends', ['spends', 0, 'utxoHash'], 'hash'],
  ['/v1/unspends', ['spends', 0, 'vout'], 'int'],
  ['/v1/unspends', ['spends', 0, 'spendingTxid'], 'txid'],
  ['/v1/unspends', ['spends', 0, 'vin'], 'int'],
  ['/v1/unspends', ['blockHeight'], 'int'],
  ['/v1/mined', ['txids', 0], 'txid'],
  ['/v1/mined', ['blockId'], 'int'],
  ['/v1/mined', ['blockHeight'], 'int'],
  ['/v1/mined', ['subtreeIdx'], 'int'],
  ['/v1/mined', ['onLongestChain'], 'bool'],
  ['/v1/mined', ['unsetMined'], 'bool'],
  ['/v1/locked', ['txids', 0], 'txid'],
  ['/v1/locked', ['locked'], 'bool'],
  ['/v1/conflicting', ['txids', 0], 'txid'],
  ['/v1/conflicting', ['conflicting'], 'bool'],
  ['/v1/freeze', ['utxos', 0, 'txid'], 'txid'],
  ['/v1/freeze', ['utxos', 0, 'utxoHash'], 'hash'],
  ['/v1/freeze', ['utxos', 0, 'vout'], 'int'],
  ['/v1/unfreeze', ['utxos', 0, 'txid'], 'txid'],
  ['/v1/unfreeze', ['utxos', 0, 'utxoHash'], 'hash'],
  ['/v1/unfreeze', ['utxos', 0, 'vout'], 'int'],
  ['/v1/reassign', ['txid'], 'txid'],
  ['/v1/reassign', ['utxoHash'], 'hash'],
  ['/v1/reassign', ['newUtxoHash'], 'hash'],
  ['/v1/reassign', ['vout'], 'int'],
  ['/v1/reassign', ['blockHeight'], 'int'],
  ['/v1/preserve', ['txids', 0], 'txid'],
  ['/v1/preserve', ['untilHeight'], 'int'],
  ['/v1/chain/tip', ['height'], 'int'],
  ['/v1/unspends', ['flagAsLocked'], 'bool'],
  ['/v1/longest-chain', ['txids', 0], 'txid'],
  ['/v1/longest-chain', ['onLongestChain'], 'bool'],
  ['/v1/conflicting/resolve', ['txids', 0], 'txid'],
];

function fieldName(p: (string | number)[]): string {
  return p.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${k}` : k), '');
}

function setAt(body: Record<string, unknown>, p: (string | number)[], value: unknown): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(body));
  let o = copy;
  for (const k of p.slice(0, -1)) o = o[k];
  o[p[p.length - 1]] = value;
  return copy;
}

function deleteAt(body: Record<string, unknown>, p: (string | number)[]): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(body));
  let o = copy;
  for (const k of p.slice(0, -1)) o = o[k];
  delete o[p[p.length - 1]];
  return copy;
}

describe.each(FIELDS)('%s %j (%s)', (route, fieldPath, kind) => {
  const send = (body: Record<string, unknown>) => {
    const r = bodies().find((b) => b.path === route)!;
    return api.raw(r.method, r.path, JSON.stringify(body));
  };
  const valid = () => bodies().find((b) => b.path === route)!.body;

  test('bad values are 400 naming the field', async () => {
    const values = kind === 'int' ? BAD_INTS : kind === 'bool' ? BAD_BOOLS : [...BAD_TXIDS, ''];
    for (const value of values) {
      const reply = await send(setAt(valid(), fieldPath, value));
      expectError(reply, 400, 'INVALID_ARGUMENT', fieldName(fieldPath));
    }
  });

  test('a missing required field is 400 naming it', async () => {
    const optional = OPTIONAL.has(`${route} ${fieldName(fieldPath)}`);
    if (optional || typeof fieldPath[fieldPath.length - 1] === 'number') return; // optional, or a list item
    const reply = await send(deleteAt(valid(), fieldPath));
    const error = expectError(reply, 400, 'INVALID_ARGUMENT', fieldName(fieldPath));
    expect(error.message).toMatch(/required/);
  });
});

describe('every JSON route', () => {
  test('malformed JSON, unknown fields, non-object bodies, empty bodies', async () => {
    for (const { method, path, body } of bodies()) {
      for (const text of ['{', '{"a":', 'not json', "{'tx': 1}"]) {
        const error = expectError(await api.raw(method, path, text), 400, 'INVALID_ARGUMENT', 'body');
        expect(error.message).toMatch(/malformed JSON/);
      }
      expectError(await api.raw(method, path, JSON.stringify({ ...body, bogus: 1 })), 400, 'INVALID_ARGUMENT', 'bogus');
      expectError(await api.raw(method, path, '[1,2]'), 400, 'INVALID_ARGUMENT', 'body');
      expectError(await api.raw(method, path, '"x"'), 400, 'INVALID_ARGUMENT', 'body');
      expectError(await api.raw(method, path, 'null'), 400, 'INVALID_ARGUMENT', 'body');
      expectError(await api.raw(method, path, ''), 400, 'INVALID_ARGUMENT', 'body');
    }
  });

  test('unknown fields inside list items are named', async () => {
    const reply = await api.post('/v1/spends', { spends: [{ ...spendItem(), extra: true }] });
    expectError(reply, 400, 'INVALID_ARGUMENT', 'spends[0].extra');
    const mined = await api.post('/v1/txs', {
      tx: rootTx(1).hex,
      minedBlocks: [{ blockId: 1, blockHeight: 2, subtreeIdx: 3, hash: 'x' }],
    });
    expectError(mined, 400, 'INVALID_ARGUMENT', 'minedBlocks[0].hash');
  });

  test("bodies over the limit (Lambda's 6 MB less the event's reserve) are 413 and nothing is stored", async () => {
    const big = rootTx([{ satoshis: 1, script: 'ab'.repeat(3 * 1024 * 1024 + 10) }]);
    const body = JSON.stringify({ tx: big.hex });
    expect(body.length).toBeGreaterThan(MAX_BODY_BYTES);
    expectError(await api.raw('POST', '/v1/txs', body), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await api.get(`/v1/txs/${big.txid}`), 404, 'TX_NOT_FOUND');
    for (const { method, path } of bodies()) {
      expectError(await api.raw(method, path, ' '.repeat(MAX_BODY_BYTES + 1)), 413, 'PAYLOAD_TOO_LARGE');
    }
  });
});

describe('POST /v1/txs', () => {
  test('non-hex, odd-length, empty or non-string tx; raw tx with inputs; no outputs; nothing stored', async () => {
    for (const tx of ['zz', 'abc', '', 42, null, ['00'], `${rootTx(1).hex}0`]) {
      expectError(await api.post('/v1/txs', { tx }), 400, 'INVALID_ARGUMENT', 'tx');
    }
    // the schema decodes the hex itself: a pair that is not hex is named as such, before the store sees it
    for (const tx of ['zz', 'abc', `${rootTx(1).hex.slice(0, -2)}0g`]) {
      const error = expectError(await api.post('/v1/txs', { tx }), 400, 'INVALID_ARGUMENT', 'tx');
      expect(error.message).toMatch(/expected the transaction as hex \(an even number of hex digits\)/);
    }
    expectError(await api.post('/v1/txs', {}), 400, 'INVALID_ARGUMENT', 'tx');

    const raw = makeTx({ inputs: [{ parent, vout: 1 }] });
    expectError(await api.post('/v1/txs', { tx: raw.tx.toHex() }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.post('/v1/txs', { tx: raw.tx.toHex(), isCoinbase: false }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.get(`/v1/txs/${raw.txid}`), 404, 'TX_NOT_FOUND');

    const empty = new Transaction();
    empty.lockTime = 77;
    expectError(await api.post('/v1/txs', { tx: empty.toHex() }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.get(`/v1/txs/${empty.id('hex')}`), 404, 'TX_NOT_FOUND');

    const ok = rootTx(1);
    for (const [field, value] of [
      ['isCoinbase', 'yes'],
      ['locked', 1],
      ['conflicting', 'false'],
      ['minedBlocks', {}],
      ['minedBlocks', [{ blockId: 1, blockHeight: 2 }]],
      ['minedBlocks', [{ blockId: -1, blockHeight: 2, subtreeIdx: 0 }]],
    ] as const) {
      const reply = await api.post('/v1/txs', { tx: ok.hex, [field]: value });
      const error = expectError(reply, 400, 'INVALID_ARGUMENT');
      expect(String(error.details?.field)).toMatch(new RegExp(`^${field}`));
    }
    expectError(await api.get(`/v1/txs/${ok.txid}`), 404, 'TX_NOT_FOUND');
  });
});

describe('POST /v1/spends', () => {
  test('bad tx: non-hex, not a tx, raw (non-EF) with inputs, no inputs, no outputs; tx and spends together or neither', async () => {
    for (const tx of ['zz', 'abc', '', 42, null, 'deadbeef']) {
      expectError(await api.post('/v1/spends', { tx }), 400, 'INVALID_ARGUMENT', 'tx');
    }
    // the child spends parent:0; as a raw tx its prevouts are unknown, so nothing may be spent
    expectError(await api.post('/v1/spends', { tx: child.tx.toHex() }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.post('/v1/spends', { tx: rootTx(1).hex }), 400, 'INVALID_ARGUMENT', 'tx');
    // an EF tx that spends parent:0 but has no outputs
    const noOutputs = makeTx({ inputs: [{ parent, vout: 0 }], outputs: 0 });
    expectError(await api.post('/v1/spends', { tx: noOutputs.hex }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.post('/v1/spends', {}), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.post('/v1/spends', { blockHeight: 5 }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(
      await api.post('/v1/spends', { tx: child.hex, spends: [spendItem()] }),
      400,
      'INVALID_ARGUMENT',
      'spends',
    );
  });
});

describe('lists', () => {
  test('empty lists and non-lists are 400 naming the list', async () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/v1/spends', { spends: [] }, 'spends'],
      ['POST', '/v1/unspends', { spends: [] }, 'spends'],
      ['POST', '/v1/mined', { txids: [], blockId: 1, blockHeight: 5, subtreeIdx: 0 }, 'txids'],
      ['POST', '/v1/locked', { txids: [], locked: true }, 'txids'],
      ['POST', '/v1/conflicting', { txids: [], conflicting: true }, 'txids'],
      ['POST', '/v1/freeze', { utxos: [] }, 'utxos'],
      ['POST', '/v1/unfreeze', { utxos: [] }, 'utxos'],
      ['POST', '/v1/preserve', { txids: [], untilHeight: 900 }, 'txids'],
    ];
    for (const [method, path, body, field] of cases) {
      expectError(await api.raw(method, path, JSON.stringify(body)), 400, 'INVALID_ARGUMENT', field);
      for (const notList of [parent.txid, {}, 1, null]) {
        const reply = await api.raw(method, path, JSON.stringify({ ...body, [field]: notList }));
        expectError(reply, 400, 'INVALID_ARGUMENT', field);
      }
    }
  });
});

describe('path and query parameters', () => {
  test('bad txids in paths, bad vouts, bad query values', async () => {
    for (const bad of ['abc', 'g'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), '%zz']) {
      expectError(await api.get(`/v1/txs/${bad}`), 400, 'INVALID_ARGUMENT', 'txid');
      expectError(await api.del(`/v1/txs/${bad}`), 400, 'INVALID_ARGUMENT', 'txid');
      expectError(await api.get(`/v1/utxos/${bad}/0`), 400, 'INVALID_ARGUMENT', 'txid');
    }
    for (const bad of ['-1', '1.5', 'x', '1e3', '4294967296']) {
      expectError(await api.get(`/v1/utxos/${parent.txid}/${bad}`), 400, 'INVALID_ARGUMENT', 'vout');
      expectError(await api.get(`/v1/unmined?cutoff=${bad}`), 400, 'INVALID_ARGUMENT', 'cutoff');
    }
    expectError(
      await api.get(`/v1/utxos/${parent.txid}/0?utxoHash=${'a'.repeat(63)}`),
      400,
      'INVALID_ARGUMENT',
      'utxoHash',
    );
    expectError(await api.get('/v1/health?verbose=1'), 400, 'INVALID_ARGUMENT', 'verbose');
  });

  test('GET /v1/unmined: missing or bad cutoff, bad limit, a cursor no page returned', async () => {
    expectError(await api.get('/v1/unmined'), 400, 'INVALID_ARGUMENT', 'cutoff');
    expectError(await api.get('/v1/unmined?cutoff='), 400, 'INVALID_ARGUMENT', 'cutoff');
    for (const bad of ['-1', '1.5', 'x', '0', '10001', '1e3', '']) {
      expectError(await api.get(`/v1/unmined?cutoff=5&limit=${bad}`), 400, 'INVALID_ARGUMENT', 'limit');
    }
    for (const bad of ['', 'garbage', 'eyJ4IjoxfQ', '%E2%9C%93', 'x'.repeat(1025)]) {
      expectError(await api.get(`/v1/unmined?cutoff=5&cursor=${bad}`), 400, 'INVALID_ARGUMENT', 'cursor');
    }
    expectError(await api.get('/v1/unmined?cutoff=5&limit=2&limit=3'), 400, 'INVALID_ARGUMENT', 'limit');
  });

  test('GET /v1/txs/{txid}: unknown or repeated fields', async () => {
    for (const bad of ['bogus', 'fee,bogus', 'FEE']) {
      expectError(await api.get(`/v1/txs/${parent.txid}?fields=${bad}`), 400, 'INVALID_ARGUMENT', 'fields');
    }
    expectError(await api.get(`/v1/txs/${parent.txid}?fields=fee&fields=tx`), 400, 'INVALID_ARGUMENT', 'fields');
    expectError(await api.get(`/v1/txs/${parent.txid}?field=fee`), 400, 'INVALID_ARGUMENT', 'field');
  });

  test('GET /v1/txs/{txid}: an empty fields value or an empty item in the list is 400, not a txid-only view', async () => {
    for (const bad of ['', ',', '%20', 'fee,', ',fee', 'fee,,tx']) {
      expectError(await api.get(`/v1/txs/${parent.txid}?fields=${bad}`), 400, 'INVALID_ARGUMENT', 'fields');
    }
    expectError(await api.get(`/v1/txs/${parent.txid}?fields`), 400, 'INVALID_ARGUMENT', 'fields');
    expect((await api.get(`/v1/txs/${parent.txid}?fields=fee,%20tx`)).status).toBe(200);
  });

  test('query parameters named like Object.prototype members are unknown (400), not a 500', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      expectError(await api.get(`/v1/health?${name}=1`), 400, 'INVALID_ARGUMENT', name);
      expectError(await api.get(`/v1/unmined?cutoff=5&${name}=x`), 400, 'INVALID_ARGUMENT', name);
      expectError(await api.get(`/v1/txs/${parent.txid}?${name}`), 400, 'INVALID_ARGUMENT', name);
    }
  });

  test('query parameters on body routes are unknown; nothing is stored', async () => {
    const f = rootTx(1);
    expectError(await api.post('/v1/txs?blockHeight=5', { tx: f.hex }), 400, 'INVALID_ARGUMENT', 'blockHeight');
    expectError(await api.get(`/v1/txs/${f.txid}`), 404, 'TX_NOT_FOUND');
    expectError(await api.post(`/v1/spends?tx=${child.hex}`, { spends: [spendItem()] }), 400, 'INVALID_ARGUMENT', 'tx');
  });
});

describe('routes without a body', () => {
  test('a body with fields, malformed JSON or a non-object on DELETE is 400 and deletes nothing', async () => {
    const reply = await api.raw('DELETE', `/v1/txs/${parent.txid}`, JSON.stringify({ txid: rootTx(1).txid }));
    expectError(reply, 400, 'INVALID_ARGUMENT', 'txid');
    expectError(await api.raw('DELETE', `/v1/txs/${parent.txid}`, '{"force": true}'), 400, 'INVALID_ARGUMENT', 'force');
    expectError(await api.raw('DELETE', `/v1/txs/${parent.txid}`, 'not json'), 400, 'INVALID_ARGUMENT', 'body');
    expectError(await api.raw('DELETE', `/v1/txs/${parent.txid}`, '[1]'), 400, 'INVALID_ARGUMENT', 'body');
    expect((await api.get(`/v1/txs/${parent.txid}`)).status).toBe(200);
  });

  test('an empty body or {} is accepted', async () => {
    const f = rootTx(1);
    expect((await api.post('/v1/txs', { tx: f.hex })).status).toBe(201);
    expect((await api.raw('DELETE', `/v1/txs/${f.txid}`, '{}')).status).toBe(204);
    expect((await api.post('/v1/txs', { tx: f.hex })).status).toBe(201);
    expect((await api.raw('DELETE', `/v1/txs/${f.txid}`, ' ')).status).toBe(204);
    expect((await api.raw('DELETE', `/v1/txs/${f.txid}`)).status).toBe(404);
  });
});

describe('POST /v1/cleanup', () => {
  test('bad maxSeconds, unknown fields, malformed JSON and non-object bodies are 400', async () => {
    for (const maxSeconds of [0, -1, 901, 'x', '5', null, true, []]) {
      expectError(await api.post('/v1/cleanup', { maxSeconds }), 400, 'INVALID_ARGUMENT', 'maxSeconds');
    }
    expectError(await api.post('/v1/cleanup', { maxSeconds: 5, force: true }), 400, 'INVALID_ARGUMENT', 'force');
    for (const text of ['{', 'not json']) {
      const error = expectError(await api.raw('POST', '/v1/cleanup', text), 400, 'INVALID_ARGUMENT', 'body');
      expect(error.message).toMatch(/malformed JSON/);
    }
    for (const text of ['[1]', '"x"', 'null', '7']) {
      expectError(await api.raw('POST', '/v1/cleanup', text), 400, 'INVALID_ARGUMENT', 'body');
    }
    expectError(await api.raw('POST', '/v1/cleanup', ' '.repeat(MAX_BODY_BYTES + 1)), 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('routing', () => {
  test('unknown routes are 404, wrong methods 405', async () => {
    for (const p of ['/', '/v1', '/v2/txs', '/v1/txs/a/b', '/v1/utxo/x/0', '/v1/spend', '/v1/chain']) {
      expectError(await api.get(p), 404, 'ROUTE_NOT_FOUND');
    }
    expectError(await api.post('/v1/nothing', {}), 404, 'ROUTE_NOT_FOUND');
    const wrong = await api.get('/v1/spends');
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED');
    expect(wrong.headers.get('allow')).toBe('POST');
    expectError(await api.del('/v1/chain/tip'), 405, 'METHOD_NOT_ALLOWED');
    expectError(await api.put(`/v1/txs/${parent.txid}`, {}), 405, 'METHOD_NOT_ALLOWED');
  });
});
