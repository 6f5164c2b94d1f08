import { Outbox, queuedJobId } from '@app/platform';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../support/test-app';

/** The outbox's ledger of finished jobs, as the processors report to it. */
describe('outbox ledger', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const row = async () => {
    const key = randomUUID();
    await t.db.query(
      `insert into outbox (queue, name, job_id, data, dispatch_key, dispatched_at)
       values ('maintenance', 'probe', $1, '{}', $2, clock_timestamp())`,
      [`ledger-${key}`, key],
    );
    const outcome = async () =>
      ((await t.db.query(`select outcome, last_error from outbox where dispatch_key = $1`, [key])) as object[])[0];
    return { id: queuedJobId(`ledger-${key}`, key), outcome };
  };

  it('keeps the first report of a job, so a duplicate failure does not undo a success', async () => {
    const job = await row();
    await t.app.get(Outbox).finished(job.id, 'completed');
    await t.app.get(Outbox).finished(job.id, 'failed', 'late duplicate');
    expect(await job.outcome()).toEqual({ outcome: 'completed', last_error: null });
  });

  it('records a success after a failure: an operator retried the failed job and it went through', async () => {
    const job = await row();
    await t.app.get(Outbox).finished(job.id, 'failed', 'boom');
    expect(await job.outcome()).toEqual({ outcome: 'failed', last_error: 'boom' });
    await t.app.get(Outbox).finished(job.id, 'completed');
    expect(await job.outcome()).toMatchObject({ outcome: 'completed' });
  });
});
