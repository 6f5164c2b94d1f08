import { ACCESS } from '@app/groups';
import {
  Authenticated,
  BadParameter,
  CurrentActor,
  LodeConfig,
  NotFound,
  PayloadTooLarge,
  type Actor,
} from '@app/platform';
import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ProjectQueries } from '../projects/project.queries';
import {
  cleanFileName,
  receiveUpload,
  servingHeaders,
  UploadMalformed,
  UploadMissing,
  UploadTooLarge,
  uploadMarkdown,
} from './upload-store';

/** Where a project's uploads live: by project id, so renames and transfers never move them. */
export const uploadsDir = (config: LodeConfig, projectId: number) =>
  join(config.dataDir, 'uploads', '@projects', String(projectId));

/**
 * `POST /projects/:id/uploads`: the multipart `file` streams to disk under a 32-hex secret, with
 * `LODE_MAX_UPLOAD_BYTES` enforced while it streams (the edge leaves this route's body unread).
 */
@Controller('projects/:id/uploads')
export class ProjectUploadsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly config: LodeConfig,
  ) {}

  @Post()
  @Authenticated()
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    required: true,
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
  })
  async upload(@Param('id') id: string, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const project = await this.projects.require(id, actor(req), ACCESS.guest);
    if (!req.is('multipart/form-data')) throw new BadParameter('file is missing');
    try {
      const stored = await receiveUpload(req, {
        dir: uploadsDir(this.config, project.id),
        maxBytes: this.config.maxUploadBytes,
      });
      res.status(201);
      return uploadMarkdown(stored.filename, `/uploads/${stored.secret}/${encodeURIComponent(stored.filename)}`);
    } catch (err) {
      // The rest of the body is left unread: close the connection rather than drain it.
      res.setHeader('Connection', 'close');
      if (err instanceof UploadTooLarge) throw new PayloadTooLarge();
      if (err instanceof UploadMissing) throw new BadParameter('file is missing');
      if (err instanceof UploadMalformed) throw new BadParameter(err.message);
      throw err;
    }
  }
}

function actor(req: Request): Actor | undefined {
  return (req as Request & { actor?: Actor }).actor;
}

/**
 * Serves uploads at `<web_url>/uploads/<secret>/<filename>`, to whoever may see the project: raster
 * images inline, everything else as an attachment, never sniffed, sandboxed.
 */
@Controller()
export class UploadsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly config: LodeConfig,
  ) {}

  @Get('*path/uploads/:secret/:filename')
  async serve(
    @Param('path') path: string | string[],
    @Param('secret') secret: string,
    @Param('filename') filename: string,
    @CurrentActor() caller: Actor | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const fullPath = Array.isArray(path) ? path.join('/') : path;
    if (!/^[0-9a-f]{32}$/.test(secret) || cleanFileName(filename) !== filename) throw new NotFound('File');
    const project = await this.projects.getVisible(fullPath, caller).catch(() => {
      throw new NotFound('File');
    });
    const file = join(uploadsDir(this.config, project.id), secret, filename);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) throw new NotFound('File');
    for (const [k, v] of Object.entries(servingHeaders(filename))) res.setHeader(k, v);
    res.setHeader('Content-Length', info.size);
    createReadStream(file).pipe(res);
  }
}
