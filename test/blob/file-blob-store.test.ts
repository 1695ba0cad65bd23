import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  promises as fsPromises,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { BlobStoreError, FileBlobStore } from '../../lib/blob';
import { describeBlobContract } from './blob-contract';

const TXID = 'c'.repeat(64);
let root: string;

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'file-blobs-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let dirs = 0;
describeBlobContract('FileBlobStore', async () => new FileBlobStore({ dir: path.join(root, `s${dirs++}`) }));
describeBlobContract(
  'FileBlobStore with a prefix',
  async () => new FileBlobStore({ dir: path.join(root, `p${dirs++}`), prefix: '/utxo/blobs/' }),
);

describe('FileBlobStore layout and failures', () => {
  test('blobs live at <dir>/<prefix>/<txid>.tx|.outputs with the tag in a .dah sidecar; no temp files remain', async () => {
    const dir = path.join(root, 'layout');
    const store = new FileBlobStore({ dir, prefix: 'mainnet' });
    await store.put(TXID, 'tx', Buffer.from([1, 2]));
    await store.put(TXID, 'outputs', Buffer.from([3]));
    await store.setDeleteAtHeight(TXID, 'tx', 42);
    const files = readdirSync(path.join(dir, 'mainnet')).sort();
    expect(files).toEqual([`${TXID}.outputs`, `${TXID}.tx`, `${TXID}.tx.dah`]);
    expect(readFileSync(path.join(dir, 'mainnet', `${TXID}.tx`))).toEqual(Buffer.from([1, 2]));
    expect(readFileSync(path.join(dir, 'mainnet', `${TXID}.tx.dah`), 'utf8')).toBe('42');
    expect(store.pathOf(TXID, 'tx')).toBe(path.join(path.resolve(dir), 'mainnet', `${TXID}.tx`));

    await store.delete(TXID, 'tx');
    expect(readdirSync(path.join(dir, 'mainnet'))).toEqual([`${TXID}.outputs`]);
  });

  test('a relative dir is resolved against the working directory', () => {
    const store = new FileBlobStore({ dir: 'data/blobs' });
    expect(store.pathOf(TXID, 'tx')).toBe(path.resolve('data/blobs', `${TXID}.tx`));
  });

  test('an unreadable sidecar value reads as no tag', async () => {
    const dir = path.join(root, 'garbage');
    const store = new FileBlobStore({ dir });
    await store.put(TXID, 'tx', Buffer.from([1]));
    writeFileSync(path.join(dir, `${TXID}.tx.dah`), 'not a height');
    expect(await store.getDeleteAtHeight(TXID, 'tx')).toBeNull();
  });

  test('a blob path that is a directory is a BlobStoreError naming the operation and path, not a silent miss', async () => {
    const dir = path.join(root, 'dir-in-the-way');
    const store = new FileBlobStore({ dir });
    await store.ping();
    const blocked = path.join(dir, `${TXID}.tx`);
    mkdirSync(blocked);
    const err = await store.get(TXID, 'tx').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobStoreError);
    expect((err as BlobStoreError).message).toContain(`blob store get of ${blocked} failed`);
    await expect(store.put(TXID, 'tx', Buffer.from([1]))).rejects.toBeInstanceOf(BlobStoreError);
    expect(await store.exists(TXID, 'tx')).toBe(false);
    expect(readdirSync(dir)).toEqual([`${TXID}.tx`]);
  });

  test('ping fails with BlobStoreError when the directory cannot be created', async () => {
    const file = path.join(root, 'a-file');
    writeFileSync(file, 'x');
    const store = new FileBlobStore({ dir: path.join(file, 'sub') });
    await expect(store.ping()).rejects.toThrow(/blob store ping of .*a-file.sub failed/);
    await expect(store.put(TXID, 'tx', Buffer.from([1]))).rejects.toBeInstanceOf(BlobStoreError);
  });

  test('ping creates a missing directory', async () => {
    const dir = path.join(root, 'created-by-ping');
    await new FileBlobStore({ dir }).ping();
    expect(existsSync(dir)).toBe(true);
  });

  test('the constructor requires a directory', () => {
    expect(() => new FileBlobStore({ dir: '' })).toThrow(/options.dir/);
  });
});

describe('FileBlobStore durability', () => {
  afterEach(() => jest.restoreAllMocks());

  /** Records, for every fsync, the path the handle was opened with and whether `watch` existed at that moment. */
  function recordSyncs(watch: string): { path: string; watchExists: boolean }[] {
    const syncs: { path: string; watchExists: boolean }[] = [];
    const realOpen = fsPromises.open.bind(fsPromises);
    jest.spyOn(fsPromises, 'open').mockImplementation(async (...args: Parameters<typeof fsPromises.open>) => {
      const handle = await realOpen(...args);
      const realSync = handle.sync.bind(handle);
      handle.sync = async () => {
        syncs.push({ path: String(args[0]), watchExists: existsSync(watch) });
        return realSync();
      };
      return handle;
    });
    return syncs;
  }

  test('put fsyncs the directory after linking the blob, so an acknowledged blob survives a crash', async () => {
    const dir = path.join(root, 'durable-put');
    const store = new FileBlobStore({ dir });
    const file = store.pathOf(TXID, 'tx');
    const syncs = recordSyncs(file);
    await store.put(TXID, 'tx', Buffer.from([1, 2, 3]));
    expect(syncs).toContainEqual({ path: path.resolve(dir), watchExists: true });
  });

  test('setDeleteAtHeight fsyncs the directory after renaming the sidecar into place', async () => {
    const dir = path.join(root, 'durable-dah');
    const store = new FileBlobStore({ dir });
    await store.put(TXID, 'tx', Buffer.from([1]));
    const syncs = recordSyncs(store.pathOf(TXID, 'tx') + '.dah');
    await store.setDeleteAtHeight(TXID, 'tx', 7);
    expect(syncs).toContainEqual({ path: path.resolve(dir), watchExists: true });
  });
});

describe('FileBlobStore races', () => {
  afterEach(() => jest.restoreAllMocks());

  test('a blob that appears (EEXIST) and is deleted again before it is read is not an error: the link is retried', async () => {
    const dir = path.join(root, 'race-vanish');
    const store = new FileBlobStore({ dir });
    const file = store.pathOf(TXID, 'tx');
    const realLink = fsPromises.link.bind(fsPromises);
    let first = true;
    jest.spyOn(fsPromises, 'link').mockImplementation(async (from, to) => {
      if (first) {
        first = false;
        // another writer creates the blob, and a delete removes it before this put reads it
        writeFileSync(file, 'other');
        const err = await realLink(from, to).catch((e: unknown) => e);
        rmSync(file);
        throw err;
      }
      return realLink(from, to);
    });
    await expect(store.put(TXID, 'tx', Buffer.from([1, 2]))).resolves.toBeUndefined();
    expect(readFileSync(file)).toEqual(Buffer.from([1, 2]));
    expect(readdirSync(dir)).toEqual([`${TXID}.tx`]);
  });
});
