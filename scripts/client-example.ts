/**
 * `npm run client-example`: the typed client end to end. With UTXO_STORE_URL set (e.g. http://127.0.0.1:8080 of
 * `npm start`) it talks to that server; otherwise it starts a local server in this process on an in-memory store.
 *
 * In AWS the same calls go through API Gateway (SigV4) or straight to the functions (direct invocation):
 *
 *   const client = awsClient({ apiUrl: 'https://<api-id>.execute-api.<region>.amazonaws.com/prod', region });
 *   const client = lambdaClient({ region, functionNames: { create: '<CreateFunctionName output>', ... } });
 */
import { ConflictError, isApiError, localClient } from '@bsv-utxo-store/client';
import { startScratchServer } from '../server/scratch-server';
import { makeTx, rootTx } from '../test/fixtures/txs';

async function main(): Promise<void> {
  let url = process.env.UTXO_STORE_URL;
  let stop = async () => undefined as void;
  if (!url) {
    const server = await startScratchServer('client-example-');
    url = server.url;
    stop = () => server.close();
  }

  const client = localClient(url);
  try {
    console.log('tip', await client.getChainTip());

    const parent = rootTx(2);
    const created = await client.createTx(parent.hex);
    console.log('created', created.txid, 'fee', created.fee);

    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    console.log('spent', (await client.spend(child.hex)).spends);
    await client.createTx(child.hex);

    // a second spender of the same output: a typed error naming the first
    const rival = makeTx({ inputs: [{ parent, vout: 0 }] });
    try {
      await client.spend(rival.hex);
    } catch (err) {
      if (isApiError(err, 'SPENT') && err instanceof ConflictError) {
        console.log(`refused: ${err.code}, output ${err.txid}:${err.vout} already spent by ${err.spendingTxid}`);
      } else throw err;
    }

    console.log('utxo 0', await client.getUtxo(parent.txid, 0));
    console.log('utxo 1', await client.getUtxo(parent.txid, 1));

    // a block's worth of txids, split into requests under the payload limit, with progress
    const mined = await client.setMinedMany(
      [parent.txid, child.txid],
      { blockId: 1, blockHeight: (await client.getChainTip()) + 1, subtreeIdx: 0 },
      { onProgress: (p) => console.log(`setMined ${p.done}/${p.total}`) },
    );
    console.log('block ids', Object.fromEntries(mined));
  } finally {
    await client.close();
    await stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
