import middy from '@middy/core';
import { BIN } from '../lib/domain/bins';

test('middy loads under jest and bins are defined', async () => {
  const h = middy(async () => BIN.utxos);
  expect(await h({}, {} as never)).toBe('utxos');
});
