/**
 * The ColdStart metric (lib/http/middleware.ts observe): the first request an execution environment serves publishes
 * ColdStart 1 under `service` and `function_name`; the requests after it do not.
 */
import './powertools-env';
import './on-demand-env';

import { handler as status } from '../../functions/status';
import { apiEvent, captureStdout, jsonLines, lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

useTestRuntime('fn-cold-start');

test('ColdStart once per execution environment, with the function name', async () => {
  const context = lambdaContext();
  const coldStarts = async () => {
    const { lines } = await captureStdout(() => status(apiEvent({ method: 'GET', resource: '/v1/health' }), context));
    return jsonLines(lines).filter((r) => r._aws !== undefined && r.ColdStart !== undefined);
  };
  const first = await coldStarts();
  expect(first).toHaveLength(1);
  expect(first[0]).toMatchObject({ ColdStart: 1, function_name: context.functionName, service: expect.any(String) });
  expect(await coldStarts()).toHaveLength(0);
  expect(await coldStarts()).toHaveLength(0);
});
