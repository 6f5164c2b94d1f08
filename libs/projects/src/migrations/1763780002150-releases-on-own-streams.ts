import { relocateEvents } from '@app/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Releases move off the project's stream. Every release event (`ProjectRelease*`, the asset links'
 * `ProjectReleaseLink*` too) goes to its release's stream, `release-<project>-<tag>`, the tag named
 * by the first 24 hex digits of its name's SHA-256, as releases/release-stream.ts names it, so a
 * project command no longer folds the project's whole release history. See docs/architecture.md,
 * "Streams that stay short".
 */
export class ReleasesOnOwnStreams1763780002150 implements MigrationInterface {
  name = 'ReleasesOnOwnStreams1763780002150';

  async up(q: QueryRunner): Promise<void> {
    await relocateEvents(
      q,
      `type like 'ProjectRelease%' and stream_id like 'project-%'`,
      `'release-' || (data->>'projectId') || '-'
         || left(encode(sha256(convert_to(data->>'tagName', 'UTF8')), 'hex'), 24)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await relocateEvents(
      q,
      `type like 'ProjectRelease%' and stream_id like 'release-%'`,
      `'project-' || (data->>'projectId')`,
    );
  }
}
