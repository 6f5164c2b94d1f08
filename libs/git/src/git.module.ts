import { LodeConfig } from '@app/platform';
import { Global, Module } from '@nestjs/common';
import { GitMetrics } from './git-metrics';
import { GitRepositories } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';
import { GitWorkBudget } from './work-budget';

/** Provides the GitRepositories port to every context (global: git sits on the floor beside the platform). */
@Global()
@Module({
  providers: [
    {
      provide: GitWorkBudget,
      useFactory: (config: LodeConfig) => new GitWorkBudget(config.gitBudget),
      inject: [LodeConfig],
    },
    { provide: GitRepositories, useClass: LocalGitRepositories },
    GitMetrics,
  ],
  exports: [GitRepositories],
})
export class GitModule {}
