/**
 * One execution environment per function: the function's files laid out as Lambda lays them out (task root, layers
 * extracted in order into the /opt stand-in, the runtime stand-in e2e/runtime/bootstrap.js in the /var/runtime
 * stand-in), a Node 22 process started on the first invocation (a cold start) that loads the handler at init, and
 * the Runtime API it polls (next / response / error / init error), served here on a loopback port. An invocation
 * past the function's timeout kills the process, as Lambda does; the next invocation starts a new one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { lambdaEnvironment, nodeArguments, type DeployedFunction, type LocalLayout } from './functions';

export const BOOTSTRAP = path.join(__dirname, 'runtime', 'bootstrap.js');

export interface InvokeResult {
  /** the handler's answer, parsed */
  payload: unknown;
  /** set when the invocation failed: the runtime's error object (errorType, errorMessage, trace) */
  functionError?: { errorType: string; errorMessage: string; trace?: string[] };
  /** an init error, a timeout or a crash: the environment was lost */
  environmentError?: string;
  coldStart: boolean;
  durationMs: number;
}

interface Pending {
  id: string;
  event: unknown;
  /** the alias or version the invocation named (undefined: the unqualified function) */
  qualifier?: string;
  deadline: number;
  resolve(r: InvokeResult): void;
  started: number;
  coldStart: boolean;
}

export interface LambdaHostOptions {
  fn: DeployedFunction;
  node: string;
  /** directory for this function's layout and log */
  workDir: string;
  port: number;
  region: string;
  accountId: string;
  /** AWS_ENDPOINT_URL_* and the like */
  endpoints: Record<string, string>;
}

export class LambdaHost {
  readonly fn: DeployedFunction;
  readonly layout: LocalLayout;
  readonly logFile: string;
  private readonly server: http.Server;
  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private queue: Pending[] = [];
  private current: Pending | undefined;
  private waiting: http.ServerResponse | undefined;
  private timer: NodeJS.Timeout | undefined;
  private invocations = 0;

  constructor(private readonly o: LambdaHostOptions) {
    this.fn = o.fn;
    const root = o.workDir;
    this.layout = {
      taskRoot: path.join(root, 'var', 'task'),
      opt: path.join(root, 'opt'),
      runtimeDir: path.join(root, 'var', 'runtime'),
      lang: path.resolve(path.dirname(o.node), '..'),
    };
    this.logFile = path.join(root, 'function.log');
    cpSync(o.fn.codeDir, this.layout.taskRoot, { recursive: true });
    mkdirSync(this.layout.opt, { recursive: true });
    for (const layer of o.fn.layerDirs) cpSync(layer, this.layout.opt, { recursive: true, force: true });
    mkdirSync(this.layout.runtimeDir, { recursive: true });
    cpSync(BOOTSTRAP, path.join(this.layout.runtimeDir, 'bootstrap.js'));
    this.server = http.createServer((req, res) => this.route(req, res));
  }

  get runtimeApi(): string {
    return `127.0.0.1:${this.o.port}`;
  }

  get arn(): string {
    return `arn:aws:lambda:${this.o.region}:${this.o.accountId}:function:${this.fn.name}`;
  }

  environment(): Record<string, string> {
    return lambdaEnvironment(this.fn, {
      layout: this.layout,
      runtimeApi: this.runtimeApi,
      region: this.o.region,
      endpoints: this.o.endpoints,
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.o.port, '127.0.0.1', () => resolve());
    });
  }

  /**
   * Invokes the function (RequestResponse), by its unqualified ARN or with `qualifier` (an alias: API Gateway's
   * integration names one): the answer, or what went wrong.
   */
  invoke(event: unknown, qualifier?: string): Promise<InvokeResult> {
    return new Promise((resolve) => {
      const coldStart = this.child === undefined;
      this.queue.push({
        id: randomUUID(),
        event,
        qualifier,
        deadline: 0,
        resolve,
        started: performance.now(),
        coldStart,
      });
      if (!this.child) this.spawn();
      this.dispatch();
    });
  }

  /** The last lines of the function's log (for failure reports). */
  tail(lines = 40): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  async close(): Promise<void> {
    this.kill('closing');
    this.waiting?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.log?.end();
  }

  private spawn(): void {
    this.log ??= createWriteStream(this.logFile, { flags: 'a' });
    const child = spawn(
      this.o.node,
      [...nodeArguments(this.fn.memoryMb), path.join(this.layout.runtimeDir, 'bootstrap.js')],
      {
        cwd: this.layout.taskRoot,
        env: this.environment(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.log.write(`--- START environment of ${this.fn.name} (pid ${child.pid})\n`);
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.waiting = undefined;
      this.fail(`the function's process exited (${signal ?? `code ${code}`}):\n${this.tail()}`);
    });
    this.child = child;
  }

  private kill(reason: string): void {
    const child = this.child;
    this.child = undefined;
    this.waiting = undefined;
    if (child && child.exitCode === null) child.kill('SIGKILL');
    if (child) this.fail(reason);
  }

  /** Ends the current invocation and every queued one with an environment error. */
  private fail(reason: string): void {
    if (this.timer) clearTimeout(this.timer);
    const all = [...(this.current ? [this.current] : []), ...this.queue];
    this.current = undefined;
    this.queue = [];
    for (const p of all)
      p.resolve({
        payload: undefined,
        environmentError: reason,
        coldStart: p.coldStart,
        durationMs: performance.now() - p.started,
      });
  }

  private dispatch(): void {
    if (this.current || !this.waiting || this.queue.length === 0) return;
    const p = this.queue.shift()!;
    this.current = p;
    p.deadline = Date.now() + this.fn.timeoutSeconds * 1000;
    this.invocations++;
    const res = this.waiting;
    this.waiting = undefined;
    res.writeHead(200, {
      'content-type': 'application/json',
      'lambda-runtime-aws-request-id': p.id,
      'lambda-runtime-deadline-ms': String(p.deadline),
      // as Lambda reports it: the ARN the invocation named, with its qualifier
      'lambda-runtime-invoked-function-arn': p.qualifier !== undefined ? `${this.arn}:${p.qualifier}` : this.arn,
      'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Sampled=0`,
    });
    res.end(JSON.stringify(p.event));
    this.timer = setTimeout(
      () => this.kill(`Task timed out after ${this.fn.timeoutSeconds} seconds`),
      this.fn.timeoutSeconds * 1000,
    );
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '';
      const done = (status = 202) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end('{"status":"OK"}');
      };
      if (req.method === 'GET' && url === '/2018-06-01/runtime/invocation/next') {
        this.waiting = res;
        this.dispatch();
        return;
      }
      const m = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
      if (req.method === 'POST' && m) {
        const p = this.current;
        if (!p || p.id !== m[1]) {
          res.writeHead(400);
          res.end('{"errorType":"InvalidRequestID"}');
          return;
        }
        if (this.timer) clearTimeout(this.timer);
        this.current = undefined;
        const parsed = body === '' ? null : (JSON.parse(body) as unknown);
        const durationMs = performance.now() - p.started;
        if (m[2] === 'response') p.resolve({ payload: parsed, coldStart: p.coldStart, durationMs });
        else
          p.resolve({
            payload: parsed,
            functionError: parsed as InvokeResult['functionError'],
            coldStart: p.coldStart,
            durationMs,
          });
        done();
        return;
      }
      if (req.method === 'POST' && url === '/2018-06-01/runtime/init/error') {
        done();
        this.kill(`init error: ${body}\n${this.tail()}`);
        return;
      }
      res.writeHead(404);
      res.end();
    });
  }
}
