import { GitRepositories, validRefName, type CommitInfo, type RepoRef } from '@app/git';
import { BadRequestMessage, Clock, CurrentActor, Forbidden, GitlabParams, NotFound, type Actor } from '@app/platform';
import {
  CreateTagRelease,
  ProjectAccessPolicy,
  ProjectQueries,
  ProtectedBranchPolicy,
  ProtectedBranchQueries,
  ReleaseQueries,
  RemoveTagRelease,
  ZERO_SHA,
  type ProjectRow,
} from '@app/projects';
import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { UserQueries } from '@app/users';
import { CommandBus } from '@nestjs/cqrs';
import { IsDefined, IsOptional, IsString } from 'class-validator';
import { BranchWriteRefused, RepositoryWrites } from '../writes/repository-writes';
import { serializeBranch } from './branch.serializer';
import { serializeCommit } from './commit.serializer';
import { readableRepository } from './readable-repository';
import { serializeTag } from './tag.serializer';

export class CreateBranchDto {
  @IsDefined() @IsString() branch: string;
  @IsDefined() @IsString() ref: string;
}

export class CreateTagDto {
  @IsDefined() @IsString() tag_name: string;
  @IsDefined() @IsString() ref: string;
  @IsOptional() @IsString() message?: string;
  @IsOptional() @IsString() release_description?: string;
}

export class CherryPickDto {
  @IsDefined() @IsString() branch: string;
}

/** How often a deletion that lost its ref to another writer looks again (the ref moved, or went). */
const DELETE_ATTEMPTS = 5;

/**
 * A ref that keeps `ref` from being made, as git keeps `a` and `a/b` from living side by side (a
 * file and a directory of the same name under `refs/`); undefined when none does.
 */
function refInTheWay(refs: Map<string, string>, ref: string): string | undefined {
  const parts = ref.split('/');
  for (let i = 3; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    if (refs.has(prefix)) return prefix;
  }
  for (const other of refs.keys()) if (other.startsWith(`${ref}/`)) return other;
  return undefined;
}

type Writable = { project: ProjectRow; repo: RepoRef; actor: Actor };

/**
 * GitLab's ref writes through the API (`lib/api/branches.rb`, `tags.rb`, `commits.rb` cherry_pick):
 * every ref moves through `RepositoryWrites.moveRef`, the gate and record a git push has (protected
 * branches with GitLab's web rules, one `RepositoryPushed` per change, hooks and statistics after).
 * The services' refusals, a push rule's words included (`PreReceiveError`), are 400 `{"message": ...}`.
 */
