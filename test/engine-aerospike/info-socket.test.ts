/**
 * Info commands over kept sockets (lib/engine/aerospike/info-socket.ts) against a fake node speaking the info
 * protocol: answers in order on one socket, a timeout (code 9) or a closed connection (negative code) fails what
 * waits and the next request connects again.
 */
import { spawn } from 'child_process';
import { createServer, type Server, type Socket } from 'net';
import { AddressInfo } from 'net';
import { InfoSockets } from '../../lib/engine/aerospike/info-socket';

function frame(text: string): Buffer {
  const body = Buffer.from(text);
  const header = Buffer.alloc(8);
  header.writeUInt8(2, 0);
  header.writeUInt8(1, 1);
  header.writeUIntBE(body.length, 2, 6);
  return Buffer.concat([header, body]);
}

/** A node answering `<command>\t<answer(command)>\n`; `answer` returning null stays silent. */
async function fakeNode(answer: (command: string) => string | null) {
  const connections: Socket[] = [];
  const server: Server = createServer((socket) => {
    connections.push(socket);
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 8 && buf.length >= 8 + buf.readUIntBE(2, 6)) {
        const length = buf.readUIntBE(2, 6);
        const command = buf
          .subarray(8, 8 + length)
          .toString()
          .trim();
        buf = buf.subarray(8 + length);
        const value = answer(command);
        // split the answer over two writes: the reader must reassemble it
        if (value !== null) {
          const f = frame(`${command}\t${value}\n`);
          socket.write(f.subarray(0, 5));
          socket.write(f.subarray(5));
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    address,
    connections,
    close: () => {
      for (const c of connections) c.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

test('answers in order over one kept socket', async () => {
  let n = 0;
  const node = await fakeNode((cmd) => `${cmd}-${++n}`);
  const sockets = new InfoSockets();
  const answers = await Promise.all([
    sockets.request(node.address, 'a', 1000),
    sockets.request(node.address, 'b', 1000),
    sockets.request(node.address, 'c', 1000),
  ]);
  expect(answers).toEqual(['a\ta-1\n', 'b\tb-2\n', 'c\tc-3\n']);
  await sockets.request(node.address, 'd', 1000);
  expect(node.connections).toHaveLength(1);
  sockets.close();
  await node.close();
});

test('a timeout fails what waits with code 9; the next request connects again', async () => {
  let silent = true;
  const node = await fakeNode(() => (silent ? null : 'K1'));
  const sockets = new InfoSockets();
  await expect(sockets.request(node.address, 'cluster-stable', 50)).rejects.toMatchObject({ code: 9 });
  silent = false;
  await expect(sockets.request(node.address, 'cluster-stable', 1000)).resolves.toBe('cluster-stable\tK1\n');
  expect(node.connections).toHaveLength(2);
  sockets.close();
  await node.close();
});

test('a node that is gone fails with a negative code (no answer, not an answer)', async () => {
  const node = await fakeNode(() => 'K1');
  const { address } = node;
  await node.close();
  const sockets = new InfoSockets();
  const err = await sockets.request(address, 'cluster-stable', 1000).catch((e: { code: number }) => e);
  expect((err as { code: number }).code).toBeLessThan(0);
  // nothing listens on its port any more: the connection is refused (the guard counts the node down, decision 0009)
  expect((err as unknown as { refused: boolean }).refused).toBe(true);
  sockets.close();
});

test('one timer per socket: a request answered in time leaves no timeout behind, the earliest deadline decides', async () => {
  const node = await fakeNode((cmd) => (cmd === 'slow' ? null : 'K1'));
  const sockets = new InfoSockets();
  // answered well within 30 ms; the socket's timer, armed for it, must not fail the socket when it fires later
  await expect(sockets.request(node.address, 'fast', 30)).resolves.toBe('fast\tK1\n');
  await new Promise((r) => setTimeout(r, 80));
  await expect(sockets.request(node.address, 'fast', 1000)).resolves.toBe('fast\tK1\n');
  expect(node.connections).toHaveLength(1);
  // a long deadline first, then a short one behind it: the short one times out on its own deadline
  const start = performance.now();
  const long = sockets.request(node.address, 'slow', 5000).catch((e: { code: number }) => e);
  const short = sockets.request(node.address, 'slow', 60).catch((e: { code: number }) => e);
  expect(await short).toMatchObject({ code: 9 });
  expect(await long).toMatchObject({ code: 9 }); // answers come in order: what waits behind a late answer fails too
  expect(performance.now() - start).toBeLessThan(2000);
  sockets.close();
  await node.close();
});

test('an answer that arrived while the event loop was busy past the deadline is read, not counted as a timeout', async () => {
  // the node in a process of its own: it answers while this one is blocked
  const node = spawn(process.execPath, [
    '-e',
    `require('net').createServer((s) => { let b = Buffer.alloc(0); s.on('data', (c) => { b = Buffer.concat([b, c]);
      while (b.length >= 8 && b.length >= 8 + b.readUIntBE(2, 6)) { const n = b.readUIntBE(2, 6);
        const cmd = b.subarray(8, 8 + n).toString().trim(); b = b.subarray(8 + n);
        const body = Buffer.from(cmd + '\\tK1\\n'); const h = Buffer.alloc(8); h.writeUInt8(2, 0); h.writeUInt8(1, 1);
        h.writeUIntBE(body.length, 2, 6); s.write(Buffer.concat([h, body])); } }); })
      .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ]);
  try {
    const port = await new Promise<string>((resolve) =>
      node.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
    );
    const sockets = new InfoSockets();
    const address = `127.0.0.1:${port}`;
    await expect(sockets.request(address, 'warm', 2000)).resolves.toMatch(/K1/);
    const answer = sockets.request(address, 'cluster-stable', 100);
    const until = Date.now() + 500; // busy past the 100 ms deadline; the node answers meanwhile
    while (Date.now() < until);
    await expect(answer).resolves.toMatch(/K1/);
    sockets.close();
  } finally {
    node.kill();
  }
});
