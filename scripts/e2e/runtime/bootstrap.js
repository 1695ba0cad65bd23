'use strict';
/**
 * The stand-in of the Lambda Node.js runtime inside the execution environment (what /var/runtime holds): it loads
 * the handler named by _HANDLER from LAMBDA_TASK_ROOT the way the runtime interface client does, then loops on the
 * Runtime API (AWS_LAMBDA_RUNTIME_API): next invocation, handler, response or error. Plain CommonJS with no
 * dependencies, run by the Node 22 binary; e2e/lambda-host.ts serves the Runtime API.
 *
 * Handler resolution (aws-lambda-nodejs-runtime-interface-client, UserFunction): "<path>/<module>.<export...>";
 * the module is tried extensionless (require), then `.js` (require, unless the nearest package.json says
 * "type": "module"), then `.js` as ESM when it does, `.mjs` (import), `.cjs` (require), and last a Node resolution of
 * the name from the task root; the export path may be nested (a.b.c).
 */
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

class RuntimeError extends Error {
  constructor(type, message) {
    super(message);
    this.name = type;
  }
}

function splitHandler(handlerString) {
  const base = path.basename(handlerString);
  const moduleRoot = handlerString.substring(0, handlerString.length - base.length);
  const m = /^([^.]*)\.(.*)$/.exec(base);
  if (!m) throw new RuntimeError('Runtime.MalformedHandlerName', `Bad handler ${handlerString}`);
  return { moduleRoot, module: m[1], exportPath: m[2] };
}

function typeModule(file) {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj)) {
      try {
        return JSON.parse(fs.readFileSync(pj, 'utf8')).type === 'module';
      } catch {
        return false;
      }
    }
    if (path.dirname(dir) === dir) return false;
  }
}

/** The file the runtime would load for `module` under appRoot/moduleRoot, and how (require or import). */
function locateModule(appRoot, moduleRoot, module) {
  const base = path.resolve(appRoot, moduleRoot, module);
  const isFile = (f) => fs.existsSync(f) && fs.statSync(f).isFile();
  if (isFile(base)) return { file: base, how: 'require' };
  const esm = typeModule(base);
  if (!esm && isFile(base + '.js')) return { file: base + '.js', how: 'require' };
  if (esm && isFile(base + '.js')) return { file: base + '.js', how: 'import' };
  if (isFile(base + '.mjs')) return { file: base + '.mjs', how: 'import' };
  if (isFile(base + '.cjs')) return { file: base + '.cjs', how: 'require' };
  try {
    return { file: require.resolve(module, { paths: [appRoot, path.resolve(appRoot, moduleRoot)] }), how: 'require' };
  } catch {
    throw new RuntimeError('Runtime.ImportModuleError', `Error: Cannot find module '${module}'`);
  }
}

async function loadHandler(appRoot, handlerString) {
  const { moduleRoot, module, exportPath } = splitHandler(handlerString);
  const { file, how } = locateModule(appRoot, moduleRoot, module);
  let loaded;
  try {
    loaded = how === 'require' ? require(file) : await import(pathToFileURL(file).href);
  } catch (err) {
    if (err instanceof SyntaxError) throw new RuntimeError('Runtime.UserCodeSyntaxError', String(err));
    if (err && err.code === 'MODULE_NOT_FOUND') throw new RuntimeError('Runtime.ImportModuleError', String(err));
    throw err;
  }
  const fn = exportPath.split('.').reduce((o, k) => (o == null ? undefined : o[k]), loaded);
  if (fn === undefined)
    throw new RuntimeError('Runtime.HandlerNotFound', `${handlerString} is undefined or not exported`);
  if (typeof fn !== 'function') throw new RuntimeError('Runtime.HandlerNotFound', `${handlerString} is not a function`);
  return { fn, file, how };
}

function errorBody(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  return { errorType: e.name || 'Error', errorMessage: e.message, trace: String(e.stack || '').split('\n') };
}

async function post(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  await res.text();
}

function contextOf(headers) {
  const env = process.env;
  const deadline = Number(headers.get('lambda-runtime-deadline-ms'));
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: headers.get('lambda-runtime-invoked-function-arn'),
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: headers.get('lambda-runtime-aws-request-id'),
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function invoke(fn, event, context) {
  return new Promise((resolve, reject) => {
    const callback = (err, data) => (err ? reject(err) : resolve(data));
    let returned;
    try {
      returned = fn(event, context, callback);
    } catch (err) {
      reject(err);
      return;
    }
    if (returned && typeof returned.then === 'function') returned.then(resolve, reject);
    else if (fn.length < 3) resolve(returned);
  });
}

async function main() {
  const api = `http://${process.env.AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime`;
  let handler;
  try {
    handler = await loadHandler(process.env.LAMBDA_TASK_ROOT, process.env._HANDLER);
  } catch (err) {
    await post(`${api}/init/error`, errorBody(err), { 'lambda-runtime-function-error-type': err.name });
    process.exit(1);
  }
  for (;;) {
    const next = await fetch(`${api}/invocation/next`);
    const event = JSON.parse(await next.text());
    const id = next.headers.get('lambda-runtime-aws-request-id');
    const trace = next.headers.get('lambda-runtime-trace-id');
    if (trace) process.env._X_AMZN_TRACE_ID = trace;
    else delete process.env._X_AMZN_TRACE_ID;
    try {
      const result = await invoke(handler.fn, event, contextOf(next.headers));
      await post(`${api}/invocation/${id}/response`, result === undefined ? null : result);
    } catch (err) {
      await post(`${api}/invocation/${id}/error`, errorBody(err), {
        'lambda-runtime-function-error-type': 'Runtime.Handled',
      });
    }
  }
}

module.exports = { splitHandler, locateModule, loadHandler };

if (require.main === module) {
  main().catch((err) => {
    console.error('runtime stand-in failed:', err);
    process.exit(1);
  });
}
