import { GitRepositories, projectRepo, type Branch } from '@app/git';
import { ACCESS } from '@app/groups';
import { CurrentActor, GitlabParams, NotFound, ToBool, validateParams, type Actor } from '@app/platform';
import {
  ProtectRepositoryBranch,
  UnprotectRepositoryBranch,
  ProjectAccessPolicy,
  ProjectQueries,
  ProtectedBranchPolicy,
  ProtectedBranchQueries,
} from '@app/projects';
import { Controller, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { serializeBranch } from './branch.serializer';

export class ProtectRepositoryBranchDto {
  @IsOptional() @ToBool() @IsBoolean() developers_can_push?: boolean;
  @IsOptional() @ToBool() @IsBoolean() developers_can_merge?: boolean;
}

/**
 * The branches API's older way to protect one existing branch (GitLab 10.x `lib/api/branches.rb`,
 * kept beside the protected branches API): the rules live in the projects context, which decides;
 * this finds the branch and answers GitLab's Branch entity. In 10.x's order: an invisible project is
 * 404, `download_code` is checked before the parameters (403), `admin_project` after them (403 below
 * master), then a missing branch is `404 Branch Not Found`.
 */
@Controller('projects/:id/repository/branches/:branch')
export class BranchProtectionController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly rules: ProtectedBranchQueries,
    private readonly git: GitRepositories,
  ) {}

  /**
   * Creates the branch's rule (a flag not given means masters) or changes the given flags of the
   * existing one (GitLab's LegacyApiCreateService / LegacyApiUpdateService); a wildcard rule that
   * also matches is left alone.
   */
  @Put('protect')
  @ApiBody({ type: ProtectRepositoryBranchDto })
  async protect(
    @Param('id') id: string,
    @Param('branch') name: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const { project, branch, main, flags } = await this.branch(id, name, actor, ProtectRepositoryBranchDto, params);
    const change = { developersCanPush: flags.developers_can_push, developersCanMerge: flags.developers_can_merge };
    await this.commands.execute(new ProtectRepositoryBranch(project, branch.name, change));
    return this.answer(project.id, branch, main);
  }

  /** Removes the rule of exactly this name if there is one; the answer still shows a matching wildcard. */
  @Put('unprotect')
  async unprotect(@Param('id') id: string, @Param('branch') name: string, @CurrentActor() actor?: Actor) {
    const { project, branch, main } = await this.branch(id, name, actor, Object, {});
    await this.commands.execute(new UnprotectRepositoryBranch(project, branch.name));
    return this.answer(project.id, branch, main);
  }

  private async branch<T extends object>(
    id: string,
    name: string,
    actor: Actor | undefined,
    dto: new () => T,
    params: Record<string, unknown>,
  ) {
    const project = await this.projects.getVisible(id, actor);
    ProjectAccessPolicy.requireDownloadCode(project, actor);
    const parsed = await validateParams(dto, params);
    const maintained = this.projects.authorize(project, actor, ACCESS.maintainer);
    const repo = projectRepo(project.id);
    const main = project.default_branch ?? (await this.git.headBranch(repo));
    const found = (await this.git.branches(repo, main)).find((b) => b.name === name);
    if (!found) throw new NotFound('Branch');
    return { project: maintained, branch: found, main, flags: parsed };
  }

  private async answer(projectId: number, branch: Branch, main: string | undefined) {
    const rules = await this.rules.forProject(projectId);
    return serializeBranch(branch, main, ProtectedBranchPolicy.branchFlags(rules, branch.name));
  }
}
