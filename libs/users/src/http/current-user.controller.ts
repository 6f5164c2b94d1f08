import {
  AdminOnly,
  Authenticated,
  BadParameter,
  Clock,
  CurrentActor,
  GitlabParams,
  LodeConfig,
  Page,
  pageParams,
  type Actor,
} from '@app/platform';
import { Controller, Get } from '@nestjs/common';
import { UserQueries } from '../queries/user.queries';
import { ReadUserScope } from './private-token.guard';
import { parseDateTime } from './request-files';
import { serializeUserAdmin, serializeUserPublic } from './user.serializer';
import { ActivitiesDto } from './users.dto';

@Controller('user')
@ReadUserScope()
export class CurrentUserController {
  constructor(
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
    private readonly clock: Clock,
  ) {}

  /** The caller (after sudo): administrators also see `is_admin`. */
  @Get()
  @Authenticated()
  async me(@CurrentActor() actor: Actor) {
    const user = await this.users.get(actor.id);
    const identities = (await this.users.identities([user.id])).get(user.id) ?? [];
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return user.isAdmin ? serializeUserAdmin(user, identities, urls) : serializeUserPublic(user, identities, urls);
  }

  /** Users active since `from` (default six months ago), least recently active first. */
  @Get('activities')
  @AdminOnly()
  async activities(@GitlabParams() q: ActivitiesDto) {
    let from: string;
    if (q.from !== undefined) {
      const d = parseDateTime(q.from);
      if (!d) throw new BadParameter('from is invalid');
      from = d.toISOString().slice(0, 10);
    } else {
      const d = this.clock.now();
      d.setUTCMonth(d.getUTCMonth() - 6);
      from = d.toISOString().slice(0, 10);
    }
    const page = pageParams(q);
    const { rows, total } = await this.users.activities(from, page);
    // `last_activity_at` is GitLab's deprecated duplicate of `last_activity_on`.
    return new Page(
      rows.map((r) => ({
        username: r.username,
        last_activity_on: r.last_activity_on,
        last_activity_at: r.last_activity_on,
      })),
      total,
      page,
    );
  }
}
