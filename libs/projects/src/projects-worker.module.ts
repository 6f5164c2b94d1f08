import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { GIT_QUEUE, GitJobsProcessor } from './repository-jobs/git-jobs';
import { ProjectsModule } from './projects.module';

/** The projects context's BullMQ processors; loaded where the process runs workers. */
@Module({ imports: [ProjectsModule, BullModule.registerQueue({ name: GIT_QUEUE })], providers: [GitJobsProcessor] })
export class ProjectsWorkerModule {}
