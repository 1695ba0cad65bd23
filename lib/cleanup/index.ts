export { CleanupService } from './cleanup-service';
export type { CleanupServiceOptions, CleanupSettings, RunPassOptions } from './cleanup-service';
export type { CleanupReport, CleanupMetrics, KeptReason } from './report';
