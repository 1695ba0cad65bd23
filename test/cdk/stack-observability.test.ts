/**
 * The default deployment (`npm run synth` without context), synthesised once, as stack.test.ts: its alarms and
 * dashboard, and cdk-nag AwsSolutions with no unacknowledged error.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { ROUTES } from '../../cdk/api';
import { ACKNOWLEDGEMENTS } from '../../cdk/nag';
import { SPENDS_REFUSED_ALARM_MINUTES } from '../../cdk/observability';
import { logicalId, resourcesOf, synthBeforeAll } from './helpers';

const s = synthBeforeAll();

describe('observability', () => {
  test('alarms on DLQ depth, API error rate, queue age and cleanup failures; a dashboard', () => {
    const t = s.template;
    const alarms = Object.values(resourcesOf(t, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties!);
    const byMetric = (name: string) => alarms.filter((a) => JSON.stringify(a).includes(`"${name}"`));
    expect(byMetric('ApproximateNumberOfMessagesVisible')).toHaveLength(2); // signal DLQ and cleanup DLQ
    for (const a of byMetric('ApproximateNumberOfMessagesVisible')) expect(a.Threshold).toBe(0);
    expect(byMetric('ApproximateAgeOfOldestMessage')).toHaveLength(1);
    expect(byMetric('5XXError')).toHaveLength(1);
    expect(byMetric('Errors')).toHaveLength(1);
    // spends refused by the guard in each of SPENDS_REFUSED_ALARM_MINUTES minutes (the total, under `service`)
    expect(byMetric('SpendsRefused')).toHaveLength(1);
    expect(byMetric('SpendsRefused')[0]).toMatchObject({
      Namespace: 'BsvUtxoStore',
      Statistic: 'Sum',
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: SPENDS_REFUSED_ALARM_MINUTES,
      TreatMissingData: 'notBreaching',
      Dimensions: [{ Name: 'service', Value: 'bsv-utxo-store' }],
      AlarmDescription: expect.stringMatching(/docs\/runbook\.md/) as unknown,
    });
    expect(SPENDS_REFUSED_ALARM_MINUTES).toBeGreaterThanOrEqual(2);
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(
      Object.values(resourcesOf(t, 'AWS::CloudWatch::Dashboard'))[0].Properties!.DashboardBody,
    );
    for (const needle of [
      'CleanupDeleted',
      'p99',
      'ApproximateAgeOfOldestMessage',
      'aerospike_node_stats_cluster_size',
    ])
      expect(body).toContain(needle);
    // the dashboard's widgets: tokens in the body (Fn::Join parts) become <{'Ref':'Id'}> inside their strings
    const joined = (
      Object.values(resourcesOf(t, 'AWS::CloudWatch::Dashboard'))[0].Properties!.DashboardBody as {
        'Fn::Join': [string, unknown[]];
      }
    )['Fn::Join'][1]
      .map((part) => (typeof part === 'string' ? part : `<${JSON.stringify(part).replace(/"/g, "'")}>`))
      .join('');
    const widgets = (
      JSON.parse(joined) as { widgets: { properties: { title: string; metrics: unknown[][] } }[] }
    ).widgets.map((w) => w.properties);
    const widget = (title: RegExp) => {
      const found = widgets.filter((w) => title.test(w.title));
      expect([title.source, found.length]).toEqual([title.source, 1]);
      return found[0].metrics.map((m) => JSON.stringify(m));
    };
    const token = (ref: unknown) => `<${JSON.stringify(ref).replace(/"/g, "'")}>`;
    const route = (metric: string, method: string, path: string) =>
      JSON.stringify([
        'AWS/ApiGateway',
        metric,
        'ApiName',
        'bsv-utxo-store-dev',
        'Method',
        method,
        'Resource',
        path,
      ]).slice(0, -1) + ',"Stage","dev",';
    // requests and errors (5xx and 4xx) by route: one metric per route
    const requests = widget(/^Requests by route/);
    const errors = widget(/^Errors by route/);
    for (const r of ROUTES) {
      expect(requests.some((m) => m.startsWith(route('Count', r.method, r.path)))).toBe(true);
      for (const metric of ['5XXError', '4XXError'])
        expect(errors.some((m) => m.startsWith(route(metric, r.method, r.path)))).toBe(true);
    }
    // spend latency p50 and p99
    const latency = widget(/^Spend latency/);
    for (const stat of ['p50', 'p99'])
      expect(
        latency.some((m) => m.startsWith(route('Latency', 'POST', '/v1/spends')) && m.includes(`"stat":"${stat}"`)),
      ).toBe(true);
    // signal queue depth and age; both DLQs' depth
    const queueName = (prefix: string) =>
      token({ 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', prefix), 'QueueName'] });
    const depth = widget(/^Signal queue depth/);
    for (const metric of ['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage'])
      expect(depth.some((m) => m.includes(`"${metric}","QueueName","${queueName('StorageSignalQueue')}"`))).toBe(true);
    const dlqs = widget(/^DLQ depth/);
    for (const prefix of ['StorageSignalDlq', 'TriggersCleanupDlq'])
      expect(
        dlqs.some((m) => m.includes(`"ApproximateNumberOfMessagesVisible","QueueName","${queueName(prefix)}"`)),
      ).toBe(true);
    // cleanup deleted and kept per pass
    const cleanup = widget(/^Cleanup per pass/);
    expect(cleanup.some((m) => m.includes('"BsvUtxoStore","CleanupDeleted","service","bsv-utxo-store"'))).toBe(true);
    // kept: the metrics are CleanupKept_<reason> (lib/cleanup/report.ts), so the search must match the metric name
    // partially (unquoted term; a quoted MetricName="..." is an exact match and would find nothing)
    const keptSearch = cleanup.find((m) => m.includes('SEARCH('));
    expect(keptSearch).toMatch(/SEARCH\('\{BsvUtxoStore,service\} service=\\"bsv-utxo-store\\" MetricName=Kept'/);
    // the Aerospike cluster's own metrics (exporter -> CloudWatch agent): size, connections, device use, stop-writes
    const size = widget(/^Aerospike: cluster size/);
    expect(
      size.some((m) =>
        m.includes('"BsvUtxoStore/Aerospike","aerospike_node_stats_cluster_size","cluster_name","bsv-utxo-store-dev"'),
      ),
    ).toBe(true);
    expect(size.some((m) => m.includes('"aerospike_node_stats_client_connections"'))).toBe(true);
    const use = widget(/^Aerospike utxo: device and index use/);
    for (const metric of ['aerospike_namespace_data_used_pct', 'aerospike_namespace_stop_writes'])
      expect(use.some((m) => m.includes(`"${metric}","cluster_name","bsv-utxo-store-dev","ns","utxo"`))).toBe(true);
    widget(/^Aerospike utxo: migrations remaining/);
    // spends refused by the acknowledgement guard: one series per reason the functions emitted (a search on the
    // `reason` dimension: lib/http/observability.ts emitSpendRefused), the total on the right
    const refused = widget(/^Spends refused by the acknowledgement guard/);
    expect(refused.find((m) => m.includes('SEARCH('))).toMatch(
      /SEARCH\('\{BsvUtxoStore,service,reason\} service=\\"bsv-utxo-store\\" MetricName=\\"SpendsRefused\\"', 'Sum', 60\)/,
    );
    expect(
      refused.some(
        (m) => m.includes('"BsvUtxoStore","SpendsRefused","service","bsv-utxo-store"') && m.includes('right'),
      ),
    ).toBe(true);
    // no alarm email configured: no topic
    t.resourceCountIs('AWS::SNS::Topic', 0);
  });
});

describe('cdk-nag AwsSolutions', () => {
  test('no unacknowledged error or warning; every acknowledgement has a written reason', () => {
    for (const stack of [s.cluster, s.policy, s.stack]) {
      const report = new AwsSolutionsChecks(s.app).validateScope(stack);
      const findings = report.violations.map(
        (v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.resourceLogicalId).join(', ')}`,
      );
      expect([stack.stackName, findings]).toEqual([stack.stackName, []]);
      expect(report.success).toBe(true);
      const acks = [...ACKNOWLEDGEMENTS.entries()].filter(
        ([p]) => p.startsWith(`${stack.node.path}/`) || p === stack.node.path,
      );
      expect(acks.length).toBeGreaterThan(0);
      for (const [, list] of acks) for (const a of list) expect(a.reason.length).toBeGreaterThan(40);
    }
  });
});
