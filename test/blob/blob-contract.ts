/**
 * The BlobStore contract (lib/blob/port.ts, docs/records.md), run on every adapter.
 */
import { BlobConflictError, type BlobStore } from '../../lib/blob';
import { InvalidArgumentError } from '../../lib/domain/errors';

const TXID_A = 'a'.repeat(62) + '01';
const TXID_B = 'b'.repeat(62) + '02';

export function describeBlobContract(name: string, open: () => Promise<BlobStore>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let n = 0;
    // every test gets fresh txids so that the adapters' state never leaks between tests
    const txid = (base: string) => `${(n++).toString(16).padStart(4, '0')}${base.slice(4)}`;

    beforeEach(async () => {
      store = await open();
    });

    test('put then get returns the same bytes; exists is true', async () => {
      const id = txid(TXID_A);
      const data = Buffer.from('0100000001deadbeef', 'hex');
      await store.put(id, 'tx', data);
      expect(await store.get(id, 'tx')).toEqual(data);
      expect(await store.exists(id, 'tx')).toBe(true);
    });

    test('.tx and .outputs are separate blobs', async () => {
      const id = txid(TXID_A);
      await store.put(id, 'tx', Buffer.from([1, 2, 3]));
      expect(await store.exists(id, 'outputs')).toBe(false);
      expect(await store.get(id, 'outputs')).toBeNull();
      await store.put(id, 'outputs', Buffer.from([4, 5]));
      expect(await store.get(id, 'tx')).toEqual(Buffer.from([1, 2, 3]));
      expect(await store.get(id, 'outputs')).toEqual(Buffer.from([4, 5]));
    });

    test('a missing blob: get null, exists false, delete false, no tag, setDeleteAtHeight false', async () => {
      const id = txid(TXID_B);
      expect(await store.get(id, 'tx')).toBeNull();
      expect(await store.exists(id, 'tx')).toBe(false);
      expect(await store.delete(id, 'tx')).toBe(false);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBeNull();
      expect(await store.setDeleteAtHeight(id, 'tx', 10)).toBe(false);
      expect(await store.setDeleteAtHeight(id, 'tx', null)).toBe(false);
      expect(await store.exists(id, 'tx')).toBe(false);
    });

    test('create-only: identical bytes again is success, different bytes is BlobConflictError', async () => {
      const id = txid(TXID_A);
      const data = Buffer.alloc(4096, 7);
      await store.put(id, 'tx', data);
      await expect(store.put(id, 'tx', Buffer.from(data))).resolves.toBeUndefined();

      const sameSize = Buffer.from(data);
      sameSize[100] = 8;
      await expect(store.put(id, 'tx', sameSize)).rejects.toBeInstanceOf(BlobConflictError);
      await expect(store.put(id, 'tx', Buffer.alloc(10, 7))).rejects.toThrow(/already exists with different content/);
      expect(await store.get(id, 'tx')).toEqual(data);
    });

    test('concurrent puts of different bytes: one wins, the others are BlobConflictError', async () => {
      const id = txid(TXID_A);
      const tries = [1, 2, 3, 4].map((b) => Buffer.alloc(1024, b));
      const results = await Promise.allSettled(tries.map((data) => store.put(id, 'tx', data)));
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [tries[i]] : []));
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(BlobConflictError);
      expect(await store.get(id, 'tx')).toEqual(won[0]);
    });

    test('concurrent puts of the same bytes all succeed and leave one blob', async () => {
      const id = txid(TXID_A);
      const data = Buffer.alloc(64 * 1024, 3);
      await Promise.all([1, 2, 3, 4].map(() => store.put(id, 'tx', data)));
      expect(await store.get(id, 'tx')).toEqual(data);
    });

    test('concurrent puts of the same large blob (4 MiB) all succeed: none sees the other half-written', async () => {
      const id = txid(TXID_A);
      const data = Buffer.alloc(4 * 1024 * 1024, 5);
      // started a few milliseconds apart: the later ones look while the first one's bytes are being written
      const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await Promise.all([0, 10, 20, 40, 80].map((ms) => after(ms).then(() => store.put(id, 'tx', data))));
      expect((await store.get(id, 'tx'))!.equals(data)).toBe(true);
    });

    test('an empty blob is stored and read back', async () => {
      const id = txid(TXID_A);
      await store.put(id, 'outputs', Buffer.alloc(0));
      expect(await store.exists(id, 'outputs')).toBe(true);
      expect(await store.get(id, 'outputs')).toEqual(Buffer.alloc(0));
    });

    test('a large blob (2 MiB) round-trips', async () => {
      const id = txid(TXID_A);
      const data = Buffer.alloc(2 * 1024 * 1024);
      for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
      await store.put(id, 'tx', data);
      expect((await store.get(id, 'tx'))!.equals(data)).toBe(true);
    });

    test('delete removes the blob and returns true once', async () => {
      const id = txid(TXID_A);
      await store.put(id, 'tx', Buffer.from([9]));
      expect(await store.delete(id, 'tx')).toBe(true);
      expect(await store.exists(id, 'tx')).toBe(false);
      expect(await store.get(id, 'tx')).toBeNull();
      expect(await store.delete(id, 'tx')).toBe(false);
    });

    test('deleteAtHeight: absent, set, replaced, removed', async () => {
      const id = txid(TXID_A);
      await store.put(id, 'tx', Buffer.from([1]));
      expect(await store.getDeleteAtHeight(id, 'tx')).toBeNull();
      expect(await store.setDeleteAtHeight(id, 'tx', 1288)).toBe(true);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBe(1288);
      expect(await store.setDeleteAtHeight(id, 'tx', 1300)).toBe(true);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBe(1300);
      expect(await store.setDeleteAtHeight(id, 'tx', 1300)).toBe(true);
      expect(await store.setDeleteAtHeight(id, 'tx', null)).toBe(true);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBeNull();
      expect(await store.setDeleteAtHeight(id, 'tx', null)).toBe(true);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBeNull();
      expect(await store.setDeleteAtHeight(id, 'tx', 0)).toBe(true);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBe(0);
      // the blob's bytes are untouched by tagging
      expect(await store.get(id, 'tx')).toEqual(Buffer.from([1]));
    });

    test('deleteAtHeight is per blob and goes away with the blob', async () => {
      const id = txid(TXID_A);
      await store.put(id, 'tx', Buffer.from([1]));
      await store.put(id, 'outputs', Buffer.from([2]));
      await store.setDeleteAtHeight(id, 'tx', 500);
      expect(await store.getDeleteAtHeight(id, 'outputs')).toBeNull();
      expect(await store.delete(id, 'tx')).toBe(true);
      expect(await store.getDeleteAtHeight(id, 'tx')).toBeNull();
      await store.put(id, 'tx', Buffer.from([3]));
      // a new blob under the same name does not inherit the old tag
      expect(await store.getDeleteAtHeight(id, 'tx')).toBeNull();
    });

    test('invalid txids, kinds and heights are rejected with InvalidArgumentError before any I/O', async () => {
      await expect(store.get('../../etc/passwd', 'tx')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(store.put('A'.repeat(64), 'tx', Buffer.from([1]))).rejects.toThrow(/txid/);
      await expect(store.exists('ab', 'tx')).rejects.toThrow(/64 lowercase hex/);
      await expect(store.get(TXID_A, 'json' as never)).rejects.toThrow(/kind/);
      const id = txid(TXID_A);
      await store.put(id, 'tx', Buffer.from([1]));
      await expect(store.setDeleteAtHeight(id, 'tx', -1)).rejects.toThrow(/deleteAtHeight/);
      await expect(store.setDeleteAtHeight(id, 'tx', 1.5)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    test('ping succeeds', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
