import { ACCESS } from '@app/groups';
import {
  AtLeastOneOf,
  BadParameter,
  CurrentActor,
  GitlabParams,
  LodeConfig,
  NotFound,
  Page,
  pageParams,
  PaginationDto,
  validateParams,
  type Actor,
} from '@app/platform';
import {
  AddReleaseLink,
  LINK_TYPES,
  ProjectQueries,
  ReleaseQueries,
  RemoveReleaseLink,
  UpdateReleaseLink,
  type LinkType,
  type ProjectRow,
  type ReleaseLinkValues,
} from '@app/projects';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString } from 'class-validator';
import { serializeReleaseLink } from './release.serializer';
import { filepathOf, releaseWriter } from './releases.controller';

export class CreateReleaseLinkDto {
  @IsDefined() @IsString() name: string;
  @IsDefined() @IsString() url: string;
  @IsOptional() @IsString() direct_asset_path?: string;
  /** Deprecated in 15.9 for `direct_asset_path`; Terraform still sends it. */
  @IsOptional() @IsString() filepath?: string;
  @IsOptional() @IsIn(LINK_TYPES) link_type?: LinkType;
}

export class UpdateReleaseLinkDto {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() url?: string;
  @IsOptional() @IsString() direct_asset_path?: string;
  @IsOptional() @IsString() filepath?: string;
  @IsOptional() @IsIn(LINK_TYPES) link_type?: LinkType;
  @AtLeastOneOf(['name', 'url']) readonly _name_or_url?: never;
}

/** `link_id` is Grape's `Integer`: anything else is 400 `link_id is invalid`. */
function linkIdOf(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 2 ** 31 - 1) throw new BadParameter('link_id is invalid');
  return Number(raw);
}

/**
 * GitLab's release links API (`lib/api/release/links.rb`, 11.7): the asset links of one release,
 * newest first. Reading needs the project (404 otherwise) and the release (`404 Not found`);
 * writing needs a developer (403), as `create_release` on the release.
 */
@Controller('projects/:id/releases/:tag_name/assets/links')
export class ReleaseLinksController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly releases: ReleaseQueries,
    private readonly commands: CommandBus,
    private readonly config: LodeConfig,
  ) {}

  @Get()
  async list(
    @Param('id') id: string,
    @Param('tag_name') tagName: string,
    @GitlabParams() q: PaginationDto,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.getVisible(id, actor);
    await this.requireRelease(project, tagName);
    const links = (await this.releases.linksOf(project.id, [tagName])).get(tagName) ?? [];
    const page = pageParams(q);
    return new Page(
      links.slice(page.offset, page.offset + page.perPage).map((l) => serializeReleaseLink(l, this.urls(project))),
      links.length,
      page,
    );
  }

  @Get(':link_id')
  async get(
    @Param('id') id: string,
    @Param('tag_name') tagName: string,
    @Param('link_id') linkId: string,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.getVisible(id, actor);
    await this.requireRelease(project, tagName);
    return this.one(project, tagName, linkIdOf(linkId));
  }

  /** `Releases::Links::CreateService`: 201 with the link; the model's refusals 400 `{"message": [...]}`. */
  @Post()
  @HttpCode(201)
  @ApiBody({ type: CreateReleaseLinkDto })
  async create(
    @Param('id') id: string,
    @Param('tag_name') tagName: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const visible = await this.projects.getVisible(id, actor);
    const q = await validateParams(CreateReleaseLinkDto, params);
    await this.requireRelease(visible, tagName);
    const project = releaseWriter(this.projects, visible, actor, ACCESS.developer);
    const link: ReleaseLinkValues = {
      name: q.name,
      url: q.url,
      filepath: filepathOf(q) ?? null,
      linkType: q.link_type ?? 'other',
    };
    const linkId = await this.commands.execute(new AddReleaseLink(project, tagName, link));
    return this.one(project, tagName, linkId);
  }

  /** `Releases::Links::UpdateService`: 200 with the link; at least `name` or `url`. */
  @Put(':link_id')
  @ApiBody({ type: UpdateReleaseLinkDto })
  async update(
    @Param('id') id: string,
    @Param('tag_name') tagName: string,
    @Param('link_id') rawLinkId: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const visible = await this.projects.getVisible(id, actor);
    const linkId = linkIdOf(rawLinkId);
    const q = await validateParams(UpdateReleaseLinkDto, params);
    await this.requireRelease(visible, tagName);
    const project = releaseWriter(this.projects, visible, actor, ACCESS.developer);
    const changes: Partial<ReleaseLinkValues> = {};
    if (q.name !== undefined) changes.name = q.name;
    if (q.url !== undefined) changes.url = q.url;
    const filepath = filepathOf(q);
    if (filepath !== undefined) changes.filepath = filepath;
    if (q.link_type !== undefined) changes.linkType = q.link_type;
    await this.commands.execute(new UpdateReleaseLink(project, tagName, linkId, changes));
    return this.one(project, tagName, linkId);
  }

  /** `Releases::Links::DestroyService`: 200 with the link as it was. */
  @Delete(':link_id')
  async remove(
    @Param('id') id: string,
    @Param('tag_name') tagName: string,
    @Param('link_id') rawLinkId: string,
    @CurrentActor() actor?: Actor,
  ) {
    const visible = await this.projects.getVisible(id, actor);
    const linkId = linkIdOf(rawLinkId);
    await this.requireRelease(visible, tagName);
    const project = releaseWriter(this.projects, visible, actor, ACCESS.developer);
    const answer = await this.one(project, tagName, linkId);
    await this.commands.execute(new RemoveReleaseLink(project, tagName, linkId));
    return answer;
  }

  private urls(project: ProjectRow) {
    return { project, externalUrl: this.config.externalUrl };
  }

  /** `user_project.releases.find_by_tag!`: `404 Not found` without the release. */
  private async requireRelease(project: ProjectRow, tagName: string): Promise<void> {
    if (!(await this.releases.find(project.id, tagName))) throw new NotFound();
  }

  private async one(project: ProjectRow, tagName: string, linkId: number) {
    const link = await this.releases.link(project.id, tagName, linkId);
    if (!link) throw new NotFound();
    return serializeReleaseLink(link, this.urls(project));
  }
}
