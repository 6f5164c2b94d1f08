import { AdminOnly, GitlabParams, intParam, Page, PaginationDto, pageParams } from '@app/platform';
import { ReadUserScope, UserQueries } from '@app/users';
import { Controller, Get, Param } from '@nestjs/common';
import { IsIn, IsOptional } from 'class-validator';
import { UserMembershipQueries } from './user-memberships.queries';

export class UserMembershipsDto extends PaginationDto {
  @IsOptional() @IsIn(['Project', 'Namespace']) type?: 'Project' | 'Namespace';
}

/**
 * GitLab 12.8's `GET /users/:user_id/memberships` (administrators only): the user's direct memberships
 * of groups (`source_type` `Namespace`) and projects (`Project`), `type` keeping one kind, paginated.
 */
@Controller('users/:user_id/memberships')
@ReadUserScope()
export class UserMembershipsController {
  constructor(
    private readonly memberships: UserMembershipQueries,
    private readonly users: UserQueries,
  ) {}

  @Get()
  @AdminOnly()
  async list(@Param('user_id', intParam('user_id')) userId: number, @GitlabParams() q: UserMembershipsDto) {
    await this.users.get(userId); // 404 User Not Found
    const page = pageParams(q);
    const type = q.type === 'Project' ? 'project' : q.type === 'Namespace' ? 'namespace' : undefined;
    const { rows, total } = await this.memberships.list(userId, type, page);
    return new Page(
      rows.map((m) => ({
        source_id: m.sourceId,
        source_name: m.sourceName,
        source_type: m.sourceType === 'project' ? 'Project' : 'Namespace',
        access_level: m.accessLevel,
      })),
      total,
      page,
    );
  }
}
