/**
 * The SpendsRefused metric (lib/http/observability.ts emitSpendRefused, the hook every HTTP function gives the store):
 * EMF on stdout with the total under `service` (the SpendsRefused alarm's metric) and the same count under
 * `service` + `reason` (the dashboard's widget), and a warning log line with what the nodes answered.
 */
import './powertools-env';

import { emitSpendRefused } from '../../lib/http/observability';
import { ACK_REFUSAL_REASONS } from '../../lib/store';
import { captureStdout, jsonLines } from './events';

type Directive = { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] };

test('each refusal: the total and the count by reason, a warning naming what each node answered', async () => {
  for (const reason of ACK_REFUSAL_REASONS) {
    const { lines } = await captureStdout(async () =>
      emitSpendRefused({ reason, txs: 3, detail: 'node c is not a settled member (a=K2, b=K2, c=unstable)' }),
    );
    const records = jsonLines(lines);
    const emf = records.filter((r) => r._aws !== undefined && r.SpendsRefused !== undefined);
    expect(emf).toHaveLength(2);
    const [total, byReason] = emf;
    const directive = (r: Record<string, unknown>) =>
      (r._aws as { CloudWatchMetrics: Directive[] }).CloudWatchMetrics[0];
    expect(total).toMatchObject({ SpendsRefused: 3, service: expect.any(String) });
    expect(total.reason).toBeUndefined();
    expect(directive(total)).toMatchObject({
      Namespace: 'BsvUtxoStore',
      Dimensions: [['service']],
      Metrics: [{ Name: 'SpendsRefused', Unit: 'Count' }],
    });
    expect(byReason).toMatchObject({ SpendsRefused: 3, reason });
    expect(directive(byReason).Dimensions[0]).toEqual(expect.arrayContaining(['service', 'reason']));
    const warning = records.find((r) => r.message === 'spends refused by the acknowledgement guard');
    expect(warning).toMatchObject({ level: 'WARN', reason, txs: 3, detail: expect.stringMatching(/c=unstable/) });
  }
});
