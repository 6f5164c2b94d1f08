/** Whole-installation operations the command line runs: backup and restore. */
export { backup, describeBackup, type BackupOptions, type BackupSummary } from './backup';
export { restore, describeRestore, RestoreRefused, type RestoreOptions, type RestoreSummary } from './restore';
export { BACKUP_FORMAT, type OperationProgress, type ProgressListener } from './archive-layout';
