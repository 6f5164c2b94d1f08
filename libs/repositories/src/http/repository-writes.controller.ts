import { GitRepositories, projectRepo, type FileAction } from '@app/git';
import {
  BadParameter,
  BadRequestMessage,
  CurrentActor,
  Forbidden,
  Unauthorized,
  GitlabParams,
  ToBool,
  type Actor,
} from '@app/platform';
import { ProjectAccessPolicy, ProjectQueries, type ProjectRow } from '@app/projects';
import { Controller, Delete, HttpCode, Param, Post, Put } from '@nestjs/common';
import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, MinLength } from 'class-validator';
import {
  BranchWriteRefused,
  PUSH_INTO_BRANCH_REFUSED,
  RepositoryWrites,
  type ApiCommit,
} from '../writes/repository-writes';
import { serializeCommitDetail } from './commit.serializer';

const ACTIONS = ['create', 'update', 'move', 'delete', 'chmod'] as const;

export class CreateCommitDto {
  @IsDefined() @IsString() @MinLength(1) branch: string;
  @IsDefined() @IsString() commit_message: string;
  /** Checked by `readActions`, with Grape's words for each nested parameter. */
  @IsDefined() actions: unknown;
  @IsOptional() @IsString() start_branch?: string;
  @IsOptional() @IsString() author_email?: string;
  @IsOptional() @IsString() author_name?: string;
  @IsOptional() @ToBool() @IsBoolean() stats?: boolean;
}

export class FileWriteDto {
  @IsDefined() @IsString() @MinLength(1) branch: string;
  @IsDefined() @IsString() commit_message: string;
  @IsOptional() @IsString() start_branch?: string;
  @IsOptional() @IsString() author_email?: string;
  @IsOptional() @IsString() author_name?: string;
}

export class FileContentDto extends FileWriteDto {
  @IsDefined() @IsString() content: string;
  @IsOptional() @IsIn(['text', 'base64']) encoding?: 'text' | 'base64';
  @IsOptional() @IsString() last_commit_id?: string;
}

export class FileDeleteDto extends FileWriteDto {
  @IsOptional() @IsString() last_commit_id?: string;
}

/** Strict base64 (GitLab decodes with `Base64.decode64`, which skips junk; a client's typo should not become bytes). */
function decode(content: string, encoding: string | undefined, name: string): Buffer {
  if (encoding !== 'base64') return Buffer.from(content, 'utf8');
  const compact = content.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) throw new BadParameter(`${name} is invalid`);
  return Buffer.from(compact, 'base64');
}

/** The commits API's `actions[]`, validated as Grape words its nested parameters (`actions[0][file_path] is missing`). */
function readActions(raw: unknown): ApiCommit['actions'] {
  const list: unknown[] = Array.isArray(raw)
    ? raw
    : raw && typeof raw === 'object'
      ? Object.values(raw) // a form sends actions[0][action]=...: an object keyed by index
      : [];
  if (!Array.isArray(raw) && !(raw && typeof raw === 'object')) throw new BadParameter('actions is invalid');
  if (!list.length) throw new BadParameter('actions is empty');
  return list.map((item, i) => {
    const name = (key: string) => `actions[${i}][${key}]`;
    if (!item || typeof item !== 'object') throw new BadParameter(`actions[${i}] is invalid`);
    const a = item as Record<string, unknown>;
    const text = (key: string, required: boolean): string | undefined => {
      const v = a[key];
      if (v === undefined || v === null) {
        if (required) throw new BadParameter(`${name(key)} is missing`);
        return undefined;
      }
      if (typeof v !== 'string') throw new BadParameter(`${name(key)} is invalid`);
      return v;
    };
    const action = text('action', true)!;
    if (!(ACTIONS as readonly string[]).includes(action))
      throw new BadParameter(`${name('action')} does not have a valid value`);
    const filePath = text('file_path', true)!;
    const encoding = text('encoding', false);
    if (encoding !== undefined && encoding !== 'text' && encoding !== 'base64')
      throw new BadParameter(`${name('encoding')} does not have a valid value`);
    const content = text('content', action === 'update');
    let executable: boolean | undefined;
    if (action === 'chmod') {
      const v = a.execute_filemode;
      if (v === undefined || v === null) throw new BadParameter(`${name('execute_filemode')} is missing`);
      if (v === true || v === 'true') executable = true;
      else if (v === false || v === 'false') executable = false;
      else throw new BadParameter(`${name('execute_filemode')} is invalid`);
    }
    return {
      action: action as FileAction['action'],
      filePath,
      previousPath: text('previous_path', action === 'move'),
      content:
        content === undefined || action === 'delete' || action === 'chmod'
          ? undefined
          : decode(content, encoding, name('content')),
      executable,
      lastCommitId: text('last_commit_id', false),
    };
  });
}

