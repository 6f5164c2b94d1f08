import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { GroupsModule } from './groups.module';
import { GROUPS_QUEUE, GroupsJobsProcessor } from './jobs/deleted-user.job';

/** The groups context's BullMQ processors; loaded where the process runs workers. */
@Module({ imports: [GroupsModule, BullModule.registerQueue({ name: GROUPS_QUEUE })], providers: [GroupsJobsProcessor] })
export class GroupsWorkerModule {}
