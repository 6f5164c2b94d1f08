import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';
import { sendJson } from './json-response';

/** Nest's Express adapter, answering controller results as bare `application/json` (see sendJson). */
export class GitlabExpressAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (body instanceof StreamableFile || Buffer.isBuffer(body)) return super.reply(response, body, statusCode);
    if (statusCode) response.status(statusCode);
    if (response.statusCode === 204 || response.statusCode === 304 || body === undefined) {
      response.end();
      return;
    }
    sendJson(response, response.statusCode, body);
  }
}