/**
 * GitLab's repository writes (`lib/api/commits.rb` POST and `lib/api/files.rb` POST/PUT/DELETE): a
 * commit of file actions on a branch, built in process and moved onto the branch through the gate a
 * git push passes (protected branches, written down, recorded as `RepositoryPushed`).
 */
@Controller('projects/:id/repository')
export class RepositoryWritesController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly writes: RepositoryWrites,
  ) {}

  /**
   * GitLab's `authorize_push_to_branch!`: the project must be visible (404) and its code readable
   * (403), and the caller must push code (developers and up; never into an archived project). An
   * anonymous caller of a project it sees is 401 (`authenticate!`) before any branch rule is asked.
   */
  private async writable(id: string, actor: Actor | undefined): Promise<ProjectRow & { actor: Actor }> {
    const project = await this.projects.getVisible(id, actor);
    ProjectAccessPolicy.requireDownloadCode(project, actor);
    if (!actor) throw new Unauthorized();
    if (!ProjectAccessPolicy.mayPushCode(project, actor)) throw new Forbidden(PUSH_INTO_BRANCH_REFUSED);
    return Object.assign(project, { actor });
  }

  /** `POST /projects/:id/repository/commits`: 201 with the new commit (GitLab's CommitDetail). */
  @Post('commits')
  async createCommit(@Param('id') id: string, @GitlabParams() q: CreateCommitDto, @CurrentActor() actor?: Actor) {
    const actions = readActions(q.actions);
    const project = await this.writable(id, actor);
    const sha = await this.writes
      .commit(project, project.actor, {
        branch: q.branch,
        startBranch: q.start_branch,
        message: q.commit_message,
        actions,
        authorName: q.author_name,
        authorEmail: q.author_email,
        staleMessage: (path) => `The file has changed since you started editing it: ${path}`,
      })
      .catch((err: unknown) => {
        // The commits API refuses a protected branch as `authorize_push_to_branch!` does: 403.
        if (err instanceof BranchWriteRefused) throw new Forbidden(PUSH_INTO_BRANCH_REFUSED);
        throw err;
      });
    const repo = projectRepo(project.id);
    const commit = (await this.git.resolveCommit(repo, sha))!;
    const stats = q.stats === false ? undefined : await this.git.commitStats(repo, sha);
    return serializeCommitDetail(commit, project.id, stats);
  }

  /** `POST .../files/:file_path`: 201 `{file_path, branch}`. */
  @Post('files/:file_path')
  async createFile(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileContentDto,
    @CurrentActor() actor?: Actor,
  ) {
    await this.fileCommit(id, actor, q, {
      action: 'create',
      filePath: path,
      content: decode(q.content, q.encoding, 'content'),
    });
    return { file_path: path, branch: q.branch };
  }

  /** `PUT .../files/:file_path`: 200 `{file_path, branch}`; a stale `last_commit_id` is GitLab's 400. */
  @Put('files/:file_path')
  async updateFile(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileContentDto,
    @CurrentActor() actor?: Actor,
  ) {
    await this.fileCommit(id, actor, q, {
      action: 'update',
      filePath: path,
      content: decode(q.content, q.encoding, 'content'),
      lastCommitId: q.last_commit_id,
    });
    return { file_path: path, branch: q.branch };
  }

  /** `DELETE .../files/:file_path`: 204. */
  @Delete('files/:file_path')
  @HttpCode(204)
  async deleteFile(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileDeleteDto,
    @CurrentActor() actor?: Actor,
  ): Promise<void> {
    await this.fileCommit(id, actor, q, { action: 'delete', filePath: path, lastCommitId: q.last_commit_id });
  }

  /**
   * The files API: `authorize! :push_code` (403), then `Files::*Service`, whose refusals (a protected
   * branch included) are 400 `{"message": ...}`.
   */
  private async fileCommit(
    id: string,
    actor: Actor | undefined,
    q: FileWriteDto,
    action: ApiCommit['actions'][number],
  ): Promise<void> {
    const project = await this.projects.getVisible(id, actor);
    // Anonymous: 401 before the branch (protected or not) is considered.
    if (!actor) throw new Unauthorized();
    if (!ProjectAccessPolicy.mayPushCode(project, actor)) throw new Forbidden();
    await this.writes
      .commit(project, actor, {
        branch: q.branch,
        startBranch: q.start_branch,
        message: q.commit_message,
        actions: [action],
        authorName: q.author_name,
        authorEmail: q.author_email,
        staleMessage: () => 'You are attempting to update a file that has changed since you started editing it.',
      })
      .catch((err: unknown) => {
        if (err instanceof BranchWriteRefused) throw new BadRequestMessage(PUSH_INTO_BRANCH_REFUSED);
        throw err;
      });
  }
}
