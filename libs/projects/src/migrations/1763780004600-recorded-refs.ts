import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The head of each ref's recorded chain: the `after` of the last recorded update of every ref a push
 * moved (forty zeros once deleted). A read model of `RepositoryPushed`, so a rebuild makes it again;
 * the push recorder reads it to find a ref update whose `before` is not where the recorded chain
 * ends, and records what moved the ref between (issue 23: every ref move is announced). Filled from
 * the pushes recorded so far.
 */
export class RecordedRefs1763780004600 implements MigrationInterface {
  name = 'RecordedRefs1763780004600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table recorded_refs (
        project_id int not null references projects (id) on delete cascade,
        ref text not null,
        sha text not null,
        primary key (project_id, ref)
      )`);
    await q.query(`
      insert into recorded_refs (project_id, ref, sha)
      select distinct on (u.project_id, u.ref) u.project_id, u.ref, u.after
        from (select (e.data->>'projectId')::int as project_id, x.u->>'ref' as ref, x.u->>'after' as after,
                     e.global_position, x.n
                from events e cross join lateral jsonb_array_elements(e.data->'updates') with ordinality as x(u, n)
               where e.type = 'RepositoryPushed') u
       where exists (select 1 from projects p where p.id = u.project_id)
       order by u.project_id, u.ref, u.global_position desc, u.n desc`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table recorded_refs`);
  }
}
