import { EventStore, FieldErrors, LodeConfig, type Decider, type DomainEvent } from '@app/platform';
import { Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { EntityManager } from 'typeorm';

/** An uploaded file as the multipart parser leaves it on disk. */
export interface UploadedFileRef {
  path: string;
  originalname: string;
  size: number;
}

/** GitLab's AvatarUploader: raster images only, at most 200 KB. */
const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.gif', '.bmp', '.tiff', '.ico']);
export const MAX_AVATAR_BYTES = 200 * 1024;

/**
 * What a committed avatar change puts on disk: an upload, the file of another owner of the same kind
 * (a fork copies its source's avatar), or nothing (the avatar was removed).
 */
export type AvatarFile =
  { fileName: string; upload: UploadedFileRef } | { fileName: string; copyOf: number } | { fileName: null };

/** Folds nothing: `publish` only needs the stream's lock, which loading a stream takes. */
const STREAM_LOCK: Decider<null, DomainEvent> = { initial: () => null, evolve: () => null };

/** Whose avatar: GitLab keeps each kind under `uploads/-/system/<kind>/avatar/<id>/`. */
export type AvatarOwnerKind = 'user' | 'project';

/** Where GitLab serves an avatar, below the external URL: `/uploads/-/system/<kind>/avatar/<id>/<file>`. */
export function avatarPath(kind: AvatarOwnerKind, ownerId: number, fileName: string): string {
  return `/uploads/-/system/${kind}/avatar/${ownerId}/${encodeURIComponent(fileName)}`;
}

/**
 * Avatars of one kind of owner under `$LODE_DATA_DIR/uploads/-/system/<kind>/avatar/<id>/`, where
 * GitLab keeps them, and their URLs under `LODE_EXTERNAL_URL`.
 */
export abstract class OwnerAvatarStore {
  private readonly logger = new Logger('Avatars');

  protected constructor(
    private readonly config: LodeConfig,
    readonly kind: AvatarOwnerKind,
  ) {}

  /** The stored file name for an upload, or a field error in GitLab's words. */
  check(file: UploadedFileRef, errors: FieldErrors): string | undefined {
    const name = safeFileName(file.originalname);
    if (!IMAGE_EXTENSIONS.has(extname(name).toLowerCase())) {
      errors.add(
        'avatar',
        'You are not allowed to upload "' +
          extname(name).replace('.', '') +
          '" files, allowed types: png, jpg, jpeg, gif, bmp, tiff, ico',
      );
      return undefined;
    }
    if (file.size > MAX_AVATAR_BYTES) {
      errors.add('avatar', 'is too big (should be at most 200 KB)');
      return undefined;
    }
    return name;
  }

  dir(ownerId: number): string {
    return join(this.config.dataDir, 'uploads', '-', 'system', this.kind, 'avatar', String(ownerId));
  }

  url(ownerId: number, fileName: string): string {
    return this.config.externalUrl + avatarPath(this.kind, ownerId, fileName);
  }

  /**
   * Brings the owner's directory in line with an avatar change once the command that recorded it has
   * COMMITTED, so a command that fails leaves no file (its upload stays a temporary file, removed when
   * the response ends) and the old avatar in place. It runs under the owner's stream lock, and only
   * while `current` (the owner's avatar in the read model, read under that lock) still names this
   * file: a later change that committed in between keeps its own file. A failure here is logged, not
   * thrown: the change is recorded, and its avatar answers 404 until it is replaced.
   */
  async publish(
    store: EventStore,
    streamId: string,
    ownerId: number,
    file: AvatarFile,
    current: (db: EntityManager) => Promise<string | null | undefined>,
  ): Promise<void> {
    try {
      await store.transact(async (uow) => {
        await uow.load(streamId, STREAM_LOCK);
        if (((await current(uow.db)) ?? null) !== file.fileName) return;
        if (file.fileName === null) return this.remove(ownerId);
        await this.write(ownerId, file);
      });
    } catch (err) {
      this.logger.error(`could not store the avatar of ${this.kind} ${ownerId}: ${String(err)}`);
    }
  }

  /** The new file goes in beside the old one under a hidden name (never served), then replaces it. */
  private async write(ownerId: number, file: Exclude<AvatarFile, { fileName: null }>): Promise<void> {
    const dir = this.dir(ownerId);
    await mkdir(dir, { recursive: true });
    const incoming = join(dir, `.incoming-${randomBytes(8).toString('hex')}`);
    try {
      if ('upload' in file)
        await rename(file.upload.path, incoming).catch(() => copyFile(file.upload.path, incoming)); // another file system
      else await copyFile(join(this.dir(file.copyOf), file.fileName), incoming);
      for (const entry of await readdir(dir))
        if (join(dir, entry) !== incoming) await rm(join(dir, entry), { recursive: true, force: true });
      await rename(incoming, join(dir, file.fileName));
    } finally {
      await rm(incoming, { force: true });
    }
  }

  async remove(ownerId: number): Promise<void> {
    await rm(this.dir(ownerId), { recursive: true, force: true });
  }
}

/** Users' avatars: `uploads/-/system/user/avatar/<user id>/`. */
@Injectable()
export class AvatarStore extends OwnerAvatarStore {
  constructor(config: LodeConfig) {
    super(config, 'user');
  }
}

/** Projects' avatars: `uploads/-/system/project/avatar/<project id>/` (provided by the projects context). */
@Injectable()
export class ProjectAvatarStore extends OwnerAvatarStore {
  constructor(config: LodeConfig) {
    super(config, 'project');
  }
}

/** A file name with no path in it: `/`, `\`, `..` and control characters go. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/\.\.+/g, '.')
    .replace(/^\.+/, '')
    .trim();
  return cleaned.slice(-200) || 'file';
}
