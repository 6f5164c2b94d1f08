import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { MaintenanceProcessor, MAINTENANCE_QUEUE } from './jobs/remove-user-files.job';
import { UsersModule } from './users.module';

/** The users context's BullMQ processors; loaded where the process runs workers. */
@Module({
  imports: [UsersModule, BullModule.registerQueue({ name: MAINTENANCE_QUEUE })],
  providers: [MaintenanceProcessor],
})
export class UsersWorkerModule {}
