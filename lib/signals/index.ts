export { SIGNALS, type Signal, type SignalHandler, type SignalName, type SignalQueue } from './port';
export { Reconciler, pageFullySpent, type ReconcilerOptions } from './reconciler';
export { InlineQueue, consoleLogger, type InlineQueueOptions, type SignalLogger } from './inline-queue';
export {
  SqsQueue,
  SignalSendError,
  SignalQueueUnavailableError,
  SQS_BATCH_SIZE,
  type FailedSignal,
  type SqsQueueOptions,
} from './sqs-queue';
export { parseSignalMessage, formatSignalMessage, signalMessageSchema } from './message';
export { createSignalQueue, type CreateSignalQueueOptions } from './create';
