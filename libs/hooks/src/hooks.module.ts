import { GroupsModule } from '@app/groups';
import { ProjectionRegistry } from '@app/platform';
import { ProjectsModule } from '@app/projects';
import { Module, OnModuleInit } from '@nestjs/common';
import { ChangeProjectHookHandler } from './commands/hook.commands';
import { ProjectHooksController } from './http/project-hooks.controller';
import { ProjectHookProjection } from './projections/project-hook.projection';

/** Project hooks: their records now; their deliveries come with the repositories work. */
@Module({
  imports: [GroupsModule, ProjectsModule],
  providers: [ChangeProjectHookHandler, ProjectHookProjection],
})
export class HooksModule implements OnModuleInit {
  constructor(private readonly projections: ProjectionRegistry, private readonly projection: ProjectHookProjection) {}

  onModuleInit(): void {
    this.projections.register(this.projection);
  }
}

@Module({ imports: [HooksModule, ProjectsModule], controllers: [ProjectHooksController] })
export class HooksHttpModule {}
