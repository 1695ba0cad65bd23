/**
 * Info commands over a persistent socket per node (the info protocol: an 8-byte header, version 2, type 1, 48-bit
 * length; body "<command>\n"; answer "<command>\t<value>\n"). The client's infoNode costs a connection and a worker
 * thread per call (measured 6.5 ms for two nodes on a busy machine, against 0.26 ms over kept sockets), which made
 * the spend acknowledgement guard cost more than the spend. Requests on one socket are answered in order; a timeout
 * or an error closes the socket and fails every request waiting on it (the next request opens a new one).
 * Only for clusters without TLS or authentication (the client's own info is used otherwise: cluster-state.ts).
 */
import { Socket } from 'net';

interface Pending {
  resolve: (answer: string) => void;
  reject: (err: Error) => void;
  /** performance.now() past which the answer is late */
  deadline: number;
  command: string;
}

/** The framed request of a command (8-byte header, body "<command>\n"). */
function frame(command: string): Buffer {
  const body = Buffer.from(`${command}\n`);
  const framed = Buffer.alloc(8 + body.length);
  framed.writeUInt8(2, 0);
  framed.writeUInt8(1, 1);
  framed.writeUIntBE(body.length, 2, 6);
  body.copy(framed, 8);
  return framed;
}

class InfoSocket {
  private socket?: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private readonly queue: Pending[] = [];
  /** the last command's frame (the guard sends one command again and again) */
  private framed?: { command: string; bytes: Buffer };
  /**
   * One timer per socket, not one per request: armed for the earliest deadline while requests wait, held (ref) only
   * then, and re-armed when it fires early; a request answered in time costs no timer call.
   */
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  request(command: string, timeoutMs: number): Promise<string> {
    const socket = this.open();
    if (this.framed?.command !== command) this.framed = { command, bytes: frame(command) };
    const bytes = this.framed.bytes;
    return new Promise((resolve, reject) => {
      const deadline = performance.now() + timeoutMs;
      this.queue.push({ resolve, reject, deadline, command });
      if (this.queue.length === 1) this.timer?.ref();
      if (deadline < this.timerAt) this.arm(deadline);
      socket.write(bytes);
    });
  }

  close(): void {
    this.fail(new InfoSocketError('closed', -1));
  }

  private arm(at: number): void {
    this.timerAt = at;
    const delay = Math.max(0, Math.ceil(at - performance.now()));
    if (this.timer) clearTimeout(this.timer);
    // the check runs in the check phase (setImmediate), after the poll phase: an answer that arrived while the event
    // loop was busy past the deadline (a process serving many requests) is read first, not counted as a timeout
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      setImmediate(() => this.expire());
    }, delay);
  }

  /** The timer fired: fail the socket if a waiting request is late, else wait for the earliest deadline. */
  private expire(): void {
    if (this.queue.length === 0) return;
    const now = performance.now();
    let earliest = Infinity;
    for (const p of this.queue) {
      if (p.deadline <= now) {
        this.fail(new InfoSocketError(`info ${p.command} on ${this.host}:${this.port}: timeout`, 9));
        return;
      }
      earliest = Math.min(earliest, p.deadline);
    }
    if (earliest < this.timerAt) this.arm(earliest);
  }

  private open(): Socket {
    if (this.socket) return this.socket;
    const socket = new Socket();
    socket.setNoDelay(true);
    socket.unref();
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      this.fail(new InfoSocketError(err.message, -10, err.code === 'ECONNREFUSED')),
    );
    socket.on('close', () => {
      if (this.socket === socket) this.fail(new InfoSocketError('connection closed', -10));
    });
    socket.connect(this.port, this.host);
    this.socket = socket;
    return socket;
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 8) {
      const length = this.buffer.readUIntBE(2, 6);
      if (this.buffer.length < 8 + length) return;
      const text = this.buffer.toString('utf8', 8, 8 + length);
      this.buffer = this.buffer.subarray(8 + length);
      const pending = this.queue.shift();
      if (!pending) continue;
      // nothing waits: the timer stays armed (it fires once, finds nothing, and stops) but no longer holds the process
      if (this.queue.length === 0) this.timer?.unref();
      pending.resolve(text);
    }
  }

  private fail(err: Error): void {
    const socket = this.socket;
    this.socket = undefined;
    this.buffer = Buffer.alloc(0);
    socket?.destroy();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const p of this.queue.splice(0)) p.reject(err);
  }
}

/** An error with the client's codes: 9 a timeout, negative a connection problem (cluster-state.ts isNoAnswer). */
export class InfoSocketError extends Error {
  constructor(
    message: string,
    readonly code: number,
    /** the host refused the connection: nothing listens on the port (cluster-state.ts: the node is down) */
    readonly refused = false,
  ) {
    super(message);
  }
}

/** Kept info sockets, one per node address (`host:port`, `[v6]:port`). */
export class InfoSockets {
  private readonly sockets = new Map<string, InfoSocket>();

  request(address: string, command: string, timeoutMs: number): Promise<string> {
    let s = this.sockets.get(address);
    if (!s) {
      const colon = address.lastIndexOf(':');
      const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
      s = new InfoSocket(host, Number(address.slice(colon + 1)));
      this.sockets.set(address, s);
    }
    return s.request(command, timeoutMs);
  }

  close(): void {
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}
