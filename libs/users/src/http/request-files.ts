import type { Request } from 'express';
import type { UploadedFileRef } from '../avatars';

/** The multipart file sent under `field`, if any (the edge parses multipart bodies to temporary files). */
export function uploadedFile(req: Request, field: string): UploadedFileRef | undefined {
  const files = (req as Request & { files?: Express.Multer.File[] }).files;
  const f = Array.isArray(files) ? files.find((x) => x.fieldname === field && x.size > 0) : undefined;
  return f ? { path: f.path, originalname: f.originalname, size: f.size } : undefined;
}

/**
 * `avatar` on a PUT: an uploaded file; null for a blank value (`avatar=`, `"avatar": ""` or `null`),
 * which removes the avatar as GitLab does since 15.4 (10.x had no way to); undefined when not sent. An
 * empty file part changes nothing, as in GitLab.
 */
export function avatarParam(req: Request): UploadedFileRef | null | undefined {
  const file = uploadedFile(req, 'avatar');
  if (file) return file;
  const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
  const query = req.query as Record<string, unknown>;
  if ('avatar' in body) return body.avatar === '' || body.avatar === null ? null : undefined;
  return query.avatar === '' ? null : undefined;
}

/** ISO 8601 date or date-time, or undefined when it does not parse. */
export function parseDateTime(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) return undefined;
  const d = new Date(value.trim());
  return Number.isNaN(d.getTime()) ? undefined : d;
}
