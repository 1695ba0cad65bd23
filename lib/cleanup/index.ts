export { CleanupService } from './cleanup-service';
export type { CleanupServiceOptions, CleanupSettings, CleanupShard, RunPassOptions } from './cleanup-service';
export type { CleanupReport, CleanupMetrics, KeptReason } from './report';