@Controller('projects/:id/repository')
export class RepositoryRefsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly writes: RepositoryWrites,
    private readonly protectedBranches: ProtectedBranchQueries,
    private readonly releases: ReleaseQueries,
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly clock: Clock,
  ) {}

  /**
   * The APIs' `before { authorize! :download_code }` (404 invisible, 403 unreadable), then
   * `authorize_push_project` (403 `{"message":"403 Forbidden"}` below developer, or archived).
   */
  private async writable(id: string, actor: Actor | undefined): Promise<Writable> {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    if (!actor || !ProjectAccessPolicy.mayPushCode(project, actor)) throw new Forbidden();
    return { project, repo, actor };
  }

  /** `moveRef` with a push rule's refusal as the services answer it: 400 with the rule's words. */
  private async move(w: Writable, ref: string, before: string, after: string): Promise<boolean> {
    return this.writes.moveRef(w.project, w.actor, ref, before, after).catch((err: unknown) => {
      if (err instanceof BranchWriteRefused) throw new BadRequestMessage(err.message);
      throw err;
    });
  }

  /**
   * `POST .../branches` (10.x `CreateBranchService`): 201 with the Branch entity. In GitLab's order:
   * 400 `Branch name is invalid` (`GitRefValidator`), `Branch already exists`, `Invalid reference
   * name` (a `ref` that names no commit: a branch, tag or sha). 10.x first writes a README onto
   * `master` of an empty repository; Lode answers `Invalid reference name` there, as there is no ref.
   */
  @Post('branches')
  async createBranch(@Param('id') id: string, @GitlabParams() q: CreateBranchDto, @CurrentActor() actor?: Actor) {
    const w = await this.writable(id, actor);
    if (!validRefName(q.branch)) throw new BadRequestMessage('Branch name is invalid');
    const ref = `refs/heads/${q.branch}`;
    await this.writes.exclusive(w.project, ref, () => this.makeBranch(w, ref, q));
    const main = w.project.default_branch ?? (await this.git.headBranch(w.repo));
    const [branches, rules] = await Promise.all([
      this.git.branches(w.repo, main),
      this.protectedBranches.forProject(w.project.id),
    ]);
    const branch = branches.find((b) => b.name === q.branch);
    if (!branch) throw new NotFound('Branch'); // deleted again by someone else already
    return serializeBranch(branch, main, ProtectedBranchPolicy.branchFlags(rules, branch.name));
  }

  /** The look and the move of a new branch, in this process one caller at a time (`exclusive`). */
  private async makeBranch(w: Writable, ref: string, q: CreateBranchDto): Promise<void> {
    const refs = await this.git.refs(w.repo);
    if (refs.has(ref)) throw new BadRequestMessage('Branch already exists');
    this.refuseInTheWay(refs, ref, 'branch', q.branch);
    const target = await this.git.resolveCommit(w.repo, q.ref);
    if (!target) throw new BadRequestMessage('Invalid reference name');
    // Another process made it between the look and the move.
    if (!(await this.move(w, ref, ZERO_SHA, target.id))) throw new BadRequestMessage('Branch already exists');
  }

  /**
   * `DELETE .../branches/:branch`: 204; 404 `Branch Not Found`. The default branch and, for those
   * below maintainer, a protected branch are refused by the push rules in 10.x's words (400, as
   * `DeleteBranchService` rescues the `PreReceiveError`); maintainers delete protected branches here.
   */
  @Delete('branches/:branch')
  @HttpCode(204)
  async deleteBranch(@Param('id') id: string, @Param('branch') name: string, @CurrentActor() actor?: Actor) {
    const w = await this.writable(id, actor);
    if (!(await this.deleteRef(w, `refs/heads/${name}`))) throw new NotFound('Branch');
  }

  /**
   * 10.x fails such a ref update with a 500; later GitLab words it as Gitaly does (`Failed to create
   * branch '...': ...`): a 400 naming the ref in the way.
   */
  private refuseInTheWay(refs: Map<string, string>, ref: string, kind: 'branch' | 'tag', name: string): void {
    const other = refInTheWay(refs, ref);
    if (other)
      throw new BadRequestMessage(
        `Failed to create ${kind} '${name}': ${other.replace(/^refs\/\w+\//, '')} is in the way`,
      );
  }

  /** Deletes `ref` wherever it points when asked; false when there is none (any more). */
  private deleteRef(w: Writable, ref: string): Promise<boolean> {
    return this.writes.exclusive(w.project, ref, () => this.deleteRefNow(w, ref));
  }

  private async deleteRefNow(w: Writable, ref: string): Promise<boolean> {
    for (let attempt = 1; attempt <= DELETE_ATTEMPTS; attempt++) {
      const sha = (await this.git.refs(w.repo)).get(ref);
      if (!sha) return false;
      if (await this.move(w, ref, sha, ZERO_SHA)) return true;
    }
    throw new BadRequestMessage('Failed to remove the ref: it kept moving; try again');
  }

  /**
   * `DELETE .../merged_branches` (10.x `DeleteMergedBranchesService`): branches the default branch
   * contains, except the default branch and protected ones, each deleted as `DeleteBranchService`
   * would (one push each). 10.x answers 202 `{"message":"202 Accepted"}` and runs it as a job; Lode
   * runs it before answering (a few ref deletions; the caller then sees them gone). 10.x checks
   * `push_code` inside the job, so a reporter got a 202 that did nothing; here that is the 403.
   */
  @Delete('merged_branches')
  @HttpCode(202)
  async deleteMergedBranches(@Param('id') id: string, @CurrentActor() actor?: Actor) {
    const w = await this.writable(id, actor);
    const main = w.project.default_branch ?? (await this.git.headBranch(w.repo));
    if (main) {
      const [branches, rules] = await Promise.all([
        this.git.branches(w.repo, main),
        this.protectedBranches.forProject(w.project.id),
      ]);
      for (const b of branches) {
        if (!b.merged || b.name === main || ProtectedBranchPolicy.matchingRules(rules, b.name).length) continue;
        // A branch the rules refuse now (the default branch moved, a rule appeared) is kept, as in 10.x.
        await this.deleteRef(w, `refs/heads/${b.name}`).catch((err: unknown) => {
          if (!(err instanceof BadRequestMessage)) throw err;
        });
      }
    }
    return { message: '202 Accepted' };
  }

  /**
   * `POST .../tags` (10.x `Tags::CreateService`): 201 with the Tag entity. A `message` makes an
   * annotated tag with the caller as tagger; `release_description` adds its release notes. 400
   * `Tag name invalid`, `Tag <name> already exists`, `Target <ref> is invalid`.
   */
  @Post('tags')
  async createTag(@Param('id') id: string, @GitlabParams() q: CreateTagDto, @CurrentActor() actor?: Actor) {
    const w = await this.writable(id, actor);
    if (!validRefName(q.tag_name)) throw new BadRequestMessage('Tag name invalid');
    const ref = `refs/tags/${q.tag_name}`;
    await this.writes.exclusive(w.project, ref, () => this.makeTag(w, ref, q));
    // 10.x's `CreateReleaseService` fails quietly on notes a tag deleted over git left behind: kept as they are.
    const left = q.release_description ? await this.releases.forTags(w.project.id, [q.tag_name]) : undefined;
    if (q.release_description && !left?.has(q.tag_name))
      await this.commands.execute(
        new CreateTagRelease(w.project.id, { tagName: q.tag_name, description: q.release_description }, actor),
      );
    const tag = await this.git.tag(w.repo, q.tag_name);
    if (!tag) throw new NotFound('Tag'); // deleted again by someone else already
    const releases = await this.releases.forTags(w.project.id, [tag.name]);
    return serializeTag(tag, releases.get(tag.name));
  }

  /** The look, the tag object and the move of a new tag, in this process one caller at a time. */
  private async makeTag(w: Writable, ref: string, q: CreateTagDto): Promise<void> {
    const refs = await this.git.refs(w.repo);
    if (refs.has(ref)) throw new BadRequestMessage(`Tag ${q.tag_name} already exists`);
    this.refuseInTheWay(refs, ref, 'tag', q.tag_name);
    const target = await this.git.resolveCommit(w.repo, q.ref);
    if (!target) throw new BadRequestMessage(`Target ${q.ref} is invalid`);
    // GitLab strips the message; an empty one makes a lightweight tag as none does.
    const message = q.message?.trim();
    let sha = target.id;
    if (message) {
      const user = await this.users.get(w.actor.id);
      const tagger = { name: user.name, email: user.email, when: this.clock.now() };
      sha = await this.git.writeTagObject(w.repo, { name: q.tag_name, target: target.id, message, tagger });
    }
    if (!(await this.move(w, ref, ZERO_SHA, sha))) throw new BadRequestMessage(`Tag ${q.tag_name} already exists`);
  }

  /** `DELETE .../tags/:tag_name` (10.x `Tags::DestroyService`): 204, its release notes gone too; 404 `Tag Not Found`. */
  @Delete('tags/:tag_name')
  @HttpCode(204)
  async deleteTag(@Param('id') id: string, @Param('tag_name') name: string, @CurrentActor() actor?: Actor) {
    const w = await this.writable(id, actor);
    if (!(await this.deleteRef(w, `refs/tags/${name}`))) throw new NotFound('Tag');
    await this.commands.execute(new RemoveTagRelease(w.project.id, name, w.actor));
  }

  /**
   * `POST .../commits/:sha/revert` (GitLab 11.5): 201 with the Commit entity of the branch's new tip;
   * 404 `Commit Not Found`, 404 `Branch Not Found`, 400 `REVERT_REFUSED` when it conflicts or was
   * reverted already, 400 with the rule's words when a push rule refuses it (as cherry-picks here).
   * Recorded as a push like every API write.
   */
  @Post('commits/:sha/revert')
  async revert(
    @Param('id') id: string,
    @Param('sha') sha: string,
    @GitlabParams() q: CherryPickDto,
    @CurrentActor() actor?: Actor,
  ) {
    return this.commitOntoBranch(id, sha, q.branch, actor, (w, commit) =>
      this.writes.revert(w.project, w.actor, commit, q.branch),
    );
  }

  /**
   * `POST .../commits/:sha/cherry_pick` (10.x): 201 with the Commit entity of the branch's new tip;
   * 404 `Commit Not Found` (a sha, branch or tag), 404 `Branch Not Found`, 400 when it does not apply
   * or a push rule refuses it.
   */
  @Post('commits/:sha/cherry_pick')
  async cherryPick(
    @Param('id') id: string,
    @Param('sha') sha: string,
    @GitlabParams() q: CherryPickDto,
    @CurrentActor() actor?: Actor,
  ) {
    return this.commitOntoBranch(id, sha, q.branch, actor, (w, commit) =>
      this.writes.cherryPick(w.project, w.actor, commit, q.branch),
    );
  }

  /**
   * Revert and cherry-pick alike: the commit (404 `Commit Not Found`) and the branch (404 `Branch Not
   * Found`) must exist, a refused write is a 400 with its words, and the answer is the new tip.
   */
  private async commitOntoBranch(
    id: string,
    sha: string,
    branch: string,
    actor: Actor | undefined,
    write: (w: Awaited<ReturnType<typeof this.writable>>, commit: CommitInfo) => Promise<string>,
  ) {
    const w = await this.writable(id, actor);
    const commit = await this.git.resolveCommit(w.repo, sha);
    if (!commit) throw new NotFound('Commit');
    if (!(await this.git.refs(w.repo)).has(`refs/heads/${branch}`)) throw new NotFound('Branch');
    const tip = await write(w, commit).catch((err: unknown) => {
      if (err instanceof BranchWriteRefused) throw new BadRequestMessage(err.message);
      throw err;
    });
    return serializeCommit((await this.git.resolveCommit(w.repo, tip))!);
  }
}
