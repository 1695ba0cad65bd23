/**
 * A batch route lets go of its request's items once they are parsed (lib/http/route-handlers.ts batch()): the body's
 * list (zod's copy, about the request's size: a block's tx hex) is emptied before the store runs, so it is not kept
 * alive while the engine answers; the store still gets every valid item and each answer is in order.
 */
import { HANDLERS, type HandlerContext } from '../../lib/http/route-handlers';
import { routeById } from '../../lib/http/route-table';
import { rootTx } from '../fixtures/txs';

test("createTxs: the store gets the parsed items, the body's list is empty while it runs, the answers in order", async () => {
  const txs = [rootTx(1), rootTx(2)];
  const body = routeById('createTxs').body!.parse({ txs: [{ tx: txs[0].hex }, { tx: 'xyz' }, { tx: txs[1].hex }] });
  let seen: { items: number; bodyListDuringRun: number } | undefined;
  const store = {
    createMany: async (items: unknown[]) => {
      seen = { items: items.length, bodyListDuringRun: (body as { txs: unknown[] }).txs.length };
      return items.map((_, i) => ({ ok: true as const, value: { txid: `t${i}` } }));
    },
  };
  const ctx = { runtime: { config: { maxBatchItems: 10 } }, store } as unknown as HandlerContext;
  const reply = await HANDLERS.createTxs({ body } as never, ctx);
  expect(seen).toEqual({ items: 2, bodyListDuringRun: 0 });
  const results = (reply.body as { results: { status: number; result?: unknown }[] }).results;
  expect(results.map((r) => r.status)).toEqual([201, 400, 201]);
  expect(results[0].result).toEqual({ txid: 't0' });
  expect(results[2].result).toEqual({ txid: 't1' });
});
