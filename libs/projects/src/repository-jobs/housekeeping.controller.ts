import { Authenticated, CurrentActor, type Actor } from '@app/platform';
import { Controller, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { RequestHousekeeping } from './request-housekeeping.command';

/** `POST /projects/:id/housekeeping`: the request is recorded; `git gc` runs in a job. */
@Controller('projects/:id')
export class HousekeepingController {
  constructor(private readonly commands: CommandBus) {}

  /** 201; 409 while one is pending for the project. */
  @Post('housekeeping')
  @Authenticated()
  async housekeeping(@Param('id') id: string, @CurrentActor() actor: Actor) {
    await this.commands.execute(new RequestHousekeeping(id, actor));
    return true;
  }
}
