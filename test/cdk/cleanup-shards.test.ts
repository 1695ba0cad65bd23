/**
 * cleanupShards = n > 1 (docs/cleanup.md, "Shards"): the schedule invokes the cleanup function n times per tick, one
 * rule per shard whose target's constant input names the shard, each target with the DLQ and the retry policy.
 */
import { logicalId, resourcesOf, synth } from './helpers';

test('3 shards: three rules at the same rate, inputs {cleanupShard: i, cleanupShards: 3}, DLQ and retry on each', () => {
  const { template: t } = synth({ cleanupShards: '3', reservedConcurrency: 'cleanup:3' });
  const rules = Object.entries(resourcesOf(t, 'AWS::Events::Rule')).filter(([, r]) => r.Properties!.ScheduleExpression);
  expect(rules).toHaveLength(3);
  const cleanup = { 'Fn::GetAtt': [logicalId(t, 'AWS::Lambda::Function', 'FunctionsCleanup'), 'Arn'] };
  const dlq = { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', 'TriggersCleanupDlq'), 'Arn'] };
  const inputs = rules.map(([, r]) => {
    const p = r.Properties!;
    expect(p.ScheduleExpression).toBe('rate(1 minute)');
    const targets = p.Targets as Record<string, unknown>[];
    expect(targets).toHaveLength(1);
    expect(targets[0]).toMatchObject({
      Arn: cleanup,
      DeadLetterConfig: { Arn: dlq },
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 300 },
    });
    return JSON.parse(targets[0].Input as string) as unknown;
  });
  expect(inputs).toEqual(expect.arrayContaining([0, 1, 2].map((i) => ({ cleanupShard: i, cleanupShards: 3 }))));
  // the first shard's rule keeps the single rule's logical id: going from 1 to n shards replaces no rule
  const idOfShard = (i: number) =>
    rules[inputs.findIndex((x) => (x as { cleanupShard: number }).cleanupShard === i)][0];
  expect(idOfShard(0)).toMatch(/^TriggersCleanupSchedule[0-9A-F]{8}$/);
  expect(idOfShard(1)).toMatch(/^TriggersCleanupSchedule1[0-9A-F]{8}$/);
  expect(idOfShard(2)).toMatch(/^TriggersCleanupSchedule2[0-9A-F]{8}$/);
  // EventBridge may invoke the function from every rule: in its resource policy (cdk/function-policy.ts), which
  // replaces the rules' AWS::Lambda::Permission
  const policy = Object.values(resourcesOf(t, 'AWS::Lambda::ResourcePolicy')).find((p) =>
    JSON.stringify(p.Properties!.ResourceArn).includes('"FunctionsCleanup'),
  )!;
  const events = (policy.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement.find(
    (st) => st.Sid === 'EventBridgeRules',
  )!;
  expect(events.Principal).toEqual({ Service: 'events.amazonaws.com' });
  expect((events.Condition as { ArnLike: { 'aws:SourceArn': unknown[] } }).ArnLike['aws:SourceArn']).toEqual(
    rules.map(([id]) => ({ 'Fn::GetAtt': [id, 'Arn'] })),
  );
  expect(Object.keys(resourcesOf(t, 'AWS::Lambda::Permission'))).toEqual([]);
  const fn = resourcesOf(t, 'AWS::Lambda::Function')[logicalId(t, 'AWS::Lambda::Function', 'FunctionsCleanup')];
  expect(fn.Properties!.ReservedConcurrentExecutions).toBe(3);
});
