/**
 * Every admin operation raises an alarm, however it was invoked (security review N9): AdminRoleAssumed sees only
 * callers that assume the admin role; a configured admin invoker calls the admin function directly. The function
 * writes every admin operation to its log ("admin operation", lib/http/middleware.ts): a metric filter on that log
 * group, an alarm on its first match, wired to the alarm topic.
 */
import { logicalId, synthBeforeAll } from './helpers';

const s = synthBeforeAll();
// with an alarm e-mail the cluster stack's topic carries every alarm
const mailed = synthBeforeAll({ alarmEmail: 'ops@example.com' });

test('a metric filter on the admin function log group matches its "admin operation" lines', () => {
  const adminLogs = logicalId(s.template, 'AWS::Logs::LogGroup', 'FunctionsAdminLogs');
  s.template.hasResourceProperties('AWS::Logs::MetricFilter', {
    LogGroupName: { Ref: adminLogs },
    FilterPattern: '{ $.message = "admin operation" }',
    MetricTransformations: [
      { MetricNamespace: 'bsv-utxo-store/audit', MetricName: 'AdminOperations-dev', MetricValue: '1' },
    ],
  });
});

test('the alarm fires on the first admin operation in 5 minutes and notifies the alarm topic', () => {
  const alarms = s.template.findResources('AWS::CloudWatch::Alarm', {
    Properties: { MetricName: 'AdminOperations-dev', Namespace: 'bsv-utxo-store/audit' },
  });
  const [alarm] = Object.values(alarms) as { Properties: Record<string, unknown> }[];
  expect(alarm.Properties).toMatchObject({
    Statistic: 'Sum',
    Period: 300,
    Threshold: 1,
    EvaluationPeriods: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
  });
  const [withTopic] = Object.values(
    mailed.template.findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: 'AdminOperations-dev' } }),
  ) as { Properties: Record<string, unknown> }[];
  expect(withTopic.Properties.AlarmActions).toHaveLength(1);
});
