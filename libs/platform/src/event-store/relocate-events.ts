import type { QueryRunner } from 'typeorm';

/**
 * Moves stored events to other streams, for a migration that gives what accrues with use (pushes,
 * delivery attempts) streams of its own. Every event keeps its global position, type, data,
 * metadata and time, so a rebuild, a backup and every reader by position see the same history; only
 * `stream_id` and `stream_version` change. Afterwards every stream that lost or gained events is
 * numbered again from 1 in global order (within a stream, appends are serialised, so the global
 * order is the stream's own order), which keeps versions contiguous.
 *
 * `where` selects the events (SQL over `events`), `toStream` is an SQL expression over the same row
 * naming its new stream. The unique (stream, version) constraint is dropped for the renumbering and
 * made again at the end, so PostgreSQL checks the result whole. Runs inside the migration's
 * transaction: all or nothing. This is the one sanctioned rewrite of the log; an ordinary command
 * never updates an event.
 */
export async function relocateEvents(q: QueryRunner, where: string, toStream: string): Promise<number> {
  await q.query(`
    create temporary table relocated as
      select global_position, stream_id as from_stream, (${toStream}) as to_stream
        from events where ${where}`);
  const [{ count }] = (await q.query(`select count(*)::int as count from relocated`)) as { count: number }[];
  if (count === 0) {
    await q.query(`drop table relocated`);
    return 0;
  }
  await q.query(`alter table events drop constraint events_stream_version_key`);
  await q.query(`
    update events e set stream_id = r.to_stream from relocated r where e.global_position = r.global_position`);
  await q.query(`
    with touched as (select from_stream as stream_id from relocated union select to_stream from relocated),
    numbered as (
      select e.global_position, row_number() over (partition by e.stream_id order by e.global_position) as version
        from events e join touched t on t.stream_id = e.stream_id)
    update events e set stream_version = n.version
      from numbered n where e.global_position = n.global_position and e.stream_version <> n.version`);
  await q.query(`alter table events add constraint events_stream_version_key unique (stream_id, stream_version)`);
  await q.query(`drop table relocated`);
  return count;
}
